"""What the store's file holds and how it moves forward: numbered migrations, checked opening.

The schema version is `PRAGMA user_version`; migration N (1-based, in `MIGRATIONS`) brings a
file from version N-1 to N. `PRAGMA application_id` marks the file as ours. A file that is
damaged, belongs to another program, or was written by a newer version is refused with a
`StoreError` that names it — it is never rewritten, replaced or "repaired".
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.defaults import APP_NAME
from ..core.errors import StoreError

APPLICATION_ID = 0x56454E41  # "VENA"
DB_FILE_NAME = "venice-agent.db"
REFUSED = "it was left untouched"
NOT_ALLOWED = frozenset({sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM})
BUSY_TIMEOUT = 5.0  # seconds to wait for another process holding the file


def default_db_path() -> Path:
    """The store's file in the user data folder (e.g. ~/.local/share/venice-agent/)."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / DB_FILE_NAME


def resolve_db_path(flag: str | os.PathLike[str] | None = None) -> Path:
    """`--db` if given, else `VENICE_AGENT_DB`, else the default file."""
    chosen = flag or os.environ.get("VENICE_AGENT_DB")
    return Path(os.path.expanduser(chosen)) if chosen else default_db_path()  # never raises: ~nobody stays


def _m1_initial(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE conversations (chat TEXT PRIMARY KEY, last_message TEXT, last_reply TEXT,"
        " created REAL NOT NULL, updated REAL NOT NULL)"
    )
    db.execute(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, at REAL NOT NULL, source TEXT NOT NULL, chat TEXT,"
        " question TEXT NOT NULL, stopped_because TEXT NOT NULL, calls INTEGER NOT NULL,"
        " duration REAL, model TEXT, receipt TEXT NOT NULL)"
    )
    db.execute("CREATE INDEX runs_by_chat ON runs (chat, id)")
    db.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, chat TEXT NOT NULL, at REAL NOT NULL,"
        " text TEXT NOT NULL, reply TEXT NOT NULL, kind TEXT NOT NULL, run INTEGER REFERENCES runs (id))"
    )
    db.execute("CREATE INDEX messages_by_chat ON messages (chat, id)")
    # One row per reservation of calls: `calls` spent (or held, while the run goes on) at `at`.
    db.execute(
        "CREATE TABLE ledger (id INTEGER PRIMARY KEY, chat TEXT NOT NULL, at REAL NOT NULL,"
        " calls INTEGER NOT NULL, run INTEGER REFERENCES runs (id))"
    )
    db.execute("CREATE INDEX ledger_by_chat ON ledger (chat, at)")


def _m2_owners(db: sqlite3.Connection) -> None:
    # Who created each chat, when the bot is served with tokens (`venice-agent serve --token-file`).
    db.execute("CREATE TABLE owners (chat TEXT PRIMARY KEY, user TEXT NOT NULL, at REAL NOT NULL)")


# Append only: never edit a migration that shipped, add the next one.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_m1_initial, _m2_owners]


@dataclass(frozen=True)
class Schema:
    """One kind of file of ours: its mark, its migrations, and the advice when it is refused.
    The bot's store is `APPLICATION_ID` and `MIGRATIONS`; the terminal's sessions file
    (`sessions.py`) has its own."""

    application_id: int
    migrations: Sequence[Callable[[sqlite3.Connection], None]]
    choose: str = "choose another --db"


def connect(path: str, *, create: bool = True, schema: Schema | None = None) -> sqlite3.Connection:
    """An open, checked, migrated connection to `path` (":memory:" for memory); `schema`: the
    bot's store unless another is named."""
    schema = schema if schema is not None else Schema(APPLICATION_ID, MIGRATIONS)  # read now: tests add one
    memory = path == ":memory:"
    if not memory and not create and not os.path.exists(path):
        raise StoreError(f"no store at {path}")
    if not memory and not os.path.isdir(Path(path).parent):
        raise StoreError(f"cannot create {path}: the folder {Path(path).parent} does not exist")
    try:
        db = sqlite3.connect(path, isolation_level=None)  # autocommit: transactions are explicit
    except sqlite3.Error as error:
        raise StoreError(cannot_open(Path(path), error)) from None
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT * 1000:.0f}")
        _migrate(db, path, schema)
        if not memory:
            _use_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")  # with WAL: safe across crashes, fast commits
        return db
    except sqlite3.DatabaseError as error:
        db.close()
        if error.sqlite_errorcode & 0xFF in NOT_ALLOWED:  # the file may be fine: we may not write there
            raise StoreError(cannot_open(Path(path), error)) from None
        if error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_FULL:  # the file is fine: the disk is not
            raise StoreError(f"cannot write the store {path}: the disk is full") from None
        raise StoreError(
            f"{path} is not a usable venice-agent store ({error}); {REFUSED}: "
            f"move it away or {schema.choose.removeprefix('choose ')}"
        ) from None
    except BaseException:
        db.close()
        raise


def cannot_open(path: Path, error: sqlite3.Error) -> str:
    """Why `path` cannot be opened, in words (SQLite only says "unable to open database file")."""
    if os.path.isdir(path):
        reason = f"it is a folder, not a file (e.g. --db {path / DB_FILE_NAME})"
    elif not os.access(path.parent, os.W_OK):
        reason = f"the folder {path.parent} is not writable (the store keeps its journal next to the file)"
    elif os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        reason = "the file is not readable and writable by this user"
    else:
        reason = str(error)
    return f"cannot open the store {path}: {reason}; choose another --db"


def _use_wal(db: sqlite3.Connection, wait: float = 0.005) -> None:
    """Switch the file to WAL (once per file: the mode is kept in it). The switch needs the
    file to itself for a moment, and SQLite answers "locked" at once instead of calling the
    busy handler, so another process opening the store at the same time is waited for here."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        time.sleep(wait)


def _check(db: sqlite3.Connection, path: str, schema: Schema) -> int:
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id not in (0, schema.application_id) or (app_id == 0 and tables):
        raise StoreError(f"{path} is an SQLite file of another program; {REFUSED}: {schema.choose}")
    if version > len(schema.migrations):
        raise StoreError(
            f"{path} has schema version {version}, newer than this venice-agent knows "
            f"({len(schema.migrations)}); {REFUSED}: upgrade venice-agent or {schema.choose}"
        )
    return int(version)


def _migrate(db: sqlite3.Connection, path: str, schema: Schema) -> None:
    db.execute("BEGIN")  # the checks read one snapshot, never a schema half created by another process
    try:
        version = _check(db, path, schema)
    finally:
        db.execute("COMMIT")
    if version == len(schema.migrations):
        return
    db.execute("BEGIN IMMEDIATE")  # the writers' lock: whoever creates the schema, the others wait
    try:
        version = _check(db, path, schema)  # again, inside the lock: another process may have migrated
        for number in range(version + 1, len(schema.migrations) + 1):
            schema.migrations[number - 1](db)
            db.execute(f"PRAGMA user_version = {number}")
        db.execute(f"PRAGMA application_id = {schema.application_id}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
