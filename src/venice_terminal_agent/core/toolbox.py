"""The toolbox seam: what the loop needs from tools, and the plain-function toolbox.

A toolbox knows its tools by name, can describe them (for a model) and can call one. Plain
callables, the built-in tools and MCP servers all end up behind this one small protocol.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol, runtime_checkable

from .errors import ToolError
from .record import Record


class ToolSpec(Record):
    """A tool as a model sees it, plus whether it can run without asking (a `Record`: defining
    a frozen dataclass costs a one-shot question about 0.85 ms before its first byte)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    read_only: bool = False
    server: str | None = None
    paid: bool = False  # known to cost money (Apify's Actors); other tools that ask may or may not
    title: str = ""  # a server's human-readable name for it (MCP `title`); never sent to the model

    def openai_function(self) -> dict[str, Any]:
        """The OpenAI `tools` entry for this tool."""
        function: dict[str, Any] = {"name": self.name, "parameters": dict(self.parameters)}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}


@runtime_checkable
class Toolbox(Protocol):
    """What `run_loop` needs from tools."""

    def __contains__(self, name: object) -> bool: ...

    def specs(self) -> Sequence[ToolSpec]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run one tool; raise `ToolError` to refuse."""
        ...


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    dict: "object",
    list: "array",
}


def _json_type(annotation: object) -> dict[str, Any]:
    if isinstance(annotation, str):  # postponed annotations from `from __future__ import annotations`
        annotation = {"str": str, "int": int, "float": float, "bool": bool}.get(annotation, Any)
    origin = typing.get_origin(annotation) or annotation
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _json_type(members[0]) if len(members) == 1 else {}
    kind = _JSON_TYPES.get(origin)
    return {"type": kind} if kind else {}


def spec_from_function(name: str, function: Callable[..., Any], read_only: bool) -> ToolSpec:
    """Describe a plain function from its signature and docstring."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    signature = _signature(function)
    if signature is not None:
        for parameter in signature.parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            properties[parameter.name] = _json_type(parameter.annotation)
            if parameter.default is parameter.empty:
                required.append(parameter.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    description = inspect.getdoc(function) or ""
    return ToolSpec(name, description, schema, read_only=read_only)


def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


class FunctionToolbox:
    """Tools given as `{name: callable}`; a callable may be sync or async."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]], *, read_only: Iterable[str] = ()) -> None:
        self._functions = dict(functions)
        self._read_only = frozenset(read_only)
        self._signatures = {name: _signature(fn) for name, fn in self._functions.items()}

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def specs(self) -> list[ToolSpec]:
        return [spec_from_function(name, fn, name in self._read_only) for name, fn in self._functions.items()]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        signature = self._signatures[name]
        if signature is not None:  # None: no signature to check against; the call decides
            try:
                signature.bind(**arguments)
            except TypeError as error:
                raise ToolError(f"invalid arguments: {error}") from None
        result = self._functions[name](**arguments)
        if inspect.isawaitable(result):
            result = await result
        return result


class CombinedToolbox:
    """Several toolboxes seen as one; the first that knows a name serves it."""

    def __init__(self, *toolboxes: Toolbox) -> None:
        self.toolboxes = list(toolboxes)

    def __contains__(self, name: object) -> bool:
        return any(name in box for box in self.toolboxes)

    def specs(self) -> list[ToolSpec]:
        seen: set[str] = set()
        specs: list[ToolSpec] = []
        for box in self.toolboxes:
            for spec in box.specs():
                if spec.name not in seen:
                    seen.add(spec.name)
                    specs.append(spec)
        return specs

    async def refresh(self) -> bool:
        """Let each toolbox that can reload what changed (MCP servers' listChanged) do so;
        True when any catalogue changed."""
        changed = False
        for box in self.toolboxes:
            refresh = getattr(box, "refresh", None)
            if refresh is not None and await refresh():
                changed = True
        return changed

    async def settle(self) -> None:
        for box in self.toolboxes:
            await settle(box)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        for box in self.toolboxes:
            if name in box:
                return await box.call(name, arguments)
        raise ToolError(f"there is no tool named {name!r}")


async def settle(tools: object) -> None:
    """Before calls are checked and run: a toolbox whose catalogue came from a cache (MCP
    servers not started yet, `mcp/list_cache.py`) starts them, so names, consent and calls go
    by what the servers list now. Wrappers pass it on; other toolboxes have nothing to do."""
    settling = getattr(tools, "settle", None)
    if settling is not None:
        await settling()


def as_toolbox(tools: Toolbox | Mapping[str, Callable[..., Any]] | None) -> Toolbox:
    """Accept a toolbox, a `{name: callable}` mapping, or None (no tools)."""
    if tools is None:
        return FunctionToolbox({})
    if callable(getattr(tools, "call", None)) and callable(getattr(tools, "specs", None)):
        return tools  # type: ignore[return-value]  # a toolbox by its methods (see loop.as_planner)
    if isinstance(tools, Mapping):
        return FunctionToolbox(tools)
    raise TypeError(f"tools must be a mapping of callables or a toolbox, not {type(tools).__name__}")
