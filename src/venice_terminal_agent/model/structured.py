"""Structured answers (`--schema`): a JSON schema the answer must match.

Sent as the request's `response_format` (`{"type": "json_schema", "json_schema": {"name",
"strict", "schema"}}`) where the model supports it (`supportsResponseSchema` in `/models`);
elsewhere (and under E2EE, where only sealed messages carry anything of ours) the schema goes
in the question instead. Either way the answer is checked here with `jsonschema`, imported
only when a schema is given.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.errors import ConfigError
from ..core.files import read_text
from ..core.receipt import read_json

RETRY = (
    "Your answer does not match the JSON schema: {error}. Answer again with only the JSON value, "
    "matching the schema exactly."
)
ASKING_AGAIN = "the answer did not match --schema: {error}; asking the model once more"
IN_QUESTION = (
    "\n\nAnswer with only a JSON value (no prose, no code fence) that matches this JSON schema:\n{schema}"
)


def load_schema(given: str) -> dict[str, Any]:
    """The schema from `--schema JSON` or `--schema @FILE`; `ConfigError` if it is not one."""
    where = "--schema"
    text = given
    if given.startswith("@"):
        where = f"--schema {given}"
        text = read_text(given[1:], where)
    try:
        schema = read_json(text)
    except ValueError as error:
        raise ConfigError(f"{where}: not JSON ({error}); give a JSON schema or @FILE") from None
    if not isinstance(schema, dict):
        raise ConfigError(f"{where}: a JSON schema is an object, not {type(schema).__name__}")
    from jsonschema import SchemaError, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as error:
        raise ConfigError(f"{where}: not a valid JSON schema ({error.message})") from None
    problem = unresolved(schema)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return schema


def _registry(schema: dict[str, Any]) -> Any:
    """The schema as the only resource its references may reach: a registry of its own, whose
    default retrieval refuses, so a reference to anything else (an `http://` URL, a file) is
    never fetched (jsonschema's deprecated resolution fetched it), as the MCP SDK does too."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    return Registry().with_resource(resource.id() or "", resource)


def unresolved(schema: dict[str, Any]) -> str | None:
    """Why a `$ref` of the schema cannot be followed within it, or None: a remote one is not
    fetched, a local one must point at a part of the schema."""
    from referencing.exceptions import Unresolvable

    resolver = _registry(schema).resolver(
        base_uri=schema.get("$id") if isinstance(schema.get("$id"), str) else ""
    )
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str):
                try:
                    resolver.lookup(reference)
                except Unresolvable:
                    where = (
                        "points outside the schema, and a schema is never fetched"
                        if _remote(reference)
                        else "points at nothing in the schema"
                    )
                    return f"$ref {reference!r} {where}; put what it names under $defs and refer to it as #/$defs/…"
            stack.extend(node.values())
    return None


def _remote(reference: str) -> bool:
    return not reference.startswith("#")


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}


def in_question(schema: dict[str, Any]) -> str:
    """What is added to the question when the schema cannot go as `response_format`."""
    return IN_QUESTION.format(schema=json.dumps(schema, ensure_ascii=False))


def check(answer: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The answer parsed, and None; or None and why it does not match the schema."""
    from jsonschema import validators
    from jsonschema.exceptions import best_match

    text = answer.strip()
    if text.startswith("```"):  # a fenced answer is the JSON inside the fence
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = read_json(text)
    except ValueError as error:
        return None, f"it is not JSON ({error})"
    from referencing.exceptions import Unresolvable

    try:
        validator = validators.validator_for(schema)(schema, registry=_registry(schema))
        problem = best_match(validator.iter_errors(value))
    except (Unresolvable, RecursionError) as error:  # refused up front (`load_schema`); a safety net
        return None, f"the schema cannot be checked ({error.__class__.__name__})"
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path) or "the top level"
        return None, f"at {where}: {problem.message}"
    return value, None
