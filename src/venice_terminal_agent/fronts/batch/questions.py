"""The questions of a batch: a JSONL file, one `{"id": …, "question": …}` a line.

Optional keys on a line: `model`, `system` (an instruction added to the system prompt, as
-s), `max_rounds`, `budget` (tool calls) and `max_usd` (this question's own cap, within the
batch's). Any other key, a line that is not a JSON object, an id given twice or a value of the
wrong type is refused with the line's number, before anything runs (`ConfigError`, status 2).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...core.files import IMPORT_LIMIT, read_bytes, size_text
from ...core.record import Record

LINE_LIMIT = 1024 * 1024  # one question with its document; a longer line is a mistake
ROUNDS = range(1, 41)  # as MAX_ROUNDS
KEYS = ("id", "question", "model", "system", "max_rounds", "budget", "max_usd")


class Question(Record):
    """One line of the file, checked."""

    id: str
    question: str
    line: int
    model: str | None = None
    system: str | None = None
    max_rounds: int | None = None
    budget: int | None = None
    max_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The line as the workflow gets it (its input, stored by DBOS)."""
        fields = {key: getattr(self, key) for key in (*KEYS, "line")}
        return {key: value for key, value in fields.items() if value is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Question:
        return cls(**data)


def read_questions(path: str | Path) -> tuple[list[Question], str]:
    """The questions of the file at `path` and the file's digest (the batch's default name);
    `ConfigError` naming the line for anything wrong."""
    where = str(path)
    data = read_bytes(path, where, IMPORT_LIMIT)
    questions = parse_questions(data, where)
    return questions, hashlib.sha256(data).hexdigest()[:12]


def parse_questions(data: bytes, where: str) -> list[Question]:
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), 1):
        if len(raw) > LINE_LIMIT:
            raise ConfigError(
                f"{where}, line {number}: {size_text(len(raw))}, longer than a line may be "
                f"({size_text(LINE_LIMIT)})"
            )
        if not raw.strip():
            continue
        question = parse_line(raw, f"{where}, line {number}", number)
        if question.id in seen:
            raise ConfigError(
                f"{where}, line {number}: the id {question.id!r} is already the id of line {seen[question.id]}"
            )
        seen[question.id] = number
        questions.append(question)
    if not questions:
        raise ConfigError(f'{where}: no questions (one {{"id": …, "question": …}} a line)')
    return questions


def parse_line(raw: bytes, where: str, number: int) -> Question:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise ConfigError(f"{where}: not UTF-8 text (byte {problem.start})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as problem:
        raise ConfigError(f"{where}: not JSON ({_short(problem)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f'{where}: a line is a JSON object {{"id": …, "question": …}}, not {_kind(data)}')
    unknown = [key for key in data if key not in KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (a line may have: {', '.join(KEYS)})")
    return Question(
        id=_id(data, where),
        question=_text(data, "question", where, required=True) or "",
        line=number,
        model=_text(data, "model", where),
        system=_text(data, "system", where),
        max_rounds=_whole(data, "max_rounds", where, ROUNDS),
        budget=_whole(data, "budget", where, range(0, 10_000)),
        max_usd=_usd(data, where),
    )


def _id(data: dict[str, Any], where: str) -> str:
    value = data.get("id")
    if value is None:
        raise ConfigError(f'{where}: no "id" (each question needs one, unique in the file)')
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ConfigError(f'{where}: "id" is a string or a whole number, not {_kind(value)}')
    text = str(value)
    if not text.strip() or len(text) > 200:
        raise ConfigError(f'{where}: "id" must be 1 to 200 characters, not blank')
    return text


def _text(data: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise ConfigError(f'{where}: no "{key}"')
        return None
    if not isinstance(value, str):
        raise ConfigError(f'{where}: "{key}" is a string, not {_kind(value)}')
    if not value.strip():
        raise ConfigError(f'{where}: "{key}" is empty')
    return value


def _whole(data: dict[str, Any], key: str, where: str, allowed: range) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise ConfigError(
            f'{where}: "{key}" is a whole number from {allowed.start} to {allowed.stop - 1}, not {json.dumps(value)[:40]}'
        )
    return value


def _usd(data: dict[str, Any], where: str) -> float | None:
    value = data.get("max_usd")
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f'{where}: "max_usd" is a positive number of USD, not {json.dumps(value)[:40]}')
    return float(value)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return "a number"


def _short(problem: Exception) -> str:
    return str(problem).split("\n")[0][:120]
