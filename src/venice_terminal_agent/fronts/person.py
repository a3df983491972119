"""Who stands behind a front, as the runtime needs to know them: who says yes to a call
(`approver`), who fills in an MCP server's form (`elicitor`), whether a server's sampling
request may be put to them (`answers_sampling`), and who completes a browser sign-in
(`sign_in`). Each front hands `open_runtime` the person it has: the one at the terminal
(`terminal/person.py`), the editor (`acp/`), the MCP client's person (`mcp_server/`), or
nobody (`serve`: a service answers no question, `NOBODY`).

The runtime composes what the MCP sessions offer from these answers and imports no front."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .text import safe

if TYPE_CHECKING:
    from ..core.consent import Approver
    from ..mcp.features import Elicitor
    from ..mcp.oauth.auth import SignIn


@runtime_checkable
class Person(Protocol):
    def approver(self) -> Approver | None:
        """Who says yes to a call that needs one; None: nobody (such calls are declined, or
        the front gives each conversation its own approver)."""
        ...

    def elicitor(self, *, yes: bool) -> Elicitor | None:
        """Who fills in a server's form (MCP elicitation); None: every request is declined.
        `yes`: the run was started with --yes, which never answers a server's question."""
        ...

    def answers_sampling(self, *, yes: bool) -> bool:
        """Whether a server's sampling request may be put to this person (it runs on our
        model, on the question's account, once they say yes)."""
        ...

    def sign_in(self) -> SignIn:
        """Who completes a browser sign-in to a server that needs one."""
        ...


async def show_and_open(server: str, url: str) -> None:
    """A browser sign-in: the URL on stderr (the browser may not open, or open elsewhere),
    and the browser opened on it."""
    print(f"Sign in to {safe(server)} in your browser: {url}", file=sys.stderr, flush=True)
    import webbrowser

    # In a thread: a browser command may wait until it is closed, and the redirect it brings
    # back is served by this event loop.
    await asyncio.to_thread(webbrowser.open, url)


def browser_sign_in() -> SignIn:
    """A sign-in that the person at this terminal completes in their browser, when there is
    one (stdin and stderr on a terminal); else nobody signs in (the server says why)."""
    from ..mcp.oauth.auth import SignIn

    return SignIn(open_url=show_and_open if sys.stdin.isatty() and sys.stderr.isatty() else None)


class Nobody:
    """No person answers for this front (`serve`: a service; its calls that need a yes run only
    with --yes). A sign-in is still completed in the browser by whoever started it at a terminal."""

    def approver(self) -> Approver | None:
        return None

    def elicitor(self, *, yes: bool) -> Elicitor | None:
        return None

    def answers_sampling(self, *, yes: bool) -> bool:
        return False

    def sign_in(self) -> SignIn:
        return browser_sign_in()


NOBODY = Nobody()
