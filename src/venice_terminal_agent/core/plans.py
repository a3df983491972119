"""Plan files for `venice-agent run`: JSON read into `Call` and `Answer` steps.

A plan is a list of steps, or an object `{"steps": [...], "budget": N, "page_chars": N}`.
A step is `{"tool": NAME, "arguments": {...}}` or `{"answer": TEXT}`. Anything else is a
`PlanError` with one line that says where and what.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .errors import PlanError
from .receipt import Answer, Call, read_json


@dataclass(frozen=True)
class Plan:
    steps: tuple[Call | Answer, ...]
    budget: int | None = None
    page_chars: int | None = None


def parse_plan(text: str, source: str = "plan") -> Plan:
    try:
        data = read_json(text)
    except json.JSONDecodeError as error:
        raise PlanError(f"{source}: not JSON ({error.msg} at line {error.lineno})") from None
    except ValueError as error:  # nested too deeply
        raise PlanError(f"{source}: not JSON ({error})") from None
    budget = page_chars = None
    if isinstance(data, dict):
        unknown = set(data) - {"steps", "budget", "page_chars", "description"}
        if unknown:
            raise PlanError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}")
        budget = _whole(data.get("budget"), "budget", source, minimum=0)
        page_chars = _whole(data.get("page_chars"), "page_chars", source, minimum=100)
        data = data.get("steps")
    if not isinstance(data, list):
        raise PlanError(f"{source}: a plan is a list of steps or an object with 'steps'")
    steps = tuple(_step(item, f"{source}: step {n}") for n, item in enumerate(data, start=1))
    return Plan(steps, budget, page_chars)


def _step(item: object, where: str) -> Call | Answer:
    if not isinstance(item, dict):
        raise PlanError(f"{where}: a step is an object, not {type(item).__name__}")
    if "answer" in item:
        if set(item) != {"answer"} or not isinstance(item["answer"], str):
            raise PlanError(f'{where}: an answer step is {{"answer": "text"}}')
        return Answer(item["answer"])
    if "tool" in item:
        if set(item) - {"tool", "arguments"}:
            extra = ", ".join(sorted(set(item) - {"tool", "arguments"}))
            raise PlanError(f"{where}: unknown key(s) {extra} in a tool step")
        tool, arguments = item["tool"], item.get("arguments", {})
        if not isinstance(tool, str) or not tool:
            raise PlanError(f"{where}: 'tool' is a non-empty string")
        if not isinstance(arguments, dict):
            raise PlanError(f"{where}: 'arguments' is an object")
        return Call(tool, arguments)
    raise PlanError(f"{where}: unknown step kind (expected 'tool' or 'answer')")


def _whole(value: object, name: str, source: str, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlanError(f"{source}: '{name}' is a whole number >= {minimum}")
    return value
