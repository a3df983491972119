"""`venice-agent store copy SRC DST`: move the bot's chats between SQLite and Redis."""

from __future__ import annotations

import asyncio

from ..core.errors import VeniceAgentError
from ..core.wording import plural
from ..fronts.failures import fail
from ..store.protocol import shown


def copy_main(source: str, destination: str) -> int:
    """The whole command; returns the process exit status."""
    from ..store.copy import copy_store

    try:
        copied = asyncio.run(copy_store(source, destination))
    except VeniceAgentError as problem:
        return fail(" ".join(problem.message.split()), problem.exit_status, command="venice-agent store copy")
    print(
        f"copied {plural(copied.chats, 'chat')} ({plural(copied.exchanges, 'exchange')}, "
        f"{plural(copied.calls, 'call')} in the ledgers) from {shown(source)} to {shown(destination)}"
    )
    if copied.agent_runs_left:
        print(
            f"not copied: {plural(copied.agent_runs_left, 'run')} of the terminal agent "
            "(venice-agent logs); the copy moves the bot's chats"
        )
    return 0
