"""`venice-agent batch`: many questions on many workers under one money cap, durable on DBOS.

`questions.py` reads the JSONL file (no engine needed to refuse a bad one); `ledger.py` keeps
the one ledger of reservations and receipts on the batch's database; `durable.py` is the DBOS
workflow (one question) with its model requests and tool calls as steps, each behind an intent
recorded with its reservation; `run.py` is the command: enqueue, work, print receipts and
progress. Only this package imports `dbos` (and SQLAlchemy with it): a plain question never
loads them (tests/test_imports.py).
"""
