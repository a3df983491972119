"""A server asks the person something (MCP elicitation): a small form on the terminal.

First the server's message and a choice: fill in (y), decline (n), or Enter to cancel. Then one
line per field, built from the requested schema: its title, the choices of an enum, the
default in brackets (Enter keeps it), yes/no for a boolean; a value that does not fit the type
is asked again. Ctrl+C or end of input at any point cancels. A URL request shows the URL and
waits for the go-ahead before opening it. Only built where a person can answer: without a
terminal, in the bot and under `--yes` every request is declined (`mcp/features.py`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TextIO, cast

from ...mcp.features import Action, Elicitor, Form, FormField
from ..text import safe
from .approver import AskLine, prompt_on
from .plain_console import say

if TYPE_CHECKING:
    from rich.console import Console

TRIES = 3


def terminal_elicitor(console: Console, ask_line: AskLine | None = None) -> Elicitor:
    ask = ask_line or prompt_on(cast(TextIO, console.file))  # Rich types it IO[str]
    one_at_a_time = asyncio.Lock()

    async def elicit(form: Form) -> tuple[Action, dict[str, Any] | None]:
        async with one_at_a_time:
            try:
                return await _elicit(console, ask, form)
            except (KeyboardInterrupt, EOFError):
                say(console, f"cancelled {safe(form.server)}'s request", "dim")
                return "cancel", None

    return elicit


async def _elicit(console: Console, ask: AskLine, form: Form) -> tuple[Action, dict[str, Any] | None]:
    say(console, f"{safe(form.server)} asks: {safe(form.message)}", "yellow")
    if form.url is not None:
        say(console, f"  {safe(form.url)}")
        if (await ask("Open this URL? [y/N] ")).strip().lower() not in ("y", "yes"):
            return "decline", None
        import webbrowser

        await asyncio.to_thread(webbrowser.open, form.url)
        return "accept", None
    answer = (await ask("Answer? [y = fill in, n = decline, Enter = cancel] ")).strip().lower()
    if answer in ("n", "no"):
        return "decline", None
    if answer not in ("y", "yes"):
        return "cancel", None
    values: dict[str, Any] = {}
    for field in form.fields:
        value = await _ask_field(console, ask, field)
        if value is not None:
            values[field.name] = value
    return "accept", values


async def _ask_field(console: Console, ask: AskLine, field: FormField) -> Any:
    hints = [" / ".join(field.choices)] if field.choices else []
    hints += ["y/n"] if field.kind == "boolean" else []
    hints += ["several, separated by commas"] if field.kind == "array" else []
    # Titles, choices and defaults are the server's text: shown, never obeyed (fronts/text.py).
    question = safe(field.title + (f" ({', '.join(hints)})" if hints else ""))
    question += f" [{_shown(field.default)}]" if field.default is not None else ""
    if field.description:
        say(console, f"  {safe(field.description)}", "dim")
    for _ in range(TRIES):
        text = (await ask(f"  {question}: ")).strip()
        if not text:
            if field.default is not None or not field.required:
                return None  # the default is filled in by the caller
            say(console, "  this one is required", "yellow")
            continue
        value, problem = parse(field, text)
        if problem is None:
            return value
        say(console, f"  {safe(problem)}", "yellow")  # it quotes the choices
    raise EOFError  # three wrong answers: the person is not getting through, cancel


def parse(field: FormField, text: str) -> tuple[Any, str | None]:
    """`text` as the field's type, or why it is not one."""
    if field.kind == "array":
        items = [item.strip() for item in text.split(",") if item.strip()]
        wrong = [item for item in items if field.choices and item not in field.choices]
        return (None, f"each one of: {', '.join(field.choices)}") if wrong else (items, None)
    if field.choices and text not in field.choices:
        return None, f"one of: {', '.join(field.choices)}"
    if field.kind == "boolean":
        lowered = text.lower()
        if lowered in ("y", "yes", "true"):
            return True, None
        if lowered in ("n", "no", "false"):
            return False, None
        return None, "y or n"
    if field.kind in ("integer", "number"):
        try:
            return (int(text) if field.kind == "integer" else float(text)), None
        except ValueError:
            return None, f"a{'n integer' if field.kind == 'integer' else ' number'}, e.g. 3"
    return text, None


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return safe(", ".join(str(item) for item in value))
    return safe(str(value))


def terminal_features(*, yes: bool, root: Any = None, model: bool = False, person: bool = True) -> Any:
    """What the session's MCP client offers: the form on stderr when a person is there and no
    `--yes` (which never answers a server's question), sampling under the same condition and
    only with a `model` to ask, and the file root as the default root (`roots_for` chooses per
    server). `person` False: nobody answers at this terminal for the session (`serve`)."""
    import sys
    from pathlib import Path

    from ...mcp.features import ClientFeatures
    from ...mcp.sampling_model import SamplingDesk
    from .approver import has_terminal
    from .render import make_console

    person = person and not yes and has_terminal(sys.stderr)
    elicitor = terminal_elicitor(make_console(stderr=True)) if person else None
    desk = SamplingDesk() if person and model else None
    return ClientFeatures(elicitor=elicitor, roots=(Path(root or "."),), sampling=desk)
