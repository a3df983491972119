"""What a person sees: the banner, streamed text, tool calls, the spinner, the receipt line.

Everything the model or a tool wrote goes through `safe()` and is printed with Rich markup,
emoji codes and highlighting off, so `[brackets]` print literally and an escape sequence
from a model or a tool is shown, never obeyed. Our own decorations use `Text` styles only,
through `plain_console.say`: into a pipe or a file the console is a plain one that never
imports Rich (issue 21), and a style writes nothing there.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, cast

from ...core.events import (
    ConsentAsked,
    Event,
    Finished,
    Notice,
    RoundStarted,
    TextDelta,
    TextDiscarded,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from ...core.receipt import Exit, Receipt
from ...core.scrub import writes_utf8
from ...core.toolbox import ToolSpec
from ...core.wording import EMPTY_RESPONSE
from ..text import CONSENT_KEY, call_text, preview, safe, tool_rows
from .plain_console import PlainConsole, plain_target, say

if TYPE_CHECKING:
    from rich.console import Console

RESULT_PREVIEW = 120


def make_console(file: IO[str] | None = None, *, stderr: bool = False, width: int | None = None) -> Console:
    """A console that never interprets what it prints: no markup, no emoji codes, no highlighting.

    Into a pipe or a file nothing is wrapped (a URL cut at column 80 is a broken URL); on a
    terminal, lines wrap at its width, continued under their text (`hanging`). Where Rich would
    write as into a pipe, the console is a `PlainConsole`: the same bytes, without Rich's import."""
    if plain_target(file, stderr):
        # It stands in for a Console: the strings it prints itself, the rest through a real one.
        return cast("Console", PlainConsole(file, stderr=stderr, width=width))
    from rich.console import Console

    console = Console(file=file, stderr=stderr, width=width, markup=False, emoji=False, highlight=False)
    console.soft_wrap = not console.is_terminal
    return console


def hanging(console: Console, head: str, body: str, style: str | None = None, gap: int = 1) -> None:
    """`head body` on one line; on a terminal a long body wraps under its own first character."""
    if console.soft_wrap:  # a pipe or a file: one line, whatever its length
        say(console, f"{head}{' ' * gap}{body}", style or "", soft_wrap=True)
        return
    from rich.cells import cell_len
    from rich.text import Text

    indent = " " * (cell_len(head) + gap)
    lines = Text(body).wrap(console, max(20, console.width - len(indent)))
    for number, line in enumerate(lines):
        start = f"{head}{' ' * gap}" if number == 0 else indent
        console.print(Text(start + line.plain.rstrip(), style=style or ""), soft_wrap=True)


def progress_text(event: ToolProgress) -> str:
    """`Analyzing content (2 of 5)`: the server's message and count, on one short line."""
    count = ""
    if event.progress is not None:
        count = f"{event.progress:g} of {event.total:g}" if event.total else f"{event.progress:g}"
    message = preview(event.message or "", 80)
    if message and count:
        return f"{message} ({count})"
    return message or count or "working"


def running_text(tool: str, event: ToolProgress | None = None) -> str:
    """The spinner's words while a tool runs: `running wait…`, `running wait: 2 of 5…`."""
    return f"running {safe(tool)}: {progress_text(event)}…" if event else f"running {safe(tool)}…"


