"""The person at the terminal, as the runtime needs them (`fronts/person.py`): they approve a
call on stderr, fill in a server's form there, may be asked to let a server's sampling request
run, and sign in in their browser. With no terminal on stderr (or stdin), or with --yes, they
answer no server's question."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..person import browser_sign_in
from .approver import TerminalApprover, has_terminal

if TYPE_CHECKING:
    from rich.console import Console

    from ...core.consent import Approver
    from ...mcp.features import Elicitor
    from ...mcp.oauth.auth import SignIn


class TerminalPerson:
    """`console`: where the approver asks (stderr's); None: nobody approves here (the command
    wraps its tools itself, or runs none that ask). `for_session`: a yes may hold for the rest
    of the session (the REPL)."""

    def __init__(self, console: Console | None = None, *, for_session: bool = False) -> None:
        self.console = console
        self.for_session = for_session
        self._approver: TerminalApprover | None = None

    def approver(self) -> Approver | None:
        if self.console is None:
            return None
        if self._approver is None:  # one for the run: a yes for the session is remembered
            self._approver = TerminalApprover(self.console, for_session=self.for_session)
        return self._approver

    def elicitor(self, *, yes: bool) -> Elicitor | None:
        if yes or not has_terminal(sys.stderr):  # --yes never answers a server's question
            return None
        from .elicit_form import terminal_elicitor
        from .render import make_console

        return terminal_elicitor(make_console(stderr=True))

    def answers_sampling(self, *, yes: bool) -> bool:
        return not yes and has_terminal(sys.stderr)

    def sign_in(self) -> SignIn:
        return browser_sign_in()
