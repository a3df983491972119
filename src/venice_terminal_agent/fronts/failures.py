"""How every command ends on an error: one line on stderr and an exit status, and a bug of ours
as one line too (the traceback only with VENICE_AGENT_TRACEBACK=1)."""

from __future__ import annotations

import os
import sys
import traceback

from ..core.errors import CRASH_STATUS
from ..core.receipt import USAGE_ERROR_STATUS

TRACEBACK_ENV = "VENICE_AGENT_TRACEBACK"


def fail(message: str, status: int = USAGE_ERROR_STATUS, *, command: str = "venice-agent") -> int:
    """Say `message` in one line on stderr; the exit status to end with."""
    print(f"{command}: {message}", file=sys.stderr)
    return status


def crash(error: BaseException) -> int:
    """A bug of ours: one line that says so (the traceback only when asked), exit status 1."""
    if os.environ.get(TRACEBACK_ENV):
        traceback.print_exception(error, file=sys.stderr)
    where = "" if os.environ.get(TRACEBACK_ENV) else f" (set {TRACEBACK_ENV}=1 to see where)"
    reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return fail(
        f"internal error, this is a bug in venice-agent: {reason}; please report it{where}", CRASH_STATUS
    )
