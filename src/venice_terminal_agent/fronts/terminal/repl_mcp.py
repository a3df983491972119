"""The REPL's MCP commands: `/resources`, `/prompts` and `/prompt NAME key=value …`.

Servers' words (names, descriptions, URIs) pass through `safe` before they reach the terminal.
A server that cannot list is one yellow line; the others are still shown.
"""

from __future__ import annotations

import shlex
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...core.errors import ToolError
from ..text import safe

PROMPT_USAGE = "/prompt NAME key=value … (/prompts lists them)"


async def show_resources(console: Console, mcp: Any) -> None:
    listed = await _listed(console, mcp, "resources")
    if not listed:
        return
    table = _table("server", "uri", "name", "type", "size")
    for entry in listed:
        item = entry.item
        size = str(item.size) if getattr(item, "size", None) is not None else ""
        table.add_row(
            *(safe(str(x or "")) for x in (entry.server, item.uri, item.name, item.mime_type, size))
        )
    console.print(table)


async def show_prompts(console: Console, mcp: Any) -> None:
    from ...mcp.resources import arguments_line, prompt_names

    listed = await _listed(console, mcp, "prompts")
    if not listed:
        return
    table = _table("server", "name", "description", "arguments")
    for name, entry in prompt_names(listed).items():
        description = " ".join(str(entry.item.description or entry.item.title or "").split())
        table.add_row(*(safe(x) for x in (entry.server, name, description, arguments_line(entry.item))))
    console.print(table)
    console.print(Text(f"ask one: {PROMPT_USAGE}", style="dim"))


async def prompt_question(mcp: Any, line: str) -> str:
    """The question `/prompt NAME key=value …` asks; a `ToolError` in one line when it cannot."""
    from ...mcp.resources import check_arguments, find_prompt, get_prompt

    name, _, rest = line.strip().partition(" ")
    if not name:
        raise ToolError(f"which prompt? {PROMPT_USAGE}")
    arguments = _pairs(rest)
    listed, problems = await mcp.listed("prompts") if mcp is not None else ([], [])
    if not listed and problems:
        raise ToolError(problems[0])
    entry = find_prompt(listed, name)
    check_arguments(name, entry.item, arguments)
    return await get_prompt(mcp.session(entry.server), entry.item.name, arguments)


def _pairs(text: str) -> dict[str, str]:
    """`city="New York" state=NY` as strings (a prompt's arguments are all strings)."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ToolError(f"cannot read the arguments ({error}); {PROMPT_USAGE}") from None
    pairs: dict[str, str] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise ToolError(f"{word!r} is not key=value; {PROMPT_USAGE}")
        pairs[key] = value
    return pairs


async def _listed(console: Console, mcp: Any, what: str) -> list[Any]:
    if mcp is None:
        console.print(f"no MCP servers, so no {what}")
        return []
    listed, problems = await mcp.listed(what)
    for problem in problems:
        console.print(Text(safe(problem), style="yellow"), soft_wrap=True)
    if not listed:
        console.print(f"no {what}: no running MCP server offers any")
    return list(listed)


def _table(*columns: str) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table
