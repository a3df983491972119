"""How every command ends on an error: one line on stderr and an exit status, and a bug of ours
as one line too (the traceback only with VENICE_AGENT_TRACEBACK=1)."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from ..core.errors import CRASH_STATUS
from ..core.receipt import USAGE_ERROR_STATUS
from .text import safe

TRACEBACK_ENV = "VENICE_AGENT_TRACEBACK"


def fail(message: str, status: int = USAGE_ERROR_STATUS, *, command: str = "venice-agent") -> int:
    """Say `message` on stderr after the command's name (`venice-agent tools call`), made safe for
    a terminal (a server's or a file's words may be in it); the exit status to end with."""
    print(f"{command}: {safe(message)}", file=sys.stderr)
    return status


def path_problem(root: Path | None = None, mcp_config: Path | None = None) -> str | None:
    """What is wrong with --root and --mcp-config as given, before anything starts (None:
    nothing): a root that is not a folder, an MCP config that is not there (a broken link is:
    reading it says why)."""
    if root is not None and not os.path.isdir(root):
        return f"--root {root} is not a folder"
    if mcp_config is not None and not os.path.lexists(mcp_config):
        return f"--mcp-config {mcp_config}: no such file"
    return None


def crash(error: BaseException) -> int:
    """A bug of ours: one line that says so (the traceback only when asked), exit status 1."""
    if os.environ.get(TRACEBACK_ENV):
        traceback.print_exception(error, file=sys.stderr)
    where = "" if os.environ.get(TRACEBACK_ENV) else f" (set {TRACEBACK_ENV}=1 to see where)"
    reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return fail(
        f"internal error, this is a bug in venice-agent: {reason}; please report it{where}", CRASH_STATUS
    )
