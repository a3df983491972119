"""`venice-agent tools list` and `tools call NAME JSON`.

The servers come from the same place as for asking: `--mcp-config FILE`, else the user's
`mcp.json`, else Apify. A server that fails to start is one line on stderr; the others go on.
Exit status: 0 done, 5 the tool failed, 2 a usage or configuration error (bad JSON, unknown
tool, a server that did not start, a paid call declined).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..core.receipt import EXIT_STATUS, USAGE_ERROR_STATUS, Call, Exit
from ..core.wording import plural
from ..fronts.failures import fail
from ..fronts.terminal.approver import terminal_consent
from ..fronts.terminal.startup_spinner import starting_lines
from ..fronts.text import CONSENT_KEY, safe, server_place, tool_rows

if TYPE_CHECKING:
    from ..config import Settings
    from ..mcp.server_config import ServerConfig

TOOL_FAILED = EXIT_STATUS[Exit.TOOL_ERROR]


@dataclass(frozen=True)
class McpFlags:
    mcp_config: Path | None = None
    transport: str | None = None
    tools: str | None = None
    yes: bool = False  # --yes: also what servers' questions (elicitation) are told: declined


def _servers(flags: McpFlags) -> tuple[Any, list[Any]]:
    """Settings and server configs; `ConfigError` said by the caller."""
    from ..fronts.settings_load import Flags, load

    return load(
        Flags(transport=flags.transport, tools=flags.tools, mcp_config=flags.mcp_config, yes=flags.yes)
    )




def list_tools(flags: McpFlags, *, json_output: bool) -> int:
    from ..core.errors import ConfigError

    try:
        settings, servers = _servers(flags)
    except ConfigError as error:
        return fail(command="venice-agent tools list", message=str(error))
    return asyncio.run(_list(servers, settings, json_output))


async def _list(servers: list[ServerConfig], settings: Settings, json_output: bool) -> int:
    from ..fronts.runtime import Opening, open_runtime
    from ..fronts.terminal.person import TerminalPerson

    opening = Opening(model=False, watch=starting_lines(json_output))
    async with open_runtime(settings, servers, TerminalPerson(), opening) as runtime:
        box = runtime.mcp
        statuses, specs = box.servers, box.specs()
        originals = {spec.name: box.original_name(spec.name) for spec in specs}
    if json_output:
        document = {
            "servers": [
                {"name": s.name, "transport": s.transport, "where": s.where, "state": s.state,
                 "tools": s.tools, "error": s.error, "protocol": s.protocol}
                for s in statuses
            ],
            "tools": [
                {"name": spec.name, "original_name": originals[spec.name], "server": spec.server,
                 "needs_consent": not spec.read_only, "description": spec.description,
                 "input_schema": spec.parameters}
                for spec in specs
            ],
        }  # fmt: skip
        typer.echo(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        _show_list(statuses, specs)
    return USAGE_ERROR_STATUS if any(s.state == "failed" for s in statuses) else 0


def _show_list(statuses: Iterable[Any], specs: list[Any]) -> None:
    statuses = list(statuses)
    if not statuses:
        from ..fronts.runtime import NO_MCP

        typer.echo(NO_MCP)
    for status in statuses:
        if status.state == "failed":
            typer.echo(f"{safe(status.name)} ({server_place(status)}): failed: {safe(status.error or '')}")
            continue
        typer.echo(f"{safe(status.name)} ({server_place(status)}): {status.tools} tools")
        mine = [spec for spec in specs if spec.server == status.name]
        for mark, name, description in tool_rows(mine, 100, servers=False):  # listed under their server
            typer.echo(f"  {mark} {name}  {description}")
    typer.echo(CONSENT_KEY)


def call_tool(
    flags: McpFlags, name: str, arguments: str, *, yes: bool, page: int = 1, full: bool = False
) -> int:
    from ..core.errors import ConfigError

    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as error:
        return fail(command="venice-agent tools call", message=f"the arguments are not JSON ({error.msg} at column {error.colno})")
    if not isinstance(parsed, dict):
        return fail(command="venice-agent tools call", message='the arguments are a JSON object, e.g. \'{"query": "web scraper"}\'')
    if page < 1:
        return fail(command="venice-agent tools call", message="--page counts from 1")
    try:
        settings, servers = _servers(replace(flags, yes=yes))
    except ConfigError as error:
        return fail(command="venice-agent tools call", message=str(error))
    size = None if full else settings.max_tool_result_chars
    return asyncio.run(_call(servers, settings, name, parsed, yes, page, size))


async def _call(
    servers: list[ServerConfig],
    settings: Settings,
    name: str,
    arguments: dict[str, Any],
    yes: bool,
    page: int,
    size: int | None,
) -> int:
    from ..core.errors import ToolError
    from ..fronts.runtime import Opening, open_runtime
    from ..fronts.terminal.person import TerminalPerson

    opening = Opening(model=False, watch=starting_lines(False))
    async with open_runtime(settings, servers, TerminalPerson(), opening) as runtime:
        box = runtime.mcp
        if name not in box:  # its server may be one that did not start: the one line says why
            from ..core.wording import did_you_mean, near_misses

            names = sorted(spec.name for spec in box.specs())
            close = did_you_mean(near_misses(name, names))
            among = " among the servers that started" if box.failures else ""
            nearly = f"; {close}" if close else ""
            failed = ": " + " · ".join(box.failures) if box.failures else ""
            known = ", ".join(names) or "none"
            return fail(command="venice-agent tools call", message=f"there is no tool named {name!r}{among}{nearly} (tools: {known}){failed}"
            )
        for failure in box.failures:
            typer.echo(f"venice-agent tools call: {safe(failure)}", err=True)
        tools = terminal_consent(box, yes)
        if not await tools.approve(Call(name, arguments)):
            return USAGE_ERROR_STATUS
        try:
            with _spinning(Call(name, arguments)):
                result = readable(await box.call_whole(name, arguments))  # approved above
        except ToolError as error:
            typer.echo(f"venice-agent tools call: {safe(name)}: {safe(error.message)}", err=True)
            return TOOL_FAILED
    pages = [result] if size is None else cut_pages(result, size)
    if page > len(pages):
        return fail(command="venice-agent tools call", message=f"the result has {plural(len(pages), 'page')} of {size} characters; --page {page} is past the end",
        )
    shown = safe(pages[page - 1])
    typer.echo(shown, nl=not shown.endswith("\n"))
    if len(pages) > 1:
        more = f"; the next: --page {page + 1}" if page < len(pages) else "; this is the last"
        typer.echo(
            f"[page {page} of {len(pages)} of {len(result)} characters{more}, or --full for all]", err=True
        )
    return 0


@contextmanager
def _spinning(call: Call) -> Iterator[None]:
    """While the tool runs: on a terminal, the spinner a question shows, with the server's
    progress notifications (`running wait: 2 of 5…`)."""
    from ..core.events import ToolProgress, tool_progress
    from ..fronts.terminal.render import Renderer, make_console, running_text

    renderer = Renderer(make_console(stderr=True))

    def report(progress: float | None, total: float | None, message: str | None) -> None:
        renderer.spin(running_text(call.tool, ToolProgress(call, progress, total, message)))

    renderer.spin(running_text(call.tool))
    token = tool_progress.set(report)
    try:
        yield
    finally:
        tool_progress.reset(token)
        renderer.close()


def cut_pages(text: str, size: int) -> list[str]:
    """`text` in pages of at most `size` characters, each ending at a line's end where it can."""
    pages = []
    while len(text) > size:
        chunk = text[:size]
        chunk = chunk[: chunk.rindex("\n") + 1] if "\n" in chunk else chunk
        pages.append(chunk)
        text = text[len(chunk) :]
    return [*pages, text]


def readable(text: str) -> str:
    """A result for a person: structured content (the JSON first line) indented, the rest as is."""
    head, newline, rest = text.partition("\n")
    for candidate, tail in ((text, ""), (head, newline + rest)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False, indent=2) + tail
    return text
