"""Starting a server: its whole tool list (page after page), or one line on why it did not start."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from ..core.errors import ToolError, ToolListError
from .results import SDK_STAND_INS, describe_error, http_status_reason

MAX_PAGES = 1000  # a server paging forever with fresh cursors is a server gone wrong


def invalid_header_notice(server: str, tool: str, reason: str) -> str:
    """The one line said when a 2026-07-28 server's tool is left out for its header mapping."""
    return f"{server}: tool {tool!r} is left out: its x-mcp-header mapping is invalid ({reason})"


# Who hears of a tool the SDK leaves out while a server's tools are listed (this task's).
_dropped: ContextVar[Callable[[str, str], None] | None] = ContextVar("dropped tools", default=None)


def _say_dropped(record: logging.LogRecord) -> bool:
    """The SDK drops a tool whose `x-mcp-header` mapping is invalid (the 2026-07-28 MUST) and
    says so in a log warning: it becomes one notice naming the server instead."""
    told = _dropped.get()
    if told is None or not record.msg.startswith("dropping tool ") or len(record.args or ()) != 2:
        return True
    tool, reason = record.args  # type: ignore[misc]
    told(str(tool), str(reason))
    return False


logging.getLogger("client").addFilter(_say_dropped)  # the mcp SDK's client session logger


async def list_all_tools(
    client: Any, server: str, notice: Callable[[str], None] | None = None, meta: dict[str, Any] | None = None
) -> list[Any]:
    """Every tool, following `next_cursor`; a repeated cursor fails rather than keep part of a list.
    A tool the SDK leaves out (invalid header mapping) is one line to `notice`. `meta` gets the
    first page's `ttl_ms` (how long a 2026-07-28 server lets its list be cached)."""

    def dropped(tool: str, reason: str) -> None:
        if notice is not None:
            notice(invalid_header_notice(server, tool, reason))

    token = _dropped.set(dropped)
    try:
        return await list_all(client.list_tools, "tools", server, meta)
    finally:
        _dropped.reset(token)


async def list_all(fetch: Any, what: str, server: str, meta: dict[str, Any] | None = None) -> list[Any]:
    """Every item of a paged MCP list (`what`: "tools", "resources", "prompts"), page after page."""
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch(cursor=cursor, cache_mode="bypass")
        if meta is not None and not items and cursor is None:
            meta["ttl_ms"] = getattr(page, "ttl_ms", None)
        items.extend(getattr(page, what))
        cursor = page.next_cursor
        if not cursor:
            return items
        if cursor in seen:
            raise ToolListError(
                f"{server} sent the {what[:-1]}-list cursor {cursor!r} twice; its {what[:-1]} list is not used"
            )
        seen.add(cursor)
    raise ToolListError(
        f"{server} sent more than {MAX_PAGES} pages of {what}; its {what[:-1]} list is not used"
    )


def startup_reason(config: Any, error: BaseException, http_status: int | None) -> tuple[str, bool]:
    """Why `config`'s server did not start, and whether its stderr tail would help to say it."""
    name = config.name
    if isinstance(error, ToolError):
        return f"{name} cannot start: {error.message}", False
    if isinstance(error, ToolListError):
        return str(error), False
    if isinstance(error, FileNotFoundError | PermissionError):
        return (
            f"{name} cannot start: `{config.command}` was not found or cannot run "
            f"({describe_error(error)}); check 'command' in the MCP config and that the program is installed"
        ), False
    text = describe_error(error)
    if config.transport == "http":
        if http_status is not None:
            said = "" if text in SDK_STAND_INS else f" ({text})"
            return f"{name} did not start{said}: {http_status_reason(config.where, http_status)}", False
        hint = "check the URL, that the server is running, and its token or headers"
    else:
        hint = f"check that `{config.where}` runs on its own"
    return f"{name} did not start ({text}); {hint}", True


def startup_timeout_reason(config: Any, timeout: float) -> str:
    stdio = config.transport == "stdio"
    what = f"`{config.where}`" if stdio else config.where
    hint = (
        "check that the command starts an MCP server on stdio (a first `npx` run downloads the package and can be slow)"
        if stdio
        else "check the URL and the network"
    )
    return f"{config.name} ({what}) did not finish starting within {timeout:g} s: {hint}"
