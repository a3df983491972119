"""Consent for `venice-agent mcp`: the MCP client's person answers (`ClientApprover`).

On the 2025 revisions the question goes out as elicitation mid-call; on 2026-07-28, where a
server cannot send a request mid-call, the running `Question` pauses (`Pause`) and the
`tools/call` returns an input-required result instead, which the client's retry answers
(`question.py` holds the paused run and its rounds). A client that can do neither gets the
call declined as `no_one_to_ask`, said in the result's notes. Both ways of asking are here, so
who is asked, and how, reads in one place. `ClientPerson` is the person this front hands the
runtime.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from ...core.consent import Why
from ...core.receipt import Call, CallOutcome
from ...core.toolbox import ToolSpec
from ..person import Nobody
from ..text import consent_question, safe

if TYPE_CHECKING:
    from ...core.consent import Approver

NOBODY = "this MCP client cannot be asked (no elicitation), so {tool} was declined; start the server with --yes to run paid tools"
CONSENT = "consent"  # the key of the one input request a paused question carries
# The SDK's `NoBackChannelError`: this request's connection cannot carry a question back to the
# client (an HTTP reply that is one JSON body, or a request already answered).
NO_BACK_CHANNEL = (
    "this client's connection (MCP {version}) gives the server no way to ask it mid-call, so {tool} "
    "was declined; start the server with --yes to run paid tools"
)


class Pausing(Protocol):
    """A run that can pause for the client's answer (`question.Question`)."""

    async def ask_client(self, message: str, tool: str) -> bool: ...


@dataclass
class Asking:
    """The call being served: its MCP context (the latest round's) and what the consent step
    had to say; `question` is the run that can pause for an answer (the 2026-07-28 protocol)."""

    ctx: Any
    notes: list[str] = field(default_factory=list)
    question: Pausing | None = None


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
    to ask (no elicitation, or a connection with no way back to the client) is a no, said in
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
        server = spec.server if spec is not None else None
        message = f"{consent_question(call.tool, call.arguments, server, why is Why.LOCAL_DATA)} yes/no"
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


class ClientPerson(Nobody):
    """The person behind the MCP client (`person.Person`): asked for a call's yes through the
    client (`ClientApprover`). As for nobody, servers are offered neither forms nor sampling
    (nobody is at this terminal: stdout may be the protocol)."""

    def __init__(self) -> None:
        self._approver = ClientApprover()

    def approver(self) -> Approver | None:
        return self._approver