class Renderer:
    """An event sink that draws one question as it runs.

    A spinner shows while waiting for the model's first token and while tools run; it stops
    before anything else is printed (text, a tool line, a consent prompt). The answer and the
    receipt line go to `out` (default: `console`), so a one-shot question can keep stdout for
    them alone and show its progress on stderr.
    """

    def __init__(self, console: Console, out: Console | None = None, *, quiet_thinking: bool = False) -> None:
        self.console = console
        self.out = out or console
        # The model's thinking streams dimmed on a terminal; elsewhere, or when asked, one line.
        self.show_thinking = console.is_terminal and not quiet_thinking
        self._thinking = False  # thinking text is being shown, its line still open
        self._thought = 0  # characters of thinking in this question
        self._status: Any = None  # rich Status, created on first use
        self._running = 0  # tools started and not finished yet
        self._at_line_start = True
        self._streamed = False  # text streamed in the current round

    # -- the event sink -------------------------------------------------------------------
    def __call__(self, event: Event) -> None:
        if isinstance(event, RoundStarted):
            self._streamed = False
            self.spin("thinking…")
        elif isinstance(event, ThinkingDelta):
            self._thought += len(event.text)
            if self.show_thinking and event.text:
                self._stop_spinner()
                if not self._thinking:
                    self._end_line()
                    self._thinking = True
                say(self.console, safe(event.text), "dim", end="", soft_wrap=True)
                self.console.file.flush()
        elif isinstance(event, TextDelta):
            self._stop_spinner()
            self._end_thinking()
            if event.text:
                self._write(safe(event.text))
                self._streamed = True
        elif isinstance(event, TextDiscarded):
            self._stop_spinner()
            self._end_thinking()
            self._end_line()
            say(self.out, "(the reply was cut; retrying…)", "dim")  # beside the cut text
            self._streamed = False
        elif isinstance(event, ConsentAsked):
            self._stop_spinner()
            self._end_line()
        elif isinstance(event, ToolStarted):
            self._stop_spinner()
            self._end_thinking()
            self._end_line()
            hanging(self.console, "→", call_text(event.call.tool, event.call.arguments), "cyan")
            self._running += 1
            self.spin(running_text(event.call.tool))
        elif isinstance(event, ToolProgress):
            if self._running:
                self.spin(running_text(event.call.tool, event))
        elif isinstance(event, ToolFinished):
            self._running = max(0, self._running - 1)
            if self._running == 0:
                self._stop_spinner()
            self._show_tool_result(event)
        elif isinstance(event, Notice):
            self._stop_spinner()
            self._end_line()
            say(self.console, safe(event.text), "yellow", soft_wrap=True)
        elif isinstance(event, Finished):
            self.finish(event.receipt)

    def finish(self, receipt: Receipt) -> None:
        """The answer when it was not streamed, the refusal, and the one-line receipt."""
        self._stop_spinner()
        self._end_thinking()
        self._running = 0
        if self._thought and not self.show_thinking:
            self._end_line()
            say(self.console, thought_line(receipt, self._thought), "dim")
        if receipt.answer is not None and not receipt.answer.strip():
            self._end_line()
            say(self.out, EMPTY_RESPONSE, "dim")  # never a blank line for an answer
        elif receipt.answer is not None and not self._streamed:
            self._write(safe(receipt.answer))
        self._end_line()
        if receipt.sources:
            say(self.out, "Sources:", "bold")
            for number, source in enumerate(receipt.sources, 1):
                title = safe(source.get("title") or source.get("url", ""))
                say(self.out, f"  [{number}] {title} — {safe(source.get('url', ''))}", soft_wrap=True)
        if receipt.refusal is not None and receipt.stopped_because is not Exit.ANSWERED:
            # Why it stopped is a warning: on stderr beside the progress (a one-shot's stdout
            # holds the answer and the receipt line alone).
            say(self.console, safe(receipt.refusal), "yellow", soft_wrap=True)
        say(self.out, safe(receipt.summary()), "dim")  # a tool's name is a server's text

    def close(self) -> None:
        self._stop_spinner()
        self._end_line()

    # -- pieces -----------------------------------------------------------------------------
    def _show_tool_result(self, event: ToolFinished) -> None:
        self._end_line()
        if event.error is not None:
            hanging(self.console, "  ✗", preview(event.error, RESULT_PREVIEW), "red")
        else:
            hanging(self.console, "  ✓", preview(event.result, RESULT_PREVIEW), "dim")

    def _write(self, text: str) -> None:
        self.out.print(text, end="", markup=False, emoji=False, highlight=False, soft_wrap=True)
        self.out.file.flush()
        self._at_line_start = text.endswith("\n")

    def _end_thinking(self) -> None:
        if self._thinking:
            self.console.print()
            self._thinking = False

    def _end_line(self) -> None:
        if not self._at_line_start:
            self.out.print()
            self._at_line_start = True

    def spin(self, message: str) -> None:
        """The spinner, on a terminal only, with `message` beside it."""
        if not self.console.is_terminal:
            return  # a spinner in a pipe or a file is noise
        from rich.text import Text

        if self._status is None:
            self._status = self.console.status(Text(message, style="dim"), spinner="dots")
            self._status.start()
        else:
            self._status.update(Text(message, style="dim"))

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


def thought_line(receipt: Receipt, characters: int) -> str:
    """`thought for 1.2k tokens`: the reasoning tokens the server counted, else the length."""
    from ...core.context import short

    details = (receipt.usage or {}).get("completion_tokens_details")
    counted = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if isinstance(counted, int) and counted > 0:
        return f"thought for {short(counted)} tokens"
    return f"thought for {short(characters)} characters"


def balance_line(balance: dict[str, str] | None) -> str | None:
    """`$12.50 · 3 DIEM`, from Venice's balance headers; None when it sent none."""
    if not balance:
        return None
    parts = [
        f"${safe(balance['usd'])}" if "usd" in balance else "",
        f"{safe(balance['diem'])} DIEM" if "diem" in balance else "",
    ]
    return " · ".join(part for part in parts if part)


def banner(
    console: Console,
    *,
    model: str,
    apify: str,
    tools: Sequence[ToolSpec],
    repl: bool = False,
    balance: dict[str, str] | None = None,
    files: str | None = None,
    no_tools: str | None = None,
    context: str | None = None,
    searched: str | None = None,
) -> None:
    """Model, Apify mode, the tools, the context window and the account's balance, before the
    first question."""
    names = [safe(spec.name) for spec in tools]
    shown = ", ".join(names[:8]) + (f", … ({len(names)} in all)" if len(names) > 8 else "")
    say(console, "venice-agent", "bold")
    hanging(console, "  model", safe(model), gap=2)
    if context:
        hanging(console, "  context", context, gap=2)
    hanging(console, "  apify", apify, gap=2)
    hanging(console, "  tools", no_tools or shown or "none", gap=2)
    if searched and not no_tools:
        hanging(console, "  search", searched, gap=2)
    if files:
        say(console, f"  files  {files}", soft_wrap=True)  # a path broken in two is no path
    if line := balance_line(balance):
        hanging(console, "  balance", line, gap=2)
    if repl:
        say(console, "  /help for commands · Ctrl+C cancels a question · Ctrl+D leaves", "dim")


def tools_table(console: Console, tools: Sequence[ToolSpec]) -> None:
    """The catalogue with consent marks: it explains odd tool choices."""
    if not tools:
        console.print("no tools loaded")
        return
    for mark, name, description in tool_rows(tools, 80):
        line = [(f"{mark} ", ""), (f"{name}  ", ""), (description, "dim")]
        say(console, line, "green" if mark == "free" else "yellow", overflow="ellipsis", no_wrap=True)
    say(console, CONSENT_KEY, "dim")


def receipt_json(receipt: Receipt) -> str:
    """The receipt as --json prints it: its text as is, or escaped (`\\u00b7`) where stdout
    cannot write UTF-8, so that no character of it is lost to a `?`."""
    return json.dumps(receipt.to_dict(), ensure_ascii=not writes_utf8(sys.stdout), indent=2)
