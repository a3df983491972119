"""The terminal approver: how `consent.Consent` asks a person, on their terminal.

`Consent` decides which calls ask (and handles `--yes`); this only asks, one call at a time,
saying why: the tool may spend money or change things, or it may send local file contents
off this machine. The default is no: Enter alone, Ctrl+C and end of input all mean no. It
asks on the controlling terminal (/dev/tty) whenever there is one, so `venice-agent "q" |
less` or `… > answer.txt` still asks, and the question stays out of the redirected output.
With no terminal at all (cron, CI, a service) it refuses and says so, instead of hanging.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, TextIO, cast

from ...core.consent import Grant, Why
from ...core.receipt import Call, CallOutcome
from ...core.toolbox import ToolSpec
from ...core.wording import LOCAL_DATA, NO_TERMINAL_CONSENT, NO_TERMINAL_LOCAL, NO_TERMINAL_SAMPLING, PAID
from ..text import CONSENT_PREVIEW, call_text, preview, safe
from .plain_console import say

if TYPE_CHECKING:
    from rich.console import Console

    from ...core.consent import Consent
    from ...core.toolbox import Toolbox

FOR_SESSION = "(a = yes to it for this session) "  # offered where a session goes on (the REPL)
SAMPLING_PREVIEW = 400

AskLine = Callable[[str], Awaitable[str]]


def prompt_on(stream: TextIO, keys: TextIO | None = None) -> AskLine:
    """Ask one line on `stream` (stderr under --json), reading `keys` (default stdin), through
    prompt_toolkit, imported when due.

    It asks in the middle of a question, while `cancellable` holds SIGINT: prompt_toolkit's own
    SIGINT handler would replace that one and then remove it, so Ctrl+C would do nothing for
    the rest of the question. Ctrl+C typed at the prompt is a key either way (a no)."""

    async def ask(question: str) -> str:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.input import create_input
        from prompt_toolkit.output import create_output

        source = create_input(stdin=keys) if keys is not None else None
        session: PromptSession[str] = PromptSession(input=source, output=create_output(stdout=stream))
        return await session.prompt_async(question, handle_sigint=False)

    return ask


def has_terminal(stream: IO[str]) -> bool:
    return sys.stdin.isatty() and stream.isatty()


def controlling_terminal() -> TextIO | None:
    """The person's terminal even when stdin or stdout is redirected; None without one."""
    if sys.platform == "win32":
        return None
    try:  # one descriptor, read and written: prompt_toolkit reads its keys from the same fileno
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    return open(fd, "w", encoding="utf-8", errors="replace", buffering=1)


class TerminalApprover:
    """`await approver(call, spec, why) -> bool | CallOutcome`, a `consent.Approver`: without a
    terminal, `CallOutcome.NO_ONE_TO_ASK`, so the model is told nobody was asked."""

    def __init__(
        self,
        console: Console,
        *,
        interactive: bool | None = None,
        ask_line: AskLine | None = None,
        for_session: bool = False,
    ) -> None:
        if interactive is None and not has_terminal(console.file):
            tty = controlling_terminal()  # output or input redirected: ask on the terminal itself
            if tty is not None:
                from .render import make_console

                console, ask_line, interactive = make_console(tty), ask_line or prompt_on(tty, tty), True
        self.console = console
        self.interactive = has_terminal(console.file) if interactive is None else interactive
        self.ask_line = ask_line or prompt_on(cast(TextIO, console.file))  # Rich types it IO[str]
        self._one_at_a_time = asyncio.Lock()
        # A yes for the rest of the session (`a`) is offered where there is one: the REPL.
        self.for_session = for_session

    async def __call__(
        self, call: Call, spec: ToolSpec | None = None, why: Why = Why.PAID
    ) -> bool | CallOutcome | Grant:
        if why is Why.SAMPLING:
            return await self.sampling(call, spec)
        name = safe(call.tool)
        local = why is Why.LOCAL_DATA
        if not self.interactive:
            reason = NO_TERMINAL_LOCAL if local else NO_TERMINAL_CONSENT
            say(self.console, f"skipped {name}: {reason}", "yellow", soft_wrap=True)
            return CallOutcome.NO_ONE_TO_ASK
        async with self._one_at_a_time:
            shown = call_text(call.tool, call.arguments, CONSENT_PREVIEW)
            if local:
                question = f"{shown} {LOCAL_DATA}. Run it? [y/N] "
            else:
                where = f" on {safe(spec.server)}" if spec is not None and spec.server else ""
                say(
                    self.console,
                    f"{name}{where} {PAID}.",
                    "yellow",
                )
                question = f"Run {shown}? [y/N] "
            if not self.for_session:
                return await self._yes(question, f"declined {name}")
            answer = await self._yes(question + FOR_SESSION, f"declined {name}", granted=True)
            if answer is Grant.SESSION:
                say(self.console, f"yes to {name} for the rest of this session", "dim")
            return answer

    async def _yes(self, question: str, declined: str, *, granted: bool = False) -> bool | Grant:
        """Ask; only y or yes is a yes (Enter, Ctrl+C and end of input are a no); with
        `granted`, a (or always) is a yes for the rest of the session."""
        try:
            answer = (await self.ask_line(question)).strip().lower()
        except (KeyboardInterrupt, EOFError):
            answer = ""
        if granted and answer in ("a", "always"):
            return Grant.SESSION
        approved = answer in ("y", "yes")
        if not approved:
            say(self.console, declined, "dim")
        return approved

    async def sampling(self, request: Call, spec: ToolSpec | None) -> bool | CallOutcome | Grant:
        """A server's sampling request: the server, what it asks (a preview) and its token limit."""
        server = safe(spec.server if spec is not None and spec.server else "a server")
        if not self.interactive:
            say(self.console, f"declined {server}'s sampling request: {NO_TERMINAL_SAMPLING}", "yellow")
            return CallOutcome.NO_ONE_TO_ASK
        async with self._one_at_a_time:
            limit = request.arguments.get("max_tokens")
            say(
                self.console,
                f"{server} asks the model (up to {limit} tokens, on this question's account):",
                "yellow",
            )
            asked = request.arguments["request"]  # always there: `SamplingRequest.shown` made it
            say(self.console, f"  {preview(asked, SAMPLING_PREVIEW)}")
            return await self._yes("Send it to the model? [y/N] ", f"declined {server}'s sampling request")


def terminal_consent(tools: Toolbox, yes: bool) -> Consent:
    """`tools` behind the one consent wrapper, asking on the terminal (stderr) or `--yes`."""
    from rich.console import Console

    from ...core.consent import Consent

    return Consent(tools, approver=TerminalApprover(Console(stderr=True)), auto_approve=yes)
