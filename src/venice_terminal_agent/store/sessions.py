"""The terminal's saved conversations ("sessions"): one SQLite file in the user data folder.

Only used when the person asked (`config set sessions on`, VENICE_AGENT_SESSIONS=1, `--save`,
`/save`); nothing creates the file otherwise. The file is created 0600 (SQLite gives its WAL
the same mode), opened and migrated by `schema.connect` with a schema of its own (its own
`application_id`, so neither file is taken for the other), and used through the worker thread.

Each message is kept as the JSON of the dict that was sent or received, in order, one row
each, so what a resume sends is what was sent (`json.loads` keeps the keys' order). Every
string is masked with the secrets the run holds (`core.scrub.redact_all`) before it is written:
no key or token is ever on disk. A save names how many messages it builds on; when another
process has added to the session since, the save is refused (`Conflict`), never interleaved.

The export file's format (written and read) is `session_export.py`; `import_session` stores
what it read.
"""

from __future__ import annotations

import json
import os
import secrets as random
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.costs import tokens
from ..core.defaults import APP_NAME
from ..core.errors import StoreError
from ..core.receipt import read_json
from ..core.scrub import redact, redact_all
from .schema import Schema
from .worker import SqliteWorker

SESSIONS_FILE = "sessions.db"
SESSIONS_ID = 0x56454E53  # "VENS"
TITLE_CHARS = 80
ID_BYTES = 4  # 8 hex digits; a unique prefix is enough to name one


def default_sessions_path() -> Path:
    """Where sessions are kept (e.g. ~/.local/share/venice-agent/sessions.db)."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / SESSIONS_FILE


def _m1_sessions(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, folder TEXT NOT NULL, title TEXT NOT NULL,"
        " model TEXT, base_url TEXT, created REAL NOT NULL, updated REAL NOT NULL,"
        " questions INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,"
        " cost REAL NOT NULL DEFAULT 0, local_data INTEGER NOT NULL DEFAULT 0,"
        " forked_from TEXT, pages INTEGER NOT NULL DEFAULT 1, owner INTEGER)"
    )
    db.execute("CREATE INDEX sessions_by_folder ON sessions (folder, updated)")
    db.execute(
        "CREATE TABLE messages (session TEXT NOT NULL, n INTEGER NOT NULL, message TEXT NOT NULL,"
        " PRIMARY KEY (session, n)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE receipts (session TEXT NOT NULL, n INTEGER NOT NULL, at REAL NOT NULL,"
        " question TEXT NOT NULL, receipt TEXT NOT NULL, PRIMARY KEY (session, n)) WITHOUT ROWID"
    )


def _m2_cost_unknown(db: sqlite3.Connection) -> None:
    # `cost` is what is known; this says some of it is not (a server without prices). An older
    # file's sessions are marked from their receipts: one that said its cost was unknown.
    db.execute("ALTER TABLE sessions ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0")
    db.execute(
        "UPDATE sessions SET cost_unknown = 1 WHERE id IN (SELECT session FROM receipts"
        " WHERE json_type(receipt, '$.cost_usd') = 'null')"
    )


# Append only: never edit a migration that shipped, add the next one.
SESSIONS_SCHEMA = Schema(SESSIONS_ID, [_m1_sessions, _m2_cost_unknown], "choose another sessions file")


class Conflict(StoreError):
    """The session moved on in another process since this one read it."""


@dataclass(frozen=True)
class SessionInfo:
    id: str
    folder: str
    title: str
    model: str | None
    base_url: str | None
    created: float
    updated: float
    questions: int
    tokens: int
    cost: float  # USD, of the requests whose cost is known
    local_data: bool
    forked_from: str | None
    pages: int = 1  # the id the next page of a long result gets (those below are not kept)
    owner: int | None = None
    cost_unknown: bool = False  # some requests' cost is unknown: `cost` is a floor

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data.pop("owner")
        return data


@dataclass(frozen=True)
class Session:
    info: SessionInfo
    messages: list[dict[str, Any]]
    receipts: list[dict[str, Any]] = field(default_factory=list)  # {"at", "question", "receipt"}


@dataclass(frozen=True)
class Save:
    """One question's worth of a session, as `SessionStore.save` writes it."""

    messages: Sequence[dict[str, Any]]  # the whole conversation now
    base: int  # how many of them the file holds already (0: a new session)
    question: str | None = None
    receipt: dict[str, Any] | None = None  # None: nothing asked (`/save` of what is there)
    model: str | None = None
    base_url: str | None = None
    folder: str = ""
    cost: float = 0.0  # the session's whole spend, rolled-back questions included
    cost_unknown: bool = False  # some of it cannot be known (`SessionInfo.cost_unknown`)
    tokens: int = 0  # this question's
    local_data: bool = False
    pages: int = 1  # the pager's next id


