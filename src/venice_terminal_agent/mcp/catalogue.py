"""One catalogue of tools from several MCP servers, with names a model API accepts.

OpenAI-style function names must match `^[a-zA-Z0-9_-]{1,64}$` and be unique; MCP tool names
are free text and two servers may both have a `search`. So each tool gets a catalogue name:
- characters outside `[a-zA-Z0-9_-]` become `_`;
- a name two servers share, or a built-in tool's name, gets the server's (sanitised) name in
  front: `time__search`, `files__read_file`;
- a name still too long, or still clashing (`a.b` and `a_b` on one server), is cut and ends
  with `_` and 8 hex digits of a hash of the raw server and tool name, so two long names never
  collide and the same tool gets the same name every time.
Each catalogue name maps back to (server, original name) for the call. Pure: no MCP import.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any

from ..core.policy import is_paid, is_read_only
from ..core.record import Record
from ..core.toolbox import ToolSpec

MAX_NAME = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


class Target(Record):
    """Where a catalogue name leads: a server and the tool's name there."""

    server: str
    tool: str


class Listing(Record):
    """One server's tools, as listed (objects with the fields of `mcp.types.Tool`)."""

    server: str
    tools: Sequence[Any]
    apify: bool = False
    trusted: bool = False


class Catalogue(Record):
    specs: tuple[ToolSpec, ...] = ()
    targets: Mapping[str, Target] = field(default_factory=dict)

    def __contains__(self, name: object) -> bool:
        return name in self.targets

    @classmethod
    def build(cls, listings: Sequence[Listing], reserved: Iterable[str] = ()) -> Catalogue:
        """The catalogue of `listings`; names in `reserved` (the built-in tools') get a prefix too."""
        entries: list[tuple[Listing, Any]] = []
        for listing in listings:
            seen: set[str] = set()
            for tool in listing.tools:
                if tool.name not in seen:  # a server listing one name twice: keep the first
                    seen.add(tool.name)
                    entries.append((listing, tool))
        names = _catalogue_names(
            [(listing.server, tool.name) for listing, tool in entries], frozenset(reserved)
        )
        specs = tuple(
            _spec(name, listing, tool) for name, (listing, tool) in zip(names, entries, strict=True)
        )
        targets = {
            name: Target(listing.server, tool.name)
            for name, (listing, tool) in zip(names, entries, strict=True)
        }
        return cls(specs, targets)


def sanitise(name: str) -> str:
    return _INVALID.sub("_", name) or "tool"


def short_hash(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:8]


def _catalogue_names(raw: Sequence[tuple[str, str]], reserved: frozenset[str]) -> list[str]:
    """Unique valid names for (server, tool) pairs, in order; stable for the same input."""
    base = [sanitise(tool) for _, tool in raw]
    servers_per_name: dict[str, set[str]] = {}
    for (server, _), name in zip(raw, base, strict=True):
        servers_per_name.setdefault(name, set()).add(server)
    names = [
        f"{sanitise(server)}__{name}" if len(servers_per_name[name]) > 1 or name in reserved else name
        for (server, _), name in zip(raw, base, strict=True)
    ]
    names = [
        _fit(name, *pair) if len(name) > MAX_NAME else name for name, pair in zip(names, raw, strict=True)
    ]
    counts = Counter(names)
    return [
        _fit(name, *pair, force=True) if counts[name] > 1 else name
        for name, pair in zip(names, raw, strict=True)
    ]


def _fit(name: str, server: str, tool: str, *, force: bool = False) -> str:
    """`name` cut to leave room for `_` + a hash of the raw names (always added when forced)."""
    if len(name) <= MAX_NAME and not force:
        return name
    suffix = "_" + short_hash(server, tool)
    return name[: MAX_NAME - len(suffix)] + suffix


def _spec(name: str, listing: Listing, tool: Any) -> ToolSpec:
    annotations = getattr(tool, "annotations", None)
    hint = getattr(annotations, "read_only_hint", None) if annotations is not None else None
    read_only = is_read_only(tool.name, apify=listing.apify, trusted=listing.trusted, read_only_hint=hint)
    description = getattr(tool, "description", None) or getattr(tool, "title", None) or ""
    return ToolSpec(
        name,
        description,
        _parameters(getattr(tool, "input_schema", None)),
        read_only,
        listing.server,
        paid=is_paid(tool.name, apify=listing.apify),
        title=getattr(tool, "title", None) or "",  # searched by search_tools (tools/search.py)
    )


def _parameters(schema: Any) -> dict[str, Any]:
    """The tool's input schema as a function's parameters: always an object schema, no nulls."""
    parameters = without_nulls(dict(schema)) if isinstance(schema, Mapping) else {}
    parameters.setdefault("type", "object")
    if parameters["type"] == "object":
        parameters.setdefault("properties", {})
    return parameters


def without_nulls(value: Any) -> Any:
    """`value` with every null dropped, in objects and in lists.

    Pydantic and FastMCP servers publish `"default": null` for each `Optional[...] = None`
    parameter; Venice refuses any null in a request, so one such tool would fail every question.
    A null default says nothing a model needs (the parameter is optional either way).
    """
    if isinstance(value, Mapping):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value if item is not None]
    return value
