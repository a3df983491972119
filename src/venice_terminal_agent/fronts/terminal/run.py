"""`venice-agent run PLAN`: a fixed plan on the built-in tools, shown step by step."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ...core.consent import Consent
from ...core.defaults import PLAN_BUDGET
from ...core.errors import PlanError
from ...core.events import Event, ToolFinished, ToolStarted
from ...core.files import CONFIG_LIMIT, read_text, size_text
from ...core.loop import run_loop
from ...core.pager import DEFAULT_PAGE_CHARS, Pager
from ...core.plans import parse_plan
from ...core.receipt import USAGE_ERROR_STATUS, Receipt
from ...core.wording import shown_answer
from ...tools.builtin import builtin_toolbox
from ..failures import fail, path_problem
from ..text import preview, safe, tool_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...config import Settings
    from ...core.events import EventSink
    from ...core.receipt import Answer, Call
    from ...mcp.server_config import ServerConfig

RUN = "venice-agent run"

DEFAULT_BUDGET = PLAN_BUDGET


def run_plan(
    source: str,
    *,
    budget: int | None,
    json_output: bool,
    root: Path | None,
    mcp_config: Path | None = None,
    yes: bool = False,
) -> int:
    try:
        text = _stdin() if source == "-" else read_text(source, source, error=PlanError)
        plan = parse_plan(text, "stdin" if source == "-" else source)
    except (OSError, UnicodeDecodeError) as error:
        typer.echo(f"venice-agent run: cannot read {source}: {_reason(error)}{_elsewhere(source)}", err=True)
        return USAGE_ERROR_STATUS
    except PlanError as error:
        typer.echo(f"venice-agent run: {error}{_elsewhere(source)}", err=True)
        return USAGE_ERROR_STATUS
    if problem := path_problem(root):
        return fail(problem, command=RUN)

    pager = Pager(plan.page_chars or DEFAULT_PAGE_CHARS)
    limit = budget if budget is not None else plan.budget if plan.budget is not None else DEFAULT_BUDGET
    show = None if json_output else _show_step
    if mcp_config is None:  # offline: built-in tools only (all read-only), no MCP import
        from ...telemetry import traced

        tools = Consent(builtin_toolbox(root, pager))
        with traced():
            receipt = asyncio.run(run_loop(plan.steps, tools, limit, events=show, pager=pager))
    else:
        outcome = run_with_mcp(
            plan.steps, limit, events=show, pager=pager, root=root, mcp_config=mcp_config, yes=yes
        )
        if isinstance(outcome, int):
            return outcome
        receipt = outcome
    if json_output:
        typer.echo(json.dumps(receipt.to_dict(), ensure_ascii=False, indent=2))
    else:
        _show_end(receipt)
    return receipt.exit_status


def _show_step(event: Event) -> None:
    if isinstance(event, ToolStarted):
        typer.echo(tool_line(event.call.tool, event.call.arguments))
    elif isinstance(event, ToolFinished):
        if event.error is not None:
            typer.echo(f"  ✗ {preview(event.error, 200)}")
        else:
            typer.echo(f"  ✓ {preview(event.result, 200)}")


def _show_end(receipt: Receipt) -> None:
    if receipt.answer is not None:
        typer.echo(safe(shown_answer(receipt.answer)))
    if receipt.refusal is not None:
        typer.echo(f"refusal: {safe(receipt.refusal)}")
    typer.echo(receipt.summary())


def _stdin() -> str:
    """The plan piped in, bounded as a plan file is."""
    text = sys.stdin.read(CONFIG_LIMIT + 1)
    if len(text) > CONFIG_LIMIT:
        raise PlanError(f"stdin: over {size_text(CONFIG_LIMIT)}, the most a plan may be")
    return text


def _elsewhere(source: str) -> str:
    """Where the README's plans are, when one of them is missing: outside a clone, the command
    shipped alone, without the examples folder."""
    if Path(source).parts[:1] != ("examples",) or Path(source).exists():
        return ""
    return " (the examples are in a clone of the repository; venice-agent demo --tour runs the tour shipped with the command)"


def _reason(error: Exception) -> str:
    return getattr(error, "strerror", None) or str(error)


def run_with_mcp(
    steps: Sequence[Call | Answer], budget: int, *, events: EventSink | None, pager: Pager, root: Path | None, mcp_config: Path, yes: bool
) -> Receipt | int:
    """`venice-agent run PLAN --mcp-config FILE`: the plan on built-in and MCP tools together."""
    from ...core.errors import ConfigError
    from ..settings_load import Flags, load

    try:
        settings, servers = load(Flags(mcp_config=mcp_config, yes=yes))
    except ConfigError as error:
        return fail(str(error), command=RUN)
    return asyncio.run(_run(steps, budget, events, pager, root, settings, servers, yes))


async def _run(
    steps: Sequence[Call | Answer],
    budget: int,
    events: EventSink | None,
    pager: Pager,
    root: Path | None,
    settings: Settings,
    servers: list[ServerConfig],
    yes: bool,
) -> Receipt:
    from ..runtime import Opening, open_runtime
    from .approver import terminal_consent
    from .person import TerminalPerson
    from .startup_spinner import starting_lines

    opening = Opening(model=False, root=root, pager=pager, watch=starting_lines(False))
    async with open_runtime(settings, servers, TerminalPerson(), opening) as runtime:
        for failure in runtime.mcp.failures:
            typer.echo(f"venice-agent run: {safe(failure)}", err=True)
        tools = terminal_consent(runtime.tools, yes)
        return await run_loop(steps, tools, budget, events=events, pager=pager)
