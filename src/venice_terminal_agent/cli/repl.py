"""The conversation: a prompt_toolkit prompt, slash commands, one question at a time.

Ctrl+C while a question runs cancels that question only: the agent rolls the conversation
back to what it was before the question, and the prompt comes back. Ctrl+C on an empty
prompt, Ctrl+D, or /quit leaves. The prompt history stays in memory unless --save-history.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.text import Text

from ..events import EventSink
from ..receipt import Receipt
from .ask_cmd import cancellable, cancelled_receipt
from .render import Renderer, balance_line, receipt_json, tools_table
from .text import safe

APP_NAME = "venice-agent"
HISTORY_FILE = "history"
PROMPT = "› "

HELP = """\
/help     this list
/tools    the tools loaded, marked free (runs without asking) or asks (needs your yes)
/reload   list the tools again (picks up Actors added to your account meanwhile)
/receipt  the last question's receipt in full (JSON)
/clear    forget the conversation so far
/quit     leave (also Ctrl+D, or Ctrl+C on an empty prompt)
Ctrl+C while a question runs cancels it; the conversation stays as it was before it."""


class Asker(Protocol):
    """What the REPL needs from the agent."""

    tools: Any

    async def ask(
        self, question: str, *, events: EventSink | None = None, budget: int | None = None
    ) -> Receipt: ...

    def clear(self) -> None: ...


ReadLine = Callable[[], Awaitable[str]]  # raises EOFError to leave


@dataclass
class Repl:
    agent: Asker
    console: Console
    read_line: ReadLine
    reload: Callable[[], Awaitable[Any]] | None = None
    budget: int | None = None
    echo: bool = False  # questions read from a pipe are shown before their answers
    last: Receipt | None = None
    commands: dict[str, Callable[[], Awaitable[bool]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.commands = {
            "/help": self._help,
            "/tools": self._tools,
            "/reload": self._reload,
            "/receipt": self._receipt,
            "/clear": self._clear,
            "/quit": self._quit,
            "/exit": self._quit,
        }

    async def run(self) -> None:
        while True:
            try:
                line = await self.read_line()
            except (EOFError, KeyboardInterrupt):
                return
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not await self.command(text):
                    return
                continue
            await self.question(text)

    async def question(self, text: str) -> Receipt:
        if self.echo:
            self.console.print(Text(f"{PROMPT}{safe(text)}", style="bold"), soft_wrap=True)
        renderer = Renderer(self.console)
        try:
            receipt = await cancellable(self.agent.ask(text, events=renderer, budget=self.budget))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the REPL itself is being shut down
            receipt = cancelled_receipt()  # cancelled before the agent started: nothing to undo
            renderer.finish(receipt)
        renderer.close()
        self.last = receipt
        return receipt

    async def command(self, text: str) -> bool:
        """Run a slash command; False means leave."""
        name = text.split()[0].lower()
        handler = self.commands.get(name)
        if handler is None:
            self.console.print(Text(f"unknown command {safe(name)}; /help lists them", style="yellow"))
            return True
        return await handler()

    async def _help(self) -> bool:
        self.console.print(HELP)
        return True

    async def _tools(self) -> bool:
        tools_table(self.console, self.agent.tools.specs())
        return True

    async def _reload(self) -> bool:
        if self.reload is None:
            self.console.print("nothing to reload")
            return True
        before = {spec.name for spec in self.agent.tools.specs()}
        try:
            await self.reload()
        except Exception as error:  # a server gone away: say so, keep the old catalogue
            self.console.print(Text(f"reload failed: {safe(str(error))}", style="red"), soft_wrap=True)
            return True
        after = {spec.name for spec in self.agent.tools.specs()}
        added, gone = sorted(after - before), sorted(before - after)
        change = "".join(
            [f"; new: {', '.join(added)}" if added else "", f"; gone: {', '.join(gone)}" if gone else ""]
        )
        self.console.print(f"{len(after)} tools{safe(change) or '; no change'}")
        return True

    async def _receipt(self) -> bool:
        if self.last is None:
            self.console.print("no question asked yet")
        else:
            self.console.print(safe(receipt_json(self.last)))
            if balance_line(self.last.balance):
                self.console.print(f"balance: {balance_line(self.last.balance)}")
        return True

    async def _clear(self) -> bool:
        self.agent.clear()
        self.last = None
        self.console.print("conversation cleared")
        return True

    async def _quit(self) -> bool:
        return False


def history_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / HISTORY_FILE


def reads_a_pipe() -> bool:
    """Questions come from a pipe or a file (`venice-agent < questions.txt`), not a person."""
    return not (sys.stdin.isatty() and sys.stdout.isatty())


def terminal_reader(*, save_history: bool) -> ReadLine:
    """`prompt_async` with history (in memory unless asked) and Ctrl+C that clears or leaves.

    Without a terminal (`venice-agent < questions.txt`) lines are read plainly, one question
    each, with no prompt drawn and no history kept.
    """
    if reads_a_pipe():
        return piped_reader()
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    if save_history:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(path))
    else:
        history = InMemoryHistory()

    keys = KeyBindings()

    @keys.add("c-c")
    def _interrupt(event: Any) -> None:
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()  # Ctrl+C with something typed: start the line over
        else:
            event.app.exit(exception=KeyboardInterrupt())  # on an empty prompt: leave

    session: Any = PromptSession(history=history, key_bindings=keys)

    async def read_line() -> str:
        return await session.prompt_async(PROMPT)

    return read_line


def piped_reader() -> ReadLine:
    """Lines from a pipe or a file, read on a daemon thread so Ctrl+C never waits on it."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)
        except (RuntimeError, OSError, ValueError):
            pass  # the program is leaving (loop closed) or stdin went away

    threading.Thread(target=pump, name="stdin lines", daemon=True).start()

    async def read_line() -> str:
        line = await lines.get()
        if line is None:
            raise EOFError
        return line

    return read_line
