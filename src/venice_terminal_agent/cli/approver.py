"""The terminal approver: the one piece that exists only to protect the person's bill.

Asked for each call that is not known to be read-only, one at a time. The default is no:
Enter alone, Ctrl+C and end of input all mean no. With no terminal to ask on (cron, CI, a
pipe) it refuses and says so, instead of hanging or approving silently. `--yes` approves all.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from rich.console import Console
from rich.text import Text

from ..receipt import Call
from ..tools.base import ToolSpec
from .text import preview, safe

ARGS_PREVIEW = 240
NO_TERMINAL = "paid tools need a terminal or --yes"
NO_TERMINAL_CONSENT = "it needs your consent, and there is no terminal to ask on (or use --yes)"

AskLine = Callable[[str], Awaitable[str]]


def prompt_on(stream: TextIO) -> AskLine:
    """Ask one line on `stream` (stderr under --json) through prompt_toolkit, imported when due."""

    async def ask(question: str) -> str:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.output import create_output

        return await PromptSession(output=create_output(stdout=stream)).prompt_async(question)

    return ask


def has_terminal(stream: TextIO) -> bool:
    return sys.stdin.isatty() and stream.isatty()


class TerminalApprover:
    """`await approver(call, spec) -> bool`, the agent's `Approver`."""

    def __init__(
        self,
        console: Console,
        *,
        auto_approve: bool = False,
        interactive: bool | None = None,
        ask_line: AskLine | None = None,
    ) -> None:
        self.console = console
        self.auto_approve = auto_approve
        self.interactive = has_terminal(console.file) if interactive is None else interactive
        self.ask_line = ask_line or prompt_on(console.file)
        self._one_at_a_time = asyncio.Lock()

    async def __call__(self, call: Call, spec: ToolSpec | None = None) -> bool:
        if self.auto_approve:
            return True
        name = safe(call.tool)
        if not self.interactive:
            why = NO_TERMINAL if spec is not None and spec.paid else NO_TERMINAL_CONSENT
            self.console.print(Text(f"skipped {name}: {why}", style="yellow"), soft_wrap=True)
            return False
        async with self._one_at_a_time:
            where = f" on {safe(spec.server)}" if spec is not None and spec.server else ""
            self.console.print(
                Text(
                    f"{name}{where} is not known to be free: it may spend money or change things.",
                    style="yellow",
                )
            )
            question = f"Run {name}({preview(call.arguments, ARGS_PREVIEW)})? [y/N] "
            try:
                answer = await self.ask_line(question)
            except (KeyboardInterrupt, EOFError):
                answer = ""
            approved = answer.strip().lower() in ("y", "yes")
            if not approved:
                self.console.print(Text(f"declined {name}", style="dim"))
            return approved
