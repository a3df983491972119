"""Consent for `venice-agent mcp`: the MCP client's person answers (`ClientApprover`).

On the 2025 revisions the question goes out as elicitation mid-call; on 2026-07-28, where a
server cannot send a request mid-call, the running `Question` pauses (`Pause`) and the
`tools/call` returns an input-required result instead, which the client's retry answers
(`Front.resume`, in mcp_main.py, settles it). A client that can do neither gets the call
declined as `no_one_to_ask`, said in the result's notes. Both ways of asking are here, so who
is asked, and how, reads in one place; the front keeps the rounds (start, retry, deadline).
"""

import asyncio
import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ...core.consent import Why
from ...core.receipt import Call, CallOutcome
from ...core.toolbox import ToolSpec
from ..text import ARGS_PREVIEW, call_text, safe

if TYPE_CHECKING:
    from .mcp_main import Front

NOBODY = "this MCP client cannot be asked (no elicitation), so {tool} was declined; start the server with --yes to run paid tools"
CONSENT = "consent"  # the key of the one input request a paused question carries
NO_BACK_CHANNEL = (
    "this client speaks MCP {version}, where a server cannot ask mid-call, so {tool} was declined; "
    "start the server with --yes to run paid tools"
)


@dataclass
class Asking:
    """The call being served: its MCP context (the latest round's) and what the consent step
    had to say; `question` is the run that can pause for an answer (the 2026-07-28 protocol)."""

    ctx: Any
    notes: list[str] = field(default_factory=list)
    question: "Question | None" = None


def input_required(protocol_version: str | None) -> bool:
    """The client speaks a revision where a server asks by returning an input-required result."""
    from mcp_types.version import is_version_at_least

    from ...mcp.server_config import MODERN_PROTOCOL

    return protocol_version is not None and is_version_at_least(protocol_version, MODERN_PROTOCOL)


asking: contextvars.ContextVar[Asking | None] = contextvars.ContextVar("asking", default=None)


class Approve(BaseModel):
    run: bool = Field(description="Run this call?")


class ClientApprover:
    """A `consent.Approver` that asks the MCP client's person (elicitation, form mode). Nobody
    to ask (no elicitation, or the 2026-07-28 protocol with no back channel) is a no, said in
    the result."""

    async def __call__(
        self, call: Call, spec: ToolSpec | None = None, why: Why = Why.PAID
    ) -> bool | CallOutcome:
        from mcp.shared.exceptions import NoBackChannelError

        current = asking.get()
        if current is None or why is Why.SAMPLING:
            return CallOutcome.NO_ONE_TO_ASK
        name = safe(call.tool)
        capabilities = current.ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            current.notes.append(NOBODY.format(tool=name))
            return CallOutcome.NO_ONE_TO_ASK  # the model is told so, not that someone said no
        where = f" on {safe(spec.server)}" if spec is not None and spec.server else ""
        reason = (
            "it may send local file contents off this machine"
            if why is Why.LOCAL_DATA
            else ("it is not known to be free: it may spend money or change things")
        )
        message = f"Run {call_text(call.tool, call.arguments, ARGS_PREVIEW)}{where}? ({reason}) yes/no"
        if current.question is not None and input_required(current.ctx.protocol_version):
            return await current.question.ask_client(message, name)
        try:
            answer = await current.ctx.elicit(message, schema=Approve)
        except NoBackChannelError:
            current.notes.append(NO_BACK_CHANNEL.format(version=current.ctx.protocol_version, tool=name))
            return CallOutcome.NO_ONE_TO_ASK
        approved = answer.action == "accept" and bool(getattr(answer.data, "run", False))
        if not approved:
            current.notes.append(f"the client's person declined {name}")
        return approved


@dataclass
class Pause:
    """A consent question waiting for the client's retry: its number in the run, and the answer."""

    number: int
    tool: str
    request: Any  # mcp.types.ElicitRequest
    answer: "asyncio.Future[bool]"


class Question:
    """One `ask`, run in a task of its own so that it can outlive a `tools/call` round: paused on
    a consent question (`ask_client`), it hands the round a `Pause`; at the end, its result."""

    def __init__(self, front: "Front", ctx: Any, progress: Any) -> None:
        import secrets

        self.front = front
        self.id = secrets.token_hex(8)
        self.asking = Asking(ctx, question=self)
        self.progress = progress  # the front's `Progress`: this question's events to the client
        self.signals: asyncio.Queue[Any] = asyncio.Queue()  # Pause, or the final CallToolResult
        self.pause: Pause | None = None
        self.expired: int | None = None  # the pause that ran out of time: its retry gets the result
        self.asks = 0
        self.driven = False  # a round is waiting on `signals`
        self.task: asyncio.Task[None] | None = None
        self.timer: asyncio.Future[None] | None = None

    async def ask_client(self, message: str, tool: str) -> bool:
        """Pause until the client's retry answers `message` (False when none comes in time)."""
        from mcp.server.elicitation import render_elicitation_schema
        from mcp.types import ElicitRequest, ElicitRequestFormParams

        self.asks += 1
        params = ElicitRequestFormParams(message=message, requested_schema=render_elicitation_schema(Approve))
        pause = Pause(
            self.asks, tool, ElicitRequest(params=params), asyncio.get_running_loop().create_future()
        )
        self.pause = pause
        self.timer = self.front.chore(self.front.expire(self, pause))
        self.signals.put_nowait(pause)
        return await pause.answer

    def settle(self, pause: Pause, approved: bool) -> None:
        if self.pause is pause:
            self.pause = None
        if self.timer is not None:
            self.timer.cancel()
        if not pause.answer.done():
            pause.answer.set_result(approved)

    def waiting(self, pause: Pause) -> Any:
        from mcp.types import InputRequiredResult

        return InputRequiredResult(
            input_requests={CONSENT: pause.request}, request_state=f"{self.id}.{pause.number}"
        )
