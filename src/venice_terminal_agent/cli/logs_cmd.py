"""`venice-agent logs`: the past runs kept in the store, newest last (as `llm logs` does).

Runs get there from the chat bot, and from the terminal agent when `--db` or VENICE_AGENT_DB
asks for it. Reading never creates the store: no file means nothing recorded yet. The terminal
agent's saved conversations (sessions) are kept apart; each command says where the other's are.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import datetime
from pathlib import Path

from ..core.costs import usd
from ..core.receipt import USAGE_ERROR_STATUS
from ..core.wording import plural
from ..fronts.text import preview, safe


def logs_main(count: int, *, json_output: bool, db: Path | None) -> int:
    from ..config import load_settings
    from ..core.errors import ConfigError
    from ..store.sqlite import Store, StoreError, resolve_db_path

    try:
        chosen = db or load_settings().venice_agent_db  # VENICE_AGENT_DB from .env counts too
    except ConfigError:
        chosen = db  # another setting is bad: that is not this command's business
    path = resolve_db_path(chosen)
    if not os.path.exists(path):  # never raises (a name too long is no file)
        if json_output:
            print("[]")
        print(
            f"no runs recorded yet: there is no store at {safe(str(path))} "
            "(the chat bot records there; the agent does with --db or VENICE_AGENT_DB)",
            file=sys.stderr,
        )
        _point_to_sessions()
        return 0

    async def read() -> list:
        async with Store(path, create=False) as store:
            return await store.runs(count)

    try:
        runs = asyncio.run(read())
    except StoreError as error:
        print(f"venice-agent logs: {error}", file=sys.stderr)
        return USAGE_ERROR_STATUS
    if json_output:
        print(json.dumps([run.to_dict() for run in runs], ensure_ascii=False, indent=2))
        return 0
    if not runs:
        print(f"no runs recorded yet in {safe(str(path))}", file=sys.stderr)
    for run in runs:
        print(_line(run))
    if runs:
        print(_total(runs))
    _point_to_sessions()
    return 0


def _point_to_sessions() -> None:
    """The terminal agent's saved sessions are another history: said when there are some."""
    from ..fronts.saved_sessions import sessions_path

    if sessions_path().exists():
        print(
            "the terminal agent's saved sessions are not listed here: venice-agent sessions list",
            file=sys.stderr,
        )


def _cost(run) -> str:
    """The run's cost as its receipt says; runs with no model spent nothing on one."""
    if "cost_usd" not in run.receipt:
        return ""
    cost = run.receipt["cost_usd"]
    return " · cost unknown" if cost is None else f" · {usd(cost)}"


def _total(runs: list) -> str:
    """`total: $0.042 over 3 runs`, saying how many costs are unknown (they are not guessed)."""
    costs = [run.receipt.get("cost_usd") for run in runs if "cost_usd" in run.receipt]
    known = sum(cost for cost in costs if cost is not None)
    unknown = sum(1 for cost in costs if cost is None)
    rest = f" ({plural(unknown, 'run')} of unknown cost not counted)" if unknown else ""
    return f"total: {usd(known)} over {plural(len(runs), 'run')}{rest}"


def _line(run) -> str:
    when = datetime.fromtimestamp(run.at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    where = f"chat {run.chat}" if run.chat else run.source
    calls = plural(run.calls, "call")
    took = "" if run.duration is None else f" · {run.duration:.3f} s"
    model = f" · {run.model}" if run.model else ""
    head = f"#{run.id}  {when}  {safe(where)}  {run.stopped_because} · {calls}{took}{_cost(run)}{safe(model)}"
    outcome = run.receipt.get("answer") or run.receipt.get("refusal") or ""
    lines = [head, f"    > {preview(run.question, 100)}"]
    if outcome:
        lines.append(f"    < {preview(outcome, 100)}")
    return "\n".join(lines)
