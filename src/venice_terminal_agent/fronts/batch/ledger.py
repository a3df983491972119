"""The batch's one ledger, on the same database as DBOS (a SQLite file, or PostgreSQL).

Money is kept in whole nano-USD (1e-9), so sums are exact. Each batch has a row holding its
cap and `held`: what its settled requests and calls charged plus what the ones in flight
reserved. Before a model request or a tool call, `reserve` records its intent (the workflow,
the DBOS step, what it is) and adds its worst cost to `held` in one transaction, and only when
`held` stays within the cap: one conditional UPDATE, so workers on any number of processes or
hosts never pass it together. `settle` then sets what it charged (and keeps its result, so a
worker that dies after it and before DBOS's checkpoint loses nothing). A step that finds its
intent already recorded and unsettled was in flight when a worker died: it may have reached the
server, so it is not sent again, and its reservation is charged in full (`interrupted`).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import sqlalchemy as sa

from ...core.errors import ConfigError
from ...core.record import Record
from . import crash

NANO = 1_000_000_000

metadata = sa.MetaData()
runs = sa.Table(
    "venice_batch_runs",
    metadata,
    sa.Column("batch_id", sa.String(100), primary_key=True),
    sa.Column("cap_nusd", sa.BigInteger, nullable=True),
    sa.Column("held_nusd", sa.BigInteger, nullable=False, default=0),
    sa.Column("call_nusd", sa.BigInteger, nullable=False, default=0),  # each tool call's price
    sa.Column("questions", sa.Integer, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
)
questions = sa.Table(
    "venice_batch_questions",
    metadata,
    sa.Column("batch_id", sa.String(100), primary_key=True),
    sa.Column("qid", sa.String(200), primary_key=True),
    sa.Column("data", sa.Text, nullable=False),
)
intents = sa.Table(
    "venice_batch_intents",
    metadata,
    sa.Column("workflow_id", sa.String(320), primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),
    sa.Column("batch_id", sa.String(100), nullable=False, index=True),
    sa.Column("kind", sa.String(20), nullable=False),  # model | tool
    sa.Column("what", sa.Text, nullable=False),  # the model, or the tool
    sa.Column("reserved_nusd", sa.BigInteger, nullable=False),
    sa.Column("charged_nusd", sa.BigInteger, nullable=True),
    sa.Column("state", sa.String(20), nullable=False),  # sent | settled | interrupted
    sa.Column("result", sa.Text, nullable=True),
)
receipts = sa.Table(
    "venice_batch_receipts",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("batch_id", sa.String(100), nullable=False),
    sa.Column("qid", sa.String(200), nullable=False),
    sa.Column("exit", sa.String(40), nullable=False),
    sa.Column("cost_nusd", sa.BigInteger, nullable=False),
    sa.Column("receipt", sa.Text, nullable=False),
    sa.UniqueConstraint("batch_id", "qid"),
)


def nusd(usd: float) -> int:
    """USD as whole nano-USD, rounded up: a reservation is never smaller than the worst."""
    return math.ceil(usd * NANO - 1e-6)


def usd(nano: int) -> float:
    return nano / NANO


class Reservation(Record):
    """What `reserve` found: `new` (recorded and reserved: send it), `cap` (not recorded: the
    cap's `left` cannot pay it), `interrupted` (recorded before, never settled), `settled`
    (done before; `result` is what it gave)."""

    kind: str
    reserved: int = 0
    left: int = 0
    cap: int | None = None
    result: Any = None


class Totals(Record):
    cap: int | None
    held: int
    questions: int
    done: int
    exits: dict[str, int]
    charged: int  # what the receipts say


def engine_url(url: str) -> str:
    """The URL SQLAlchemy opens: PostgreSQL through psycopg 3 (what DBOS installs)."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


class Ledger:
    def __init__(self, url: str) -> None:
        self.sqlite = url.startswith("sqlite")
        options: dict[str, Any] = {}
        if self.sqlite:
            options = {"connect_args": {"timeout": 60, "check_same_thread": False}}
        self.engine = sa.create_engine(engine_url(url), **options)
        if self.sqlite:
            # Every transaction takes the write lock when it begins: two workers that read then
            # write never deadlock on the upgrade (SQLite's own advice), and the cap's check and
            # the reservation are one.
            @sa.event.listens_for(self.engine, "connect")
            def _connect(connection: Any, _record: Any) -> None:
                connection.isolation_level = None
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA busy_timeout=60000")

            @sa.event.listens_for(self.engine, "begin")
            def _begin(connection: Any) -> None:
                connection.exec_driver_sql("BEGIN IMMEDIATE")

    def create(self) -> None:
        """The ledger's tables, made once however many workers start together."""
        with self.engine.begin() as c:
            self.one_at_a_time(c)
            metadata.create_all(c)

    def one_at_a_time(self, c: Any) -> None:
        """This transaction waits for any other doing the same (PostgreSQL: an advisory lock till
        it ends; SQLite: every transaction already holds the write lock from its start)."""
        if not self.sqlite:
            c.exec_driver_sql("SELECT pg_advisory_xact_lock(3737001)")

    def close(self) -> None:
        self.engine.dispose()

    def open_batch(
        self, batch_id: str, cap: float | None, call_usd: float, source: str, lines: list[dict[str, Any]]
    ) -> None:
        """Record the batch, its cap, its price of a tool call and its questions, once; a batch
        of that name with other money settings or other questions is refused (`ConfigError`)."""
        cap_nusd = None if cap is None else nusd(cap)
        with self.engine.begin() as c:
            self.one_at_a_time(c)  # workers starting together: one records the batch, the others join it
            row = c.execute(sa.select(runs).where(runs.c.batch_id == batch_id)).first()
            if row is not None:
                if row.cap_nusd != cap_nusd or row.call_nusd != nusd(call_usd):
                    was = "no cap" if row.cap_nusd is None else f"--max-usd {usd(row.cap_nusd):g}"
                    raise ConfigError(
                        f"batch {batch_id} was started with {was} and --call-usd {usd(row.call_nusd):g}: "
                        "give the same, or name a new batch with --name"
                    )
                if row.questions != len(lines):
                    raise ConfigError(
                        f"batch {batch_id} has {row.questions} questions, this file {len(lines)}: "
                        "name a new batch with --name"
                    )
                return
            c.execute(
                sa.insert(runs).values(
                    batch_id=batch_id,
                    cap_nusd=cap_nusd,
                    held_nusd=0,
                    call_nusd=nusd(call_usd),
                    questions=len(lines),
                    source=source,
                    created_ms=int(time.time() * 1000),
                )
            )
            c.execute(
                sa.insert(questions),
                [{"batch_id": batch_id, "qid": line["id"], "data": json.dumps(line)} for line in lines],
            )

    def batch(self, batch_id: str) -> Any:
        with self.engine.connect() as c:
            return c.execute(sa.select(runs).where(runs.c.batch_id == batch_id)).first()

    def batches(self) -> list[Any]:
        with self.engine.connect() as c:
            return list(c.execute(sa.select(runs).order_by(runs.c.created_ms)))

    def questions(self, batch_id: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(questions.c.data).where(questions.c.batch_id == batch_id))
            lines = [json.loads(row.data) for row in rows]
        return sorted(lines, key=lambda line: line.get("line", 0))

    def reserve(
        self, batch_id: str, workflow_id: str, step: int, kind: str, what: str, worst: int
    ) -> Reservation:
        """Record the intent of step `step` of `workflow_id` with `worst` nano-USD reserved, in
        one transaction with the cap's check (see the module's docstring)."""
        with self.engine.begin() as c:
            key = (intents.c.workflow_id == workflow_id) & (intents.c.step == step)
            row = c.execute(sa.select(intents).where(key)).first()
            if row is not None:
                if row.state == "settled":
                    return Reservation("settled", row.reserved_nusd, result=json.loads(row.result))
                if row.state == "sent":  # in flight when its worker died: charged in full
                    c.execute(
                        sa.update(intents)
                        .where(key)
                        .values(state="interrupted", charged_nusd=row.reserved_nusd)
                    )
                return Reservation("interrupted", row.reserved_nusd)
            held = runs.c.held_nusd + worst
            done = c.execute(
                sa.update(runs)
                .where(runs.c.batch_id == batch_id)
                .where(sa.or_(runs.c.cap_nusd.is_(None), held <= runs.c.cap_nusd))
                .values(held_nusd=held)
            )
            if done.rowcount == 0:
                batch = c.execute(sa.select(runs).where(runs.c.batch_id == batch_id)).one()
                return Reservation(
                    "cap", worst, left=max(0, batch.cap_nusd - batch.held_nusd), cap=batch.cap_nusd
                )
            c.execute(
                sa.insert(intents).values(
                    workflow_id=workflow_id,
                    step=step,
                    batch_id=batch_id,
                    kind=kind,
                    what=what[:500],
                    reserved_nusd=worst,
                    state="sent",
                )
            )
            crash.point("reserve")  # recorded and reserved, not yet committed
        return Reservation("new", worst)

    def settle(self, batch_id: str, workflow_id: str, step: int, charged: int, result: Any) -> None:
        """What step `step` charged (`held` gives back the rest of its reservation), and its result."""
        with self.engine.begin() as c:
            key = (intents.c.workflow_id == workflow_id) & (intents.c.step == step)
            row = c.execute(sa.select(intents.c.reserved_nusd, intents.c.state).where(key)).one()
            if row.state != "sent":
                return
            c.execute(
                sa.update(runs)
                .where(runs.c.batch_id == batch_id)
                .values(held_nusd=runs.c.held_nusd - row.reserved_nusd + charged)
            )
            c.execute(
                sa.update(intents)
                .where(key)
                .values(state="settled", charged_nusd=charged, result=json.dumps(result))
            )

    def charged(self, workflow_id: str) -> int:
        """What one question's requests and calls charged (a reservation still out counts whole)."""
        return self._charged(intents.c.workflow_id == workflow_id)

    def _charged(self, which: Any) -> int:
        total = sa.func.sum(sa.func.coalesce(intents.c.charged_nusd, intents.c.reserved_nusd))
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sa.func.coalesce(total, 0)).where(which)).scalar_one())

    def finish(self, batch_id: str, qid: str, exit: str, cost: int, receipt: dict[str, Any]) -> None:
        """Keep a question's receipt, once (a workflow replayed after a crash finds it kept)."""
        with self.engine.begin() as c:
            self.one_at_a_time(c)
            exists = c.execute(
                sa.select(receipts.c.seq).where((receipts.c.batch_id == batch_id) & (receipts.c.qid == qid))
            ).first()
            if exists is None:
                c.execute(
                    sa.insert(receipts).values(
                        batch_id=batch_id,
                        qid=qid,
                        exit=exit,
                        cost_nusd=cost,
                        receipt=json.dumps(receipt, ensure_ascii=False, default=str),
                    )
                )

    def receipts_after(self, batch_id: str, seq: int) -> list[tuple[int, str]]:
        """The receipts kept after `seq`, in the order they finished: (seq, JSON line)."""
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(receipts.c.seq, receipts.c.receipt)
                .where((receipts.c.batch_id == batch_id) & (receipts.c.seq > seq))
                .order_by(receipts.c.seq)
            )
            return [(row.seq, row.receipt) for row in rows]

    def totals(self, batch_id: str) -> Totals:
        with self.engine.connect() as c:
            batch = c.execute(sa.select(runs).where(runs.c.batch_id == batch_id)).one()
            rows = c.execute(
                sa.select(
                    receipts.c.exit, sa.func.count(), sa.func.coalesce(sa.func.sum(receipts.c.cost_nusd), 0)
                )
                .where(receipts.c.batch_id == batch_id)
                .group_by(receipts.c.exit)
            ).all()
        exits = {row[0]: int(row[1]) for row in rows}
        return Totals(
            batch.cap_nusd,
            batch.held_nusd,
            batch.questions,
            sum(exits.values()),
            exits,
            sum(int(row[2]) for row in rows),
        )

    def intent_total(self, batch_id: str) -> int:
        """Everything the batch's intents charged or hold (the ledger's own total)."""
        return self._charged(intents.c.batch_id == batch_id)
