"""What our MCP client offers a server besides calling its tools: elicitation, sampling, roots.

`ClientFeatures.client_options(config)` is what a session hands to `mcp.Client`; declaring a
callback is what declares the capability. Elicitation is always declared and answered by a
person through `Elicitor` (the terminal form, `fronts/terminal/elicit_form.py`); with nobody to ask (no
terminal, the bot, `--yes`) every request is declined. Sampling is declared only with a
`SamplingDesk` (a person to ask and a model to ask: `sampling.py`), and not to a server
whose entry says `"sampling": false`. Roots are chosen per server (`roots_for`): the folders
its entry names, else the built-in file root, unless its command line names folders of its own.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .sampling import capabilities, sampling
from .sampling_model import SamplingDesk

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class FormField:
    """One top-level property of an elicitation's requested schema."""

    name: str
    kind: Literal["string", "number", "integer", "boolean", "array"]  # array: several choices
    title: str
    description: str = ""
    default: Any = None
    choices: tuple[str, ...] = ()
    required: bool = False


@dataclass(frozen=True)
class Form:
    server: str
    message: str
    fields: tuple[FormField, ...] = ()
    url: str | None = None  # URL mode: the person opens it; nothing is sent back but the action


# A person answering a form: the action and, when accepting a form, the values they gave
# (fields left out take their defaults here, not in the UI).
Elicitor = Callable[[Form], Awaitable[tuple[Action, dict[str, Any] | None]]]


def form_fields(schema: Any) -> tuple[FormField, ...]:
    schema = schema if isinstance(schema, dict) else {}
    required = set(schema.get("required") or [])
    fields = []
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kind: Any = (
            spec.get("type") if spec.get("type") in ("number", "integer", "boolean", "array") else "string"
        )
        items = spec.get("items")
        options: dict[str, Any] = items if kind == "array" and isinstance(items, dict) else spec
        choices = options.get("enum") or [
            option.get("const")
            for option in options.get("oneOf") or options.get("anyOf") or []
            if isinstance(option, dict)
        ]
        fields.append(
            FormField(
                name,
                kind,
                title=str(spec.get("title") or name),
                description=str(spec.get("description") or ""),
                default=spec.get("default"),
                choices=tuple(str(choice) for choice in choices if choice is not None),
                required=name in required,
            )
        )
    return tuple(fields)


def with_defaults(fields: Sequence[FormField], values: dict[str, Any]) -> dict[str, Any]:
    """`values`, plus each field's default where the person gave nothing (SEP-1034)."""
    filled = {f.name: f.default for f in fields if f.default is not None and values.get(f.name) is None}
    return {**{k: v for k, v in values.items() if v is not None}, **filled}


def elicitation(server: str, elicitor: Elicitor | None) -> Callable[..., Awaitable[Any]]:
    async def answer(context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        if elicitor is None:
            return ElicitResult(action="decline")
        if getattr(params, "mode", "form") == "url":
            action, _ = await elicitor(Form(server, params.message, url=params.url))
            return ElicitResult(action=action)
        fields = form_fields(params.requested_schema)
        action, values = await elicitor(Form(server, params.message, fields))
        if action != "accept":
            return ElicitResult(action=action)
        return ElicitResult(action="accept", content=with_defaults(fields, values or {}))

    return answer


def roots_listing(roots: Sequence[Path]) -> Callable[..., Awaitable[Any]]:
    async def listing(context: Any) -> Any:
        from mcp.types import ListRootsResult, Root

        resolved = [root.resolve() for root in roots]
        # FileUrl validates a plain string: the SDK's own examples pass one.
        found = [Root(uri=root.as_uri(), name=root.name or str(root)) for root in resolved]  # type: ignore[arg-type]
        return ListRootsResult(roots=found)

    return listing


def roots_for(config: Any, default: Sequence[Path]) -> tuple[Path, ...]:
    """The folders offered to the server `config` as its MCP roots; () offers none.

    The entry's `roots` when it names them (`[]`: none). Else `default` (the file root), except
    to a stdio server whose arguments name an existing folder: those are its folders, and a
    server such as `@modelcontextprotocol/server-filesystem` would serve the offered roots
    instead of them. Relative folders are taken from the current folder, as `cwd` is.
    """
    roots = getattr(config, "roots", None)
    if roots is not None:
        return tuple(Path(os.path.expanduser(root)) for root in roots)
    if getattr(config, "transport", None) == "stdio":
        # An argument is any string (an inline JSON config, a name longer than a file name may
        # be, a NUL): os.path's tests say False where Path's raise.
        base = os.path.expanduser(getattr(config, "cwd", None) or ".")
        args = [arg for arg in getattr(config, "args", ()) if isinstance(arg, str)]
        if any(os.path.isdir(os.path.join(base, os.path.expanduser(arg))) for arg in args):
            return ()
    return tuple(default)


@dataclass(frozen=True)
class ClientFeatures:
    """The client side of MCP a session offers: who answers elicitations, where sampling
    requests go, which roots."""

    elicitor: Elicitor | None = None
    roots: tuple[Path, ...] = field(default=())
    sampling: SamplingDesk | None = None

    def client_options(self, config: Any) -> dict[str, Any]:
        """The `mcp.Client` callbacks for the server `config` (a `SessionHooks.client_options`)."""
        options: dict[str, Any] = {"elicitation_callback": elicitation(config.name, self.elicitor)}
        if self.sampling is not None and getattr(config, "sampling", True):
            options["sampling_callback"] = sampling(config.name, self.sampling)
            options["sampling_capabilities"] = capabilities()
        roots = roots_for(config, self.roots)
        if roots:  # no callback, no roots capability: the server keeps what it was given
            options["list_roots_callback"] = roots_listing(roots)
        return options
