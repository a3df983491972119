"""Text from models and tools made safe for a terminal, and short previews of values."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.wording import LOCAL_DATA_REASON, PAID_REASON

if TYPE_CHECKING:
    from ..core.toolbox import Toolbox, ToolSpec
    from ..mcp.session import ServerStatus

# C0 controls except tab and newline, DEL, and C1 controls: an escape sequence from a model or
# a tool could move the cursor, retitle the window or hide text. They are shown, not obeyed.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def as_typed(argument: str) -> str:
    """A command-line argument as the person typed it. Under a locale that is not UTF-8 (LC_ALL=C
    with `PYTHONUTF8=0`), Python decodes argv's bytes with surrogate escapes (`café` becomes
    `caf\\udcc3\\udca9`), which no request can carry: those bytes are read as UTF-8, what
    terminals send (U+FFFD for any that are not)."""
    if not any("\udc80" <= char <= "\udcff" for char in argument):
        return argument
    return os.fsencode(argument).decode("utf-8", "replace")


def safe(text: str) -> str:
    """`text` with terminal control characters replaced by visible escapes (ESC -> \\x1b)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def preview(value: object, limit: int = 240) -> str:
    """One line, at most `limit` characters, safe for a terminal."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return safe(text)


def files_line(enabled: bool, root: Path | None) -> str:
    """The banner's `files` line: which folder the file tools see, or that they are off."""
    if not enabled:
        return "off (--no-files): read_file and list_files are not loaded"
    return f"read_file and list_files see {safe(str((root or Path.cwd()).resolve()))}"


def server_place(status: ServerStatus) -> str:
    """`http, http://127.0.0.1:8000/mcp`: how and where a server runs (its command line or URL,
    without secrets), and the MCP revision it speaks once it started (`MCP 2025-11-25`), as
    `tools list`, `doctor` and `/tools` name it beside the server."""
    protocol = getattr(status, "protocol", None)
    return f"{status.transport}, {safe(status.where)}" + (f", MCP {safe(protocol)}" if protocol else "")


ARGS_PREVIEW = 200  # a call's arguments as it starts; the consent question shows more
CONSENT_PREVIEW = 240  # the call a person is asked about, on every front: a little more of it


def call_text(name: str, arguments: object, limit: int = ARGS_PREVIEW) -> str:
    """`name(args)`: one tool call on one line, safe for a terminal."""
    return f"{safe(name)}({preview(arguments, limit)})"


def consent_question(tool: str, arguments: object, server: str | None, local_data: bool) -> str:
    """`Run name(args) on server? (why it asks)`: what the MCP front and ACP ask a person before
    a call (the terminal lays the same parts out on two lines)."""
    where = f" on {safe(server)}" if server else ""
    reason = LOCAL_DATA_REASON if local_data else PAID_REASON
    return f"Run {call_text(tool, arguments, CONSENT_PREVIEW)}{where}? ({reason})"


def tool_line(name: str, arguments: object) -> str:
    """`→ name(args)`: the line every command prints as a call starts (`grep '→ '` finds them all)."""
    return f"→ {call_text(name, arguments)}"


def searched_line(count: int) -> str:
    """The banner's, `/tools`' and `doctor`'s word that a big catalogue is searched (tools/search.py)."""
    return (
        f"the catalogue of {count} tools is searched: the model sees the built-ins, search_tools "
        "and the tools it found (TOOL_SEARCH)"
    )


def catalogue_searched(tools: Toolbox) -> str | None:
    """`searched_line` for a toolbox (an agent's tools) whose catalogue is searched, else None."""
    from ..tools.search import find_search

    search = find_search(tools)
    return searched_line(len(search.catalogue())) if search is not None and search.searched() else None


CONSENT_KEY = "free: runs without asking (known read-only) · asks: needs your yes (or --yes) first"


def tool_rows(specs: Iterable[ToolSpec], limit: int, *, servers: bool = True) -> list[tuple[str, str, str]]:
    """The free/asks table of `/tools` and `tools list`: (mark, padded name, description) per tool;
    `CONSENT_KEY` explains the marks. With `servers`, each description starts with `[server]`."""
    width = max((len(safe(spec.name)) for spec in specs), default=0)
    rows = []
    for spec in specs:
        where = f"[{safe(spec.server)}] " if servers and spec.server else ""
        mark = "free" if spec.read_only else "asks"
        rows.append((mark, safe(spec.name).ljust(width), where + preview(spec.description or "", limit)))
    return rows


def with_material(question: str, material: str | None) -> str:
    """The question with the text piped to it (`cat notes.md | venice-agent "summarise this"`)
    after it, marked as what it is; the question alone when nothing was piped."""
    if not material or not material.strip():
        return question
    return f"{question}\n\n<stdin>\n{material.rstrip()}\n</stdin>"


def material_note(material: str) -> str:
    """Under the banner: what came on stdin, and the rule it brings."""
    return (
        f"stdin  {len(material):,} characters attached to the question "
        "(local data: a tool that leaves this machine asks first)"
    )
