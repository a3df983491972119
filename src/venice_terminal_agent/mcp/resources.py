"""The servers' resources and prompts: `/resources` and `/prompts` list them, the built-in
`read_resource` tool reads one, `/prompt` fetches one to ask it.

Only running servers that declared the capability are asked. A server that cannot answer a
listing does not hide the others: its reason comes back beside what the others listed.
Contents become text through `mcp_results` (binary described in one line, never shown); the
toolbox cuts a long resource into pages like any tool result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import ToolError
from ..core.record import Record
from ..core.toolbox import ToolSpec
from .listing import ToolListError, list_all
from .results import block_text, error_text, resource_text

READ_RESOURCE = "read_resource"
SEPARATOR = "__"  # `server__name` for a prompt two servers share, as for tools (catalogue.py)


class Listed(Record):
    """One resource or prompt (an `mcp.types.Resource` or `Prompt`) and the server it is on."""

    server: str
    item: Any


def offers(session: Any, feature: str) -> bool:
    """The session is running and its server declared `feature` ("resources", "prompts")."""
    client = session.client
    capabilities = getattr(client, "server_capabilities", None) if client is not None else None
    return getattr(capabilities, feature, None) is not None


async def list_everywhere(sessions: Sequence[Any], what: str) -> tuple[list[Listed], list[str]]:
    """Every server's `what` ("resources" or "prompts"), and one line per server that failed."""
    offering = [session for session in sessions if offers(session, what)]
    outcomes = await asyncio.gather(
        *(list_all(getattr(s.client, f"list_{what}"), what, s.name) for s in offering),
        return_exceptions=True,
    )
    listed: list[Listed] = []
    problems: list[str] = []
    for session, outcome in zip(offering, outcomes, strict=True):
        if isinstance(outcome, ToolListError):
            problems.append(str(outcome))
        elif isinstance(outcome, Exception):
            problems.append(_said(session, f"{session.name}: cannot list {what}: {error_text(outcome)}"))
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            listed.extend(Listed(session.name, item) for item in outcome)
    return listed, problems


def _said(session: Any, message: str) -> str:
    return str(session.masked(message))


def read_resource_spec(servers: Sequence[str]) -> ToolSpec:
    """The built-in tool, offered while a running server has resources. Read-only (resources
    have no side effects), but it has a server: what it sends leaves the machine (consent.py)."""
    description = (
        "Read a resource of an MCP server by its URI (from a resource link in a tool result, or "
        "from the server's list). Leave out uri to list the server's resources. "
        f"Servers with resources: {', '.join(servers)}."
    )
    parameters = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "enum": list(servers)},
            "uri": {"type": "string", "description": "The resource's URI; leave out to list them."},
        },
        "required": ["server"],
    }
    return ToolSpec(READ_RESOURCE, description, parameters, read_only=True, server=", ".join(servers))


async def read_resource_tool(sessions: Mapping[str, Any], arguments: Mapping[str, Any]) -> str:
    """What the `read_resource` tool answers: the resource, or the server's list of them.
    `sessions`: the servers the tool is offered for, by name."""
    servers = list(sessions)
    server, uri = arguments.get("server"), arguments.get("uri")
    if server not in servers:
        raise ToolError(f"server must be one of {', '.join(servers)}")
    session = sessions[server]
    if uri is None or uri == "":
        listed, problems = await list_everywhere([session], "resources")
        if problems:
            raise ToolError(problems[0])
        lines = [resource_line(entry.item) for entry in listed]
        return "\n".join(lines) or f"{server} lists no resources"
    if not isinstance(uri, str):
        raise ToolError("uri must be a string")
    return await read_resource(session, uri)


def resource_line(resource: Any) -> str:
    """`<uri> name (mime, size bytes): description` for the model."""
    details = [str(x) for x in (resource.mime_type, _size(resource)) if x]
    line = f"<{resource.uri}> {resource.name}" + (f" ({', '.join(details)})" if details else "")
    description = " ".join(str(resource.description or "").split())
    return f"{line}: {description}" if description else line


def _size(resource: Any) -> str:
    return f"{resource.size} bytes" if getattr(resource, "size", None) is not None else ""


async def read_resource(session: Any, uri: str) -> str:
    """The resource's contents as text; a `ToolError` saying why not."""
    if not offers(session, "resources"):
        raise ToolError(f"{session.name} is not running or has no resources")
    try:
        result = await session.client.read_resource(uri)
    except Exception as error:  # MCPError (unknown URI), a timeout, a dropped connection
        raise ToolError(_said(session, f"{session.name} could not read {uri}: {error_text(error)}")) from None
    return resource_text(result)


# -- prompts --------------------------------------------------------------------------------


def prompt_names(listed: Sequence[Listed]) -> dict[str, Listed]:
    """Each prompt by the name to type: its own, or `server__name` when two servers share it."""
    servers: dict[str, set[str]] = {}
    for entry in listed:
        servers.setdefault(entry.item.name, set()).add(entry.server)
    named: dict[str, Listed] = {}
    for entry in listed:
        name = entry.item.name
        named.setdefault(name if len(servers[name]) == 1 else f"{entry.server}{SEPARATOR}{name}", entry)
    return named


def find_prompt(listed: Sequence[Listed], name: str) -> Listed:
    """The prompt typed as `name` (as `/prompts` shows it, or `server__name`); else a
    `ToolError` saying which names there are."""
    named = prompt_names(listed)
    if name in named:
        return named[name]
    server, _, short = name.partition(SEPARATOR)
    for entry in listed:
        if entry.server == server and entry.item.name == short:
            return entry
    shared = sorted(typed for typed in named if typed.endswith(SEPARATOR + name))
    if shared:
        raise ToolError(f"{name} is a prompt of several servers; say which: {', '.join(shared)}")
    raise ToolError(f"no prompt named {name}; /prompts lists them")


def arguments_line(prompt: Any) -> str:
    """`city (required: Name of the city), state` — a prompt's arguments in one line; each
    description stays inside its argument's brackets, so a comma in it reads as its own."""
    parts = []
    for argument in prompt.arguments or []:
        notes = ["required"] if argument.required else []
        if argument.description:
            notes.append(" ".join(argument.description.split()))
        parts.append(argument.name + (f" ({': '.join(notes)})" if notes else ""))
    return ", ".join(parts) or "none"


def check_arguments(name: str, prompt: Any, given: Mapping[str, str]) -> None:
    """A `ToolError` in one line when a required argument is missing or one is unknown."""
    known = {argument.name for argument in prompt.arguments or []}
    missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in given]
    unknown = sorted(set(given) - known)
    if missing or unknown:
        what = f"missing {', '.join(missing)}" if missing else f"no argument {', '.join(unknown)}"
        raise ToolError(f"{name}: {what}; its arguments: {arguments_line(prompt)}")


async def get_prompt(session: Any, name: str, arguments: Mapping[str, str]) -> str:
    """The prompt's messages as one question: user text as is, other roles marked, any
    non-text part (image, audio, resource) in one line the way tool results describe it."""
    if not offers(session, "prompts"):
        raise ToolError(f"{session.name} is not running or has no prompts")
    try:
        result = await session.client.get_prompt(name, dict(arguments))
    except Exception as error:
        raise ToolError(
            _said(session, f"{session.name} could not give {name}: {error_text(error)}")
        ) from None
    parts = []
    for message in result.messages:
        text = block_text(message.content)
        parts.append(text if message.role == "user" else f"[{message.role}] {text}")
    return "\n\n".join(parts)
