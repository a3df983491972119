"""The conversation: a prompt_toolkit prompt, slash commands, one question at a time.

Ctrl+C while a question runs cancels that question only: the agent rolls the conversation
back to what it was before the question, and the prompt comes back. Ctrl+C on an empty
prompt, Ctrl+D, or /quit leaves. The prompt history stays in memory unless --save-history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rich.console import Console
from rich.text import Text

from ...core.events import EventSink
from ...core.receipt import Receipt
from ..text import catalogue_searched, safe, server_place
from .console_io import PROMPT, ReadLine, cancellable, cancelled_receipt
from .render import Renderer, balance_line, receipt_json, tools_table

HELP = """\
/help     this list
/tools    the tools loaded, marked free (runs without asking) or asks (needs your yes),
          and whether the catalogue is searched (docs/tools.md: Tool search)
/reload   list the tools again (picks up Actors added to your account meanwhile)
/resources  the MCP servers' resources (the model reads one with read_resource)
/prompts  the MCP servers' prompts and their arguments
/prompt NAME key=value …  ask one of those prompts as the next question
/receipt  the last question's receipt in full (JSON)
/compact [focus]  summarise the older rounds now, to free the context window (docs/asking.md: Long conversations)
/clear    forget the conversation so far (a saved session stays as it was)
/save     save this conversation and keep saving it (docs/sessions.md)
/sessions this folder's saved sessions
/title TEXT  the saved session's title
/quit     leave (also Ctrl+D, or Ctrl+C on an empty prompt)
Ctrl+C while a question runs cancels it; the conversation stays as it was before it."""


class Asker(Protocol):
    """What the REPL needs from the agent."""

    tools: Any

    async def ask(
        self, question: str, *, events: EventSink | None = None, budget: int | None = None
    ) -> Receipt: ...

    def clear(self) -> None: ...


@dataclass
class Repl:
    agent: Asker
    console: Console
    read_line: ReadLine
    reload: Callable[[], Awaitable[Any]] | None = None
    mcp: Any = None  # the MCP toolbox, for /resources, /prompts and /prompt
    budget: int | None = None
    echo: bool = False  # questions read from a pipe are shown before their answers
    # Progress, warnings and why something failed (stderr when read from a pipe, so stdout
    # holds the answers and receipts alone); None: `console`.
    warnings: Console | None = None
    last: Receipt | None = None
    commands: dict[str, Callable[[str], Awaitable[bool]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.commands = {
            "/help": self._help,
            "/tools": self._tools,
            "/reload": self._reload,
            "/receipt": self._receipt,
            "/resources": self._resources,
            "/prompts": self._prompts,
            "/prompt": self._prompt,
            "/compact": self._compact,
            "/clear": self._clear,
            "/save": self._save,
            "/sessions": self._sessions,
            "/title": self._title,
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

    async def question(self, text: str, *, echo: bool = True) -> Receipt:
        if self.echo and echo:
            self.console.print(Text(f"{PROMPT}{safe(text)}", style="bold"), soft_wrap=True)
        renderer = Renderer(self.warn_to, self.console)
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

    @property
    def warn_to(self) -> Console:
        return self.warnings or self.console

    async def command(self, text: str) -> bool:
        """Run a slash command; False means leave."""
        name, _, rest = text.strip().partition(" ")
        handler = self.commands.get(name.lower())
        if handler is None:
            from ...core.wording import did_you_mean, near_misses

            close = did_you_mean(near_misses(name, self.commands))
            said = f"{close} (/help lists them)" if close else "/help lists them"
            self.warn_to.print(Text(f"unknown command {safe(name)}; {said}", style="yellow"))
            return True
        return await handler(rest.strip())

    async def _resources(self, _: str) -> bool:
        from .repl_mcp import show_resources

        await show_resources(self.console, self.mcp)
        return True

    async def _prompts(self, _: str) -> bool:
        from .repl_mcp import show_prompts

        await show_prompts(self.console, self.mcp)
        return True

    async def _prompt(self, line: str) -> bool:
        """Fetch the prompt and ask it: its messages are the question, shown before the answer."""
        from ...core.errors import ToolError
        from .repl_mcp import prompt_question

        try:
            text = await prompt_question(self.mcp, line)
        except ToolError as error:
            self.warn_to.print(Text(safe(error.message), style="yellow"), soft_wrap=True)
            return True
        self.console.print(Text(f"{PROMPT}{safe(text)}", style="dim"), soft_wrap=True)
        await self.question(text, echo=False)
        return True

    async def _help(self, _: str) -> bool:
        self.console.print(HELP)
        return True

    async def _tools(self, _: str) -> bool:
        tools_table(self.console, self.agent.tools.specs())
        if searched := catalogue_searched(self.agent.tools):
            self.console.print(Text(searched, style="dim"), soft_wrap=True)
        for box in getattr(self.agent.tools, "toolboxes", ()):  # each MCP server, and how it speaks
            for status in getattr(box, "servers", ()):
                self.console.print(Text(f"{safe(status.name)}: {server_place(status)}", style="dim"))
        return True

    async def _reload(self, _: str) -> bool:
        if self.reload is None:
            self.console.print("nothing to reload")
            return True
        before = {spec.name for spec in self.agent.tools.specs()}
        try:
            await self.reload()
        except Exception as error:  # a server gone away: say so, keep the old catalogue
            self.warn_to.print(Text(f"reload failed: {safe(str(error))}", style="red"), soft_wrap=True)
            return True
        after = {spec.name for spec in self.agent.tools.specs()}
        added, gone = sorted(after - before), sorted(before - after)
        change = "".join(
            [f"; new: {', '.join(added)}" if added else "", f"; gone: {', '.join(gone)}" if gone else ""]
        )
        self.console.print(f"{len(after)} tools{safe(change) or '; no change'}")
        return True

    async def _receipt(self, _: str) -> bool:
        if self.last is None:
            self.console.print("no question asked yet")
        else:
            self.console.print(safe(receipt_json(self.last)))
            if balance_line(self.last.balance):
                self.console.print(f"balance: {balance_line(self.last.balance)}")
        return True

    async def _compact(self, focus: str) -> bool:
        compact = getattr(self.agent, "compact", None)
        if compact is None:
            self.warn_to.print("compacting is not available here")
            return True
        try:
            said = await cancellable(compact(focus or None))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            said = "not compacted: cancelled"
        # Compacted or not, a notice: with the progress, not among the answers.
        self.warn_to.print(Text(safe(said), style="dim" if said.startswith("compacted") else "yellow"))
        return True

    async def _clear(self, _: str) -> bool:
        self.agent.clear()
        self.last = None
        self.console.print("conversation cleared")
        return True

    async def _save(self, _: str) -> bool:
        self.console.print(Text(safe(await self._saver("save_command")())), soft_wrap=True)
        return True

    async def _sessions(self, _: str) -> bool:
        for line in await self._saver("sessions_command")():
            self.console.print(Text(safe(line)), soft_wrap=True)
        return True

    async def _title(self, text: str) -> bool:
        self.console.print(Text(safe(await self._saver("title_command")(text))), soft_wrap=True)
        return True

    def _saver(self, name: str) -> Callable[..., Awaitable[Any]]:
        """The sessions command of the agent (`fronts/saved_sessions.py`), or one that says there is none."""
        found = getattr(self.agent, name, None)
        if found is not None:
            return found  # type: ignore[no-any-return]

        async def unavailable(*_: Any) -> Any:
            return (
                "sessions are not available here"
                if name != "sessions_command"
                else ["sessions are not available here"]
            )

        return unavailable

    async def _quit(self, _: str) -> bool:
        return False
