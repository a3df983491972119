"""The SQLite store: a real file, restarts, refusals of files that are not ours to touch."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest

from venice_terminal_agent import Answer, Bot, Call, Exit, run_loop
from venice_terminal_agent.store.schema import APPLICATION_ID, MIGRATIONS
from venice_terminal_agent.store.sqlite import Store, StoreError, record_agent_run, resolve_db_path


class Clock:
    def __init__(self) -> None:
        self.now = 50_000.0

    def __call__(self) -> float:
        return self.now


def tools() -> dict:
    return {"echo": lambda text: text}


async def test_a_new_bot_on_the_same_file_keeps_budget_last_message_and_history(tmp_path: Path) -> None:
    path, clock = tmp_path / "bot.db", Clock()
    async with Bot(tools(), db=path, clock=clock) as bot:
        for n in range(3):
            await bot.respond(f"echo text=m{n}", "alice")
        clock.now += 600
        await bot.respond("echo text=m3", "alice")

    async with Bot(tools(), db=path, clock=clock) as reborn:
        assert await reborn.calls_left("alice") == 1
        again = await reborn.respond("echo text=m3", "alice")
        assert again.repeated and again.text.startswith("m3\n")  # the last message survived
        await reborn.respond("echo text=m4", "alice")
        full = await reborn.respond("echo text=m5", "alice")
        assert "come back in 50 minutes" in full.text  # the ledger survived, with its times
        history = await reborn.history("alice")
    assert [h["text"] for h in history] == [f"echo text=m{n}" for n in (0, 1, 2, 3, 3, 4, 5)]
    assert [h["kind"] for h in history] == ["run"] * 4 + ["repeat", "run", "wait"]

    clock.now += 3600
    async with Bot(tools(), db=path, clock=clock) as later:
        assert await later.calls_left("alice") == 5


async def test_every_receipt_is_kept_with_its_question(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    async with Bot(tools(), db=path) as bot:
        await bot.respond("echo text=hi", "alice")
        await bot.respond("nope", "alice")
    async with Store(path) as store:
        runs = await store.runs(10)
    assert [(r.question, r.stopped_because, r.calls, r.chat, r.source) for r in runs] == [
        ("echo text=hi", "answered", 1, "alice", "bot"),
        ("nope", "tool_error", 0, "alice", "bot"),
    ]
    assert runs[0].receipt["steps"] == [
        {"tool": "echo", "arguments": {"text": "hi"}, "result": "hi", "error": None}
    ]
    assert runs[0].duration is not None and runs[0].duration >= 0


async def test_record_run_for_the_terminal_agent(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    receipt = await run_loop([Call("echo", {"text": "x"}), Answer("x it is")], tools())
    async with Store(path) as store:
        run_id = await store.record_run("say x", receipt, at=123.0)
        runs = await store.runs()
    assert runs[-1].id == run_id and runs[-1].source == "agent" and runs[-1].at == 123.0
    assert runs[-1].receipt["answer"] == "x it is" and runs[-1].stopped_because == Exit.ANSWERED


async def test_the_file_is_wal_and_marked_as_ours_with_the_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    async with Store(path):
        pass
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    finally:
        db.close()


async def test_a_corrupt_file_is_a_clear_error_and_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    garbage = b"this is not a database at all\n" * 200
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match=r"bot\.db is not a usable venice-agent store .*left untouched"):
        async with Bot(db=path) as bot:
            await bot.respond("help", "alice")
    assert path.read_bytes() == garbage


async def test_a_file_from_a_newer_version_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    async with Store(path):
        pass
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    db.close()
    before = path.read_bytes()
    newer = rf"schema version {len(MIGRATIONS) + 1}, newer than this venice-agent knows \({len(MIGRATIONS)}\)"
    with pytest.raises(StoreError, match=newer):
        await Bot(db=path).respond("help", "alice")
    assert path.read_bytes() == before


async def test_another_programs_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance REAL)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="SQLite file of another program"):
        await Store(path).open()
    db = sqlite3.connect(path)
    assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["accounts"]
    db.close()


async def test_opening_without_create_does_not_make_a_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    with pytest.raises(StoreError, match="no store at"):
        await Store(path, create=False).open()
    assert not path.exists()
    with pytest.raises(StoreError, match="does not exist"):
        await Store(tmp_path / "no-such-folder" / "x.db").open()


async def test_migrations_run_once_and_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bot.db"
    async with Store(path):
        pass
    applied: list[int] = []

    def second(db: sqlite3.Connection) -> None:
        applied.append(len(MIGRATIONS) + 1)
        db.execute("ALTER TABLE runs ADD COLUMN tag TEXT")

    monkeypatch.setattr("venice_terminal_agent.store.schema.MIGRATIONS", [*MIGRATIONS, second])
    async with Store(path):
        pass
    async with Store(path):
        pass
    assert applied == [len(MIGRATIONS) + 1]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1
    assert "tag" in [row[1] for row in db.execute("PRAGMA table_info(runs)")]
    db.close()


def test_db_path_flag_then_environment_then_user_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("VENICE_AGENT_DB", raising=False)
    assert resolve_db_path(None) == tmp_path / "data" / "venice-agent" / "venice-agent.db"
    monkeypatch.setenv("VENICE_AGENT_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path(str(tmp_path / "flag.db")) == tmp_path / "flag.db"


def test_importing_the_package_and_bot_module_lazily_keeps_sqlite_out() -> None:
    import subprocess
    import sys

    code = "import sys, venice_terminal_agent; print('sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_writes_queued_together_commit_together_and_a_failing_one_rolls_back_alone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bot.db"
    receipt = await run_loop([Answer("ok")], {})
    async with Store(path) as store:

        def broken(db: sqlite3.Connection) -> None:
            db.execute("INSERT INTO runs (at, source, question, stopped_because, calls, receipt)"
                       " VALUES (1, 'agent', 'half done', 'answered', 0, '{}')")  # fmt: skip
            raise ValueError("the job failed half way")

        results = await asyncio.gather(
            *(store.record_run(f"q{n}", receipt, at=float(n)) for n in range(20)),
            store._worker.write(broken),
            return_exceptions=True,
        )
        assert isinstance(results[-1], ValueError)
        runs = await store.runs(100)
    assert [run.question for run in runs] == [f"q{n}" for n in range(20)]  # the half-done insert is gone


async def test_the_terminal_agent_records_only_when_asked(tmp_path: Path) -> None:
    receipt = await run_loop([Answer("hi")], {})
    assert await record_agent_run(None, "hello?", receipt) is None
    assert await record_agent_run("", "hello?", receipt) is None
    assert os.listdir(tmp_path) == []
    path = tmp_path / "agent.db"
    assert await record_agent_run(path, "hello?", receipt) == 1
    async with Store(path, create=False) as store:
        assert [(r.question, r.source, r.stopped_because) for r in await store.runs()] == [
            ("hello?", "agent", "answered")
        ]


def test_several_processes_creating_one_new_store_at_once_all_open_it(tmp_path: Path) -> None:
    """Bots started together on a new file: whoever creates the schema, the others wait for it.

    Each opener is a real process (SQLite's file locks are per process), released together by a
    barrier; before creation and checking were one transaction, about 1 open in 5 failed."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    openers, rounds = 4, 8
    with context.Manager() as manager, context.Pool(openers) as pool:
        barrier = manager.Barrier(openers)  # reusable: it releases the openers of every round
        for number in range(rounds):
            path = str(tmp_path / f"new-{number}.db")
            failures = [f for f in pool.starmap(_open_at_once, [(path, barrier)] * openers) if f]
            assert failures == [], f"round {number}: {failures}"
            db = sqlite3.connect(path)
            assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            db.close()


def _open_at_once(path: str, barrier) -> str | None:
    from venice_terminal_agent.store.schema import connect

    barrier.wait(timeout=60)
    try:
        connect(path).close()
    except StoreError as error:
        return str(error)
    return None