_COLUMNS = (
    "id, folder, title, model, base_url, created, updated, questions, tokens, cost, local_data,"
    " forked_from, pages, owner, cost_unknown"
)

# A session that holds a question: those saved by versions that kept a rolled-back first
# question hold only the system prompt, and are never gone on from as `latest`.
_ASKED = (
    "EXISTS (SELECT 1 FROM messages WHERE messages.session = sessions.id"
    " AND json_extract(messages.message, '$.role') = 'user')"
)


def _info(row: Sequence[Any]) -> SessionInfo:
    return SessionInfo(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        bool(row[10]),
        row[11],
        row[12],
        row[13],
        bool(row[14]),
    )


def _stored(text: Any) -> Any:
    """A stored JSON value; a row that is not JSON (edited by hand) is None, which no check passes."""
    try:
        return read_json(text)
    except (TypeError, ValueError):
        return None


def new_id() -> str:
    return random.token_hex(ID_BYTES)


def title_of(question: str) -> str:
    line = " ".join(question.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def alive(pid: int | None) -> bool:
    """A process with this id runs on this machine (ours or another user's)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SessionStore:
    """The sessions file, used from async code; `secrets` are masked in everything written."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, secrets: Iterable[str] = ()) -> None:
        self.path = Path(path) if path is not None else default_sessions_path()
        self.secrets = [secret for secret in secrets if secret]
        self._worker = SqliteWorker(str(self.path), schema=SESSIONS_SCHEMA)

    async def __aenter__(self) -> SessionStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        if self._worker.running:
            return
        if not self.path.exists():  # created by us, readable by us alone, before SQLite opens it
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as error:  # a file where a folder should be, a read-only or full disk
                reason = error.strerror or error
                raise StoreError(f"cannot create the folder {self.path.parent}: {reason}") from None
            try:
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                pass  # another process made it meanwhile
            except OSError as error:
                raise StoreError(f"cannot create {self.path}: {error.strerror or error}") from None
        await self._worker.start()

    async def close(self) -> None:
        await self._worker.stop()

    def _dump(self, value: Any) -> str:
        return json.dumps(redact_all(value, self.secrets), ensure_ascii=False)

    # ---- reading ----

    async def find(self, ref: str, folder: str | None = None) -> SessionInfo:
        """The session `ref` names: `latest` (of `folder`, when given), an id or a unique prefix
        of one; `StoreError` when none or several match."""

        def work(db: sqlite3.Connection) -> list[Any]:
            if ref == "latest":  # never an empty one (an older version saved a rolled-back question)
                where, args = (" AND folder = ?", [folder]) if folder is not None else ("", [])
                sql = (
                    f"SELECT {_COLUMNS} FROM sessions WHERE {_ASKED}{where}"
                    " ORDER BY updated DESC, rowid DESC LIMIT 1"
                )
                return db.execute(sql, args).fetchall()
            return db.execute(
                f"SELECT {_COLUMNS} FROM sessions WHERE id = ? OR substr(id, 1, ?) = ? LIMIT 2",
                (ref, len(ref), ref),
            ).fetchall()

        rows = await self._worker.read(work)
        if not rows:
            if ref == "latest":
                where = f" for {folder}" if folder is not None else ""
                raise StoreError(
                    f"no saved session{where} yet (venice-agent sessions list --all shows them all)"
                )
            raise StoreError(f"no session {ref!r} (venice-agent sessions list --all shows them all)")
        if len(rows) > 1:
            raise StoreError(f"{ref!r} names more than one session: give more of its id")
        return _info(rows[0])

    async def load(self, session_id: str) -> Session:
        """The session, checked (`session_export.session_problem`) before anything shows, exports
        or resumes it: `StoreError` for one stored damaged (by hand, or by an older import)."""
        from .session_export import session_problem

        def work(db: sqlite3.Connection) -> Session | None:
            row = db.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                return None
            messages = [
                _stored(text)
                for (text,) in db.execute(
                    "SELECT message FROM messages WHERE session = ? ORDER BY n", (session_id,)
                )
            ]
            receipts = [
                {"at": at, "question": question, "receipt": _stored(receipt)}
                for at, question, receipt in db.execute(
                    "SELECT at, question, receipt FROM receipts WHERE session = ? ORDER BY n", (session_id,)
                )
            ]
            return Session(_info(row), messages, receipts)

        found = await self._worker.read(work)
        if found is None:
            raise StoreError(f"no session {session_id!r}")
        problem = session_problem(found.info.to_dict(), found.messages, found.receipts)
        if problem is not None:
            at, why = problem
            where = "its facts or receipts" if at < 0 else f"message {at + 1}"
            raise StoreError(
                f"session {session_id} is damaged in {where} ({why}); "
                f"it cannot be shown, exported or resumed: venice-agent sessions delete {session_id}"
            )
        return found

    async def listing(self, folder: str | None = None) -> list[SessionInfo]:
        """Sessions, the latest first; only `folder`'s when given."""

        def work(db: sqlite3.Connection) -> list[Any]:
            where, args = ("WHERE folder = ?", [folder]) if folder is not None else ("", [])
            return db.execute(
                f"SELECT {_COLUMNS} FROM sessions {where} ORDER BY updated DESC, rowid DESC", args
            ).fetchall()

        return [_info(row) for row in await self._worker.read(work)]

    # ---- writing ----

    async def save(self, session_id: str, save: Save, *, now: float | None = None) -> None:
        """Add what is new in `save.messages` (from `save.base` on) and the question's receipt;
        the session row is made by the first save. `Conflict` when the file holds more than
        `save.base` messages of it: another process went on meanwhile."""
        at = time.time() if now is None else now
        new = [self._dump(message) for message in save.messages[save.base :]]
        question = redact(save.question, self.secrets) if save.question is not None else None
        receipt = self._dump(save.receipt) if save.receipt is not None else None

        def work(db: sqlite3.Connection) -> None:
            held = db.execute("SELECT count(*) FROM messages WHERE session = ?", (session_id,)).fetchone()[0]
            if held != save.base:
                raise Conflict(f"session {session_id} changed in another terminal")
            exists = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if not exists:
                title = title_of(question or "") or "(untitled)"
                db.execute(
                    "INSERT INTO sessions (id, folder, title, model, base_url, created, updated, owner)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (session_id, save.folder, title, save.model, save.base_url, at, at, os.getpid()),
                )
            db.executemany(
                "INSERT INTO messages (session, n, message) VALUES (?, ?, ?)",
                [(session_id, save.base + number, text) for number, text in enumerate(new)],
            )
            asked = 0
            if receipt is not None and question is not None:
                count = db.execute(
                    "SELECT count(*) FROM receipts WHERE session = ?", (session_id,)
                ).fetchone()[0]
                db.execute(
                    "INSERT INTO receipts (session, n, at, question, receipt) VALUES (?, ?, ?, ?, ?)",
                    (session_id, count, at, question, receipt),
                )
                asked = 1
            db.execute(
                "UPDATE sessions SET updated = ?, model = coalesce(?, model), base_url = coalesce(?, base_url),"
                " questions = questions + ?, tokens = tokens + ?, cost = ?, cost_unknown = ?, local_data = ?, pages = ?"
                " WHERE id = ?",
                (
                    at,
                    save.model,
                    save.base_url,
                    asked,
                    save.tokens,
                    save.cost,
                    int(save.cost_unknown),
                    int(save.local_data),
                    save.pages,
                    session_id,
                ),
            )

        await self._worker.write(work)

    async def spent(self, session_id: str, cost: float, unknown: bool = False) -> None:
        """The session's whole spend (a rolled-back question spent money too; nothing else of it
        is kept); `unknown`: some of it cannot be known."""
        await self._worker.write(
            lambda db: db.execute(
                "UPDATE sessions SET cost = ?, cost_unknown = ? WHERE id = ?",
                (cost, int(unknown), session_id),
            )
        )

    async def claim(self, session_id: str) -> int | None:
        """Mark the session as open in this process; the other process's id when one that is
        still running holds it (nothing is changed then)."""
        me = os.getpid()

        def work(db: sqlite3.Connection) -> int | None:
            row = db.execute("SELECT owner FROM sessions WHERE id = ?", (session_id,)).fetchone()
            owner = row[0] if row else None
            if owner and owner != me and alive(owner):
                return int(owner)
            db.execute("UPDATE sessions SET owner = ? WHERE id = ?", (me, session_id))
            return None

        result: int | None = await self._worker.write(work)
        return result

    async def release(self, session_id: str) -> None:
        await self._worker.write(
            lambda db: db.execute(
                "UPDATE sessions SET owner = NULL WHERE id = ? AND owner = ?", (session_id, os.getpid())
            )
        )

    async def fork(
        self,
        session_id: str,
        *,
        folder: str | None = None,
        upto: tuple[int, int] | None = None,
    ) -> str:
        """A copy of the session under a new id, that goes its own way (`forked_from` says whence).
        `upto` (messages, receipts): a copy of the session as it was when it held that many of
        each, for a terminal whose session went on elsewhere meanwhile."""
        fork_id = new_id()
        at = time.time()
        messages, receipts = upto if upto is not None else (-1, -1)

        def work(db: sqlite3.Connection) -> None:
            if not db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise StoreError(f"no session {session_id!r}")
            db.execute(
                "INSERT INTO sessions (id, folder, title, model, base_url, created, updated, questions, tokens,"
                " cost, cost_unknown, local_data, pages, forked_from) SELECT ?, coalesce(?, folder), title,"
                " model, base_url, ?, ?, questions, tokens, cost, cost_unknown, local_data, pages, id"
                " FROM sessions WHERE id = ?",
                (fork_id, folder, at, at, session_id),
            )
            db.execute(  # a limit of -1 is none
                "INSERT INTO messages (session, n, message) SELECT ?, n, message FROM messages"
                " WHERE session = ? ORDER BY n LIMIT ?",
                (fork_id, session_id, messages),
            )
            db.execute(
                "INSERT INTO receipts (session, n, at, question, receipt)"
                " SELECT ?, n, at, question, receipt FROM receipts WHERE session = ? ORDER BY n LIMIT ?",
                (fork_id, session_id, receipts),
            )
            if upto is not None:  # its totals are those of the receipts it holds
                kept = [
                    json.loads(text)
                    for (text,) in db.execute("SELECT receipt FROM receipts WHERE session = ?", (fork_id,))
                ]
                db.execute(
                    "UPDATE sessions SET questions = ?, tokens = ? WHERE id = ?",
                    (len(kept), sum(tokens(item.get("usage") or {}) for item in kept), fork_id),
                )

        await self._worker.write(work)
        return fork_id

    async def retitle(self, session_id: str, title: str) -> None:
        text = redact(title_of(title), self.secrets) or ""
        await self._worker.write(
            lambda db: db.execute("UPDATE sessions SET title = ? WHERE id = ?", (text, session_id))
        )

    async def delete(self, session_ids: Iterable[str]) -> int:
        ids = list(session_ids)

        def work(db: sqlite3.Connection) -> int:
            for table, column in (("messages", "session"), ("receipts", "session"), ("sessions", "id")):
                db.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(each,) for each in ids])
            return len(ids)

        result: int = await self._worker.write(work)
        return result

    async def import_session(
        self, info: dict[str, Any], messages: Sequence[dict[str, Any]], receipts: Sequence[dict[str, Any]]
    ) -> str:
        """A session from an export (`session_export.parse_jsonl`), under a new id."""
        session_id = new_id()
        at = time.time()
        rows = [self._dump(message) for message in messages]
        kept = [
            (
                number,
                float(item.get("at") or at),
                redact(str(item.get("question") or ""), self.secrets) or "",
                self._dump(item.get("receipt") or {}),
            )
            for number, item in enumerate(receipts)
        ]

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO sessions (id, folder, title, model, base_url, created, updated, questions, tokens, cost,"
                " cost_unknown, local_data, forked_from, pages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    str(info.get("folder") or ""),
                    redact(title_of(str(info.get("title") or "(imported)")), self.secrets),
                    info.get("model"),
                    info.get("base_url"),
                    float(info.get("created") or at),
                    at,
                    len(kept),
                    int(info.get("tokens") or 0),
                    float(info.get("cost") or 0.0),
                    int(bool(info.get("cost_unknown")) or any(_unknown_cost(item) for item in receipts)),
                    int(bool(info.get("local_data"))),
                    info.get("id"),
                    int(info.get("pages") or 1),
                ),
            )
            db.executemany(
                "INSERT INTO messages (session, n, message) VALUES (?, ?, ?)",
                [(session_id, number, text) for number, text in enumerate(rows)],
            )
            db.executemany(
                "INSERT INTO receipts (session, n, at, question, receipt) VALUES (?, ?, ?, ?, ?)",
                [(session_id, *row) for row in kept],
            )

        await self._worker.write(work)
        return session_id


def _unknown_cost(item: Any) -> bool:
    """A stored receipt that said its cost was unknown (an export older than `cost_unknown`)."""
    receipt = item.get("receipt") if isinstance(item, dict) else None
    return isinstance(receipt, dict) and "cost_usd" in receipt and receipt["cost_usd"] is None
