"""The terminal agent with each question and its receipt kept in the store (`venice-agent logs`).

Only made when the user asked for it (`--db` or VENICE_AGENT_DB). A store that cannot be used
is said once per question through `warn` and the answer stands: recording never fails a question.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..core.errors import StoreError
from ..core.receipt import Receipt
from ..store.sqlite import record_agent_run


class RecordingAgent:
    """An agent whose `ask` also records the run; everything else is the agent's own."""

    def __init__(
        self,
        agent: Any,
        db: str | os.PathLike[str],
        warn: Callable[[str], None],
        secrets: Sequence[str] = (),
    ) -> None:
        self.agent, self.db, self.warn = agent, db, warn
        self.secrets = secrets  # masked in what is written (`Settings.secrets`)

    def __getattr__(self, name: str) -> Any:  # tools, clear, history, ... are the agent's own
        return getattr(self.agent, name)

    async def ask(self, question: str, **options: Any) -> Receipt:
        receipt = await self.agent.ask(question, **options)
        try:
            await record_agent_run(self.db, question, receipt, self.secrets)
        except StoreError as error:
            self.warn(f"the run was not recorded: {error}")
        return receipt
