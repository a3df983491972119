"""Pieces of the batch tests and benchmark: the fake model and the paid server as processes,
workers of `venice-agent batch` killed at seeded points and restarted, and what the database
and the paid server say afterwards."""

from __future__ import annotations

import collections
import json
import os
import random
import selectors
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cli_support import COMMAND, PYTHON, TESTS, clean_env, fake_venice
from servers.net import free_port

PRICED = {"pricing": {"input": {"usd": 1}, "output": {"usd": 2}}, "maxCompletionTokens": 100}
POINTS = ("reserve", "stream", "tool", "between")


def script(delay: float = 0.0) -> dict[str, Any]:
    """Each question: one paid call named after the question, then an answer; both priced."""
    return {
        "loop": "question",
        "model_spec": PRICED,
        "replies": [
            {
                "tool_calls": [{"name": "charge", "arguments": {"call_id": "$question"}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10},
                "delay": delay,
            },
            {
                "text": "done $question",
                "usage": {"prompt_tokens": 120, "completion_tokens": 5},
                "delay": delay,
            },
        ],
    }


def questions(folder: Path, count: int) -> Path:
    path = folder / "questions.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"q{i}", "question": f"call-{i}"}) + "\n" for i in range(count))
    )
    return path


@contextmanager
def paid_server(folder: Path) -> Iterator[tuple[Path, Path]]:
    """The paid MCP server on a free loopback port; yields its MCP config and its call log."""
    port, log = free_port(), folder / "paid.log"
    process = subprocess.Popen(
        [PYTHON, str(TESTS / "servers" / "paid_ledger.py"), str(port), str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if "Uvicorn running" in line:
                break
        else:
            raise AssertionError("the paid server did not start")
        config = folder / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"paid": {"url": f"http://127.0.0.1:{port}/mcp"}}}))
        yield config, log
    finally:
        process.terminate()
        process.wait(timeout=20)
        assert process.stderr is not None
        process.stderr.close()


def calls(log: Path) -> collections.Counter[str]:
    """How many times each call id reached the paid server."""
    return collections.Counter(log.read_text().split()) if log.exists() else collections.Counter()


class Workers:
    """Worker processes of one batch, each restarted after it is killed, `kills` times in all
    at seeded crash points (fronts/batch/crash.py)."""

    def __init__(
        self, folder: Path, base_url: str, file: Path, config: Path, db: str, *args: str, seed: int = 0
    ) -> None:
        self.folder, self.file, self.config, self.db, self.args = folder, file, config, db, args
        self.env = clean_env(folder, base_url, VENICE_MODEL="fake-model", VENICE_AGENT_TRACEBACK="1")
        self.random = random.Random(seed)
        self.runs = 0
        self.kills: list[str] = []
        self.finished: list[tuple[int, Path, str]] = []  # status, its receipts file, its stderr

    def start(self, crash: str | None) -> tuple[subprocess.Popen[bytes], Path]:
        self.runs += 1
        out = self.folder / f"receipts-{self.runs}.jsonl"
        env = dict(self.env)
        if crash is not None:
            env["VENICE_AGENT_BATCH_CRASH"] = crash
        process = subprocess.Popen(
            [
                COMMAND,
                "batch",
                str(self.file),
                "--db",
                self.db,
                "--yes",
                "--no-files",
                "--no-progress",
                "--mcp-config",
                str(self.config),
                "-o",
                str(out),
                *self.args,
            ],
            env=env,
            cwd=self.folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return process, out

    def crash_point(self) -> str:
        point = self.random.choice(POINTS)
        return f"{point}:{self.random.randint(1, 5)}"  # soon: the batch must not end first

    def run(self, workers: int, kills: int, timeout: float = 600) -> None:
        """Run `workers` processes until the batch is done, killing `kills` of them on the way:
        a worker killed at its point is started again (with the next point, while any is left)."""
        planned = [self.crash_point() for _ in range(kills)]
        chosen = selectors.DefaultSelector()
        for _ in range(workers):
            crash = planned.pop(0) if planned else None
            self.watch(chosen, crash)
        deadline = time.monotonic() + timeout
        try:
            self.wait(chosen, planned, deadline)
        finally:  # a failed test leaves no worker behind
            for key in list(chosen.get_map().values()):
                process = key.data[0]
                process.kill()
                process.wait(timeout=60)
                process.stderr.close()

    def wait(self, chosen: selectors.BaseSelector, planned: list[str], deadline: float) -> None:
        while chosen.get_map():
            left = deadline - time.monotonic()
            assert left > 0, "the batch did not finish in time"
            for key, _ in chosen.select(left):
                process, out, crash, said = key.data
                chunk = os.read(key.fd, 65536)
                if chunk:
                    said.append(chunk)
                    continue
                chosen.unregister(key.fd)  # its stderr closed: it ended
                status = process.wait(timeout=60)
                assert process.stderr is not None
                process.stderr.close()
                stderr = b"".join(said).decode(errors="replace")
                if status == -signal.SIGKILL and crash is not None:
                    self.kills.append(crash)
                    self.watch(chosen, planned.pop(0) if planned else None)
                else:
                    self.finished.append((status, out, stderr))

    def watch(self, chosen: selectors.BaseSelector, crash: str | None) -> None:
        process, out = self.start(crash)
        assert process.stderr is not None
        chosen.register(process.stderr.fileno(), selectors.EVENT_READ, (process, out, crash, []))


class Ledger:
    """What the batch database says (SQLite, or PostgreSQL through psql)."""

    def __init__(self, db: str) -> None:
        self.db = db

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        if self.db.startswith("sqlite:///"):
            with sqlite3.connect(self.db.removeprefix("sqlite:///")) as connection:
                return list(connection.execute(sql))
        import psycopg

        with psycopg.connect(self.db) as connection:
            return list(connection.execute(sql))


@contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL cluster (Debian's, 15 here) of its own in a temporary folder, on a unix socket only (no TCP),
    run as the `postgres` user when we are root; yields its URL, stops and removes it after."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda path: int(path.parts[-3]))
    if not found:
        import pytest

        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            "PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)"
        )
    binaries = found[-1].parent
    folder = Path(tempfile.mkdtemp(prefix="venice-batch-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(folder, "postgres")
    data, socket_dir = folder / "data", folder
    try:
        subprocess.run(
            [*as_user, str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                *as_user,
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-w",
                "-l",
                str(folder / "log"),
                "-o",
                f"-c listen_addresses='' -c unix_socket_directories='{socket_dir}' -c fsync=off -c max_connections=200",
                "start",
            ],
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql://postgres@/postgres?host={socket_dir}"
        finally:
            subprocess.run(
                [*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                check=False,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = [
    "Ledger",
    "Workers",
    "calls",
    "fake_venice",
    "paid_server",
    "postgres",
    "questions",
    "script",
    "signal",
]
