"""Structured answers (`--schema`): a JSON schema the answer must match.

Sent as the request's `response_format` (`{"type": "json_schema", "json_schema": {"name",
"strict", "schema"}}`) where the model supports it (`supportsResponseSchema` in `/models`);
elsewhere (and under E2EE, where only sealed messages carry anything of ours) the schema goes
in the question instead. Either way the answer is checked here with `jsonschema`, imported
only when a schema is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
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
        path = Path(given[1:])
        where = f"--schema {given}"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise ConfigError(f"{where}: cannot read it ({reason.lower()})") from None
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
    return schema


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
    problem = best_match(validators.validator_for(schema)(schema).iter_errors(value))
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path) or "the top level"
        return None, f"at {where}: {problem.message}"
    return value, None
