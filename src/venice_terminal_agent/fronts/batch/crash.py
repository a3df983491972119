"""Seeded crash points for the batch's kill -9 tests: `VENICE_AGENT_BATCH_CRASH=reserve:3,tool:7`
kills this process (SIGKILL, as `kill -9` does) the 3rd time a reservation is about to commit,
or the 7th time a tool call came back before its result is recorded. Points: `reserve` (inside
the reservation's transaction), `stream` (a model response has begun streaming), `tool` (a call
reached the server, its result not yet settled), `between` (a step is checkpointed, the next
not begun). Unset, nothing happens: one dictionary look-up a point."""

from __future__ import annotations

import os
import signal

_counts: dict[str, int] = {}
_plan: dict[str, int] | None = None


def _read() -> dict[str, int]:
    plan: dict[str, int] = {}
    for part in os.environ.get("VENICE_AGENT_BATCH_CRASH", "").split(","):
        name, _, number = part.partition(":")
        if name.strip() and number.strip().isdigit():
            plan[name.strip()] = int(number)
    return plan


def point(name: str) -> None:
    global _plan
    if _plan is None:
        _plan = _read()
    if name not in _plan:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] == _plan[name]:
        os.kill(os.getpid(), signal.SIGKILL)
