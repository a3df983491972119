"""Reading a file a person named (`--schema @FILE`, `-s @FILE`, `-a`, `run PLAN`, `sessions
import`, `--mcp-config`, the user config, `serve --tokens`): the one way, bounded.

Only a regular file is read, and never more than its limit: a device (`/dev/zero`), a FIFO,
a socket or a folder is refused before a byte is read (a FIFO is opened without waiting for a
writer), and a file that turns out longer than its limit while it is read (a file in /proc says
its size is 0) is refused too. Every refusal is one line, `WHERE: what is wrong`, raised as the
caller's error class (a `ConfigError` unless said): nothing is sent, the command ends with its
usage status (2).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import ConfigError, VeniceAgentError

KIB, MIB = 1024, 1024 * 1024
CONFIG_LIMIT = 1 * MIB  # a schema, an instruction, a plan, a config file: far more than any needs
IMPORT_LIMIT = 256 * MIB  # a session export: a long conversation with its attachments

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO waits for a writer without it (POSIX)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def size_text(size: int) -> str:
    """A size as people read it: 900 bytes, 12 KB, 1.5 MB."""
    if size < KIB:
        return f"{size} bytes"
    if size < MIB:
        return f"{size / KIB:.0f} KB"
    return f"{size / MIB:.1f} MB"


def read_bytes(
    path: Path | str,
    where: str,
    limit: int = CONFIG_LIMIT,
    error: type[VeniceAgentError] = ConfigError,
    *,
    over: str | None = None,
) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; `error(f"{where}: …")`
    for anything else (`over`: what to say of a file over the limit)."""
    try:
        kind = _kind(os.stat(path).st_mode)
        if kind is not None:
            raise error(f"{where}: {kind}, not a file")
        descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except (OSError, ValueError) as problem:
        raise error(f"{where}: cannot read it ({_reason(problem)})") from None
    with os.fdopen(descriptor, "rb") as file:
        try:
            opened = os.fstat(descriptor)  # what was opened, if it changed since
            kind = _kind(opened.st_mode)
            if kind is not None:
                raise error(f"{where}: {kind}, not a file")
            data = b""
            if opened.st_size <= limit:  # a size may be 0 and untrue (/proc): read one byte over
                if _NONBLOCK:
                    os.set_blocking(descriptor, True)
                data = file.read(limit + 1)
        except OSError as problem:
            raise error(f"{where}: cannot read it ({_reason(problem)})") from None
    if opened.st_size > limit or len(data) > limit:
        raise error(f"{where}: {over or f'over {size_text(limit)}, the most it may be'}")
    return data


def read_text(
    path: Path | str, where: str, limit: int = CONFIG_LIMIT, error: type[VeniceAgentError] = ConfigError
) -> str:
    """`read_bytes` as UTF-8 text; a file that is not UTF-8 is refused the same way."""
    data = read_bytes(path, where, limit, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(f"{where}: not UTF-8 text (byte {problem.start})") from None


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, or None for a regular one."""
    return next(
        (name for test, name in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "a special file"
    )


def _reason(problem: Exception) -> str:
    if isinstance(problem, ValueError):  # a NUL byte in the name
        return "the name holds a NUL byte"
    return getattr(problem, "strerror", None) or str(problem)
