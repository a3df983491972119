"""The bot's planner when no model is configured: one command per line.

    page id=3                 key=value arguments (values read as JSON when they are: 3, true, "a b")
    read_file path=README.md
    tool {"json": "args"}     arguments as one JSON object
    help                      what the bot understands (no call)

Each command is one call; after the last one the answer is the results. A line that names
no tool and has no arguments that parse is prose, answered with a pointer to `help`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Container, Sequence
from typing import Any

from ..core.loop import Move, Outcome
from ..core.receipt import Answer, Call, read_json
from ..core.wording import plural

HELP_WORDS = frozenset({"help", "/help", "?"})


def parse_line(line: str, known: Container[str]) -> Call | None:
    """The call a line asks for, or None when the line is prose."""
    name, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if not rest:
        return Call(name)
    try:
        return Call(name, _arguments(rest))
    except ValueError as error:
        if name in known:
            return Call(name, malformed=f"could not read the arguments ({error}); {USAGE}")
        return None


USAGE = 'write them as key=value pairs or one JSON object, e.g. read_file path=README.md or page {"id": 3}'


def _arguments(text: str) -> dict[str, Any]:
    if text.startswith("{"):
        try:
            value = read_json(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"not JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(value, dict):
            raise ValueError("the JSON arguments must be an object")
        return value
    arguments: dict[str, Any] = {}
    # shlex only when quoting is used: it is slow, and most commands are plain key=value words.
    tokens = shlex.split(text) if any(c in text for c in "\"'\\") else text.split()
    for token in tokens:
        key, equals, raw = token.partition("=")
        if not equals or not key.isidentifier():
            raise ValueError(f"{token!r} is not key=value")
        arguments[key] = _value(raw)
    return arguments


def _value(raw: str) -> Any:
    try:
        value = read_json(raw)
    except json.JSONDecodeError:
        return raw
    # Only plain scalars and containers read as JSON; a bare word stays the text it is.
    return value if isinstance(value, int | float | bool | list | dict) or value is None else raw


def help_text(tool_names: Sequence[str], calls_per_window: int, per_window: str) -> str:
    """What the bot understands. It states the chat's limit, never a count of calls left: the
    status line under the reply says that, and the two must not disagree."""
    tools = ", ".join(sorted(tool_names)) or "none"
    return (
        "Without a model I plan from commands, one per line:\n"
        "  read_file path=README.md   a text file under the working folder\n"
        "  list_files path=.          the files of a folder\n"
        "  page id=3                  one page of a long result cut earlier in this chat\n"
        '  TOOL {"key": "value"}      any tool, with JSON arguments\n'
        "  help                       this text (no call)\n"
        f"Each command is one tool call; a chat may make {plural(calls_per_window, 'tool call')} "
        f"{per_window} (the last line of every reply says how many are left), and repeating "
        "your previous message is free.\n"
        f"Tools: {tools}"
    )


class CommandPlanner:
    """A `Planner` for one message: its commands as calls, then the results as the answer."""

    recovers = False

    def __init__(self, text: str, tool_names: Sequence[str], help_words: str) -> None:
        self.steps: list[Call | Answer] = []
        known = frozenset(tool_names)
        lines = [line for line in text.splitlines() if line.strip()]
        for line in lines:
            if line.strip().lower() in HELP_WORDS:
                self.steps = [Answer(help_words)]
                break
            call = parse_line(line, known)
            if call is None:
                self.steps = [Answer(f"I did not understand {line.strip()!r} as a command.\n{help_words}")]
                break
            self.steps.append(call)
        if not lines:
            self.steps = [Answer(help_words)]
        self._position = 0
        self._results: list[Outcome] = []

    @property
    def calls_needed(self) -> int:
        """How many calls this plan can make at most (what the bot reserves)."""
        return sum(isinstance(step, Call) for step in self.steps)

    async def next(self, outcomes: Sequence[Outcome]) -> Move:
        self._results.extend(outcomes)
        if self._position < len(self.steps):
            step = self.steps[self._position]
            self._position += 1
            return step
        return Answer(results_text([(o.call.tool, o.result) for o in self._results if o.ran]))


def show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, default=str)


def results_text(results: Sequence[tuple[str, Any]]) -> str:
    """One result as itself; several, each under its tool's name."""
    if len(results) == 1:
        return show(results[0][1])
    return "\n\n".join(f"{tool}:\n{show(result)}" for tool, result in results)
