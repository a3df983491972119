"""The agent in an editor: the Agent Client Protocol (ACP) side of `venice-agent acp`.

An editor (Zed, a JetBrains or Neovim plugin) starts `venice-agent acp` and speaks ACP on its
stdin and stdout; the protocol's framing, schema and dispatch are the `agent-client-protocol`
SDK's. This module maps that protocol onto our agent and nothing else:

- each ACP session is one conversation (an `Agent` on the one runtime: the same model, MCP
  servers, caps and consent as every other command);
- a question's events become `session/update`s: message chunks, the model's reasoning as
  thought chunks, tool calls (`→ name(args)`,
  their status and a short result), and a `usage_update` from its receipt;
- consent is ACP's permission request: a call that needs a yes becomes
  `session/request_permission` (allow once / reject); no answer, an error or a cancel is a no.
  `--yes` still approves everything, and the local-data rule holds (`core/consent.py` decides,
  as everywhere);
- `session/cancel` cancels the running question, which ends `cancelled` and is rolled back as
  Ctrl+C would; each exit maps onto an ACP stop reason (`STOP_REASONS`) and the whole receipt
  travels in the response's `_meta`;
- with sessions on, each ACP session is a saved session under the same id, and `session/load`
  replays a saved one (`replay.py`) before it goes on: an editor's conversation can be
  resumed in the terminal (`venice-agent --resume ID`) and the other way round.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Cost,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
)

from ...core import observe
from ...core.consent import Approver, Why
from ...core.errors import StoreError, VeniceAgentError
from ...core.events import (
    ConsentAsked,
    ConsentGiven,
    Event,
    Finished,
    TextDelta,
    TextDiscarded,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
)
from ...core.receipt import Call, CallOutcome, Exit, Receipt
from ...core.toolbox import ToolSpec
from ..saved_sessions import ENABLE
from ..text import call_text, consent_question, preview
from .replay import RESULT_PREVIEW, replay, tool_kind

# Our exits as ACP stop reasons: a refusal carries our refusal text in the message before it.
STOP_REASONS = {
    Exit.ANSWERED: "end_turn",
    Exit.MAX_ROUNDS: "max_turn_requests",
    Exit.CANCELLED: "cancelled",
}
ALLOW, REJECT = "allow-once", "reject"
# A session or question that cannot start (a setting, the store, the model server): a server
# error of ours (JSON-RPC leaves -32000 to -32099 to servers; ACP uses -32000 and -32002) whose
# message is our one line, never -32603 "Internal error".
CANNOT_START = -32001


def stop_reason(exit: Exit) -> str:
    """The ACP stop reason of a question that ended `exit`."""
    if str(exit) == "output_limit":  # a cut answer, where the exit exists
        return "max_tokens"
    return STOP_REASONS.get(exit, "refusal")


def text_of(prompt: list[Any]) -> str:
    """The question in an ACP prompt: its text blocks, and embedded text resources as quoted
    material (other kinds are not offered in our capabilities)."""
    parts: list[str] = []
    for block in prompt:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"{block.resource.uri}:\n```\n{block.resource.text}\n```")
        elif kind == "resource_link":
            parts.append(f"(see {block.uri})")
    return "\n\n".join(part for part in parts if part)


@dataclass
class Conversation:
    """One ACP session: its agent, and the question running in it (if any)."""

    agent: Any
    running: asyncio.Task[Receipt] | None = None
    last: dict[str, Any] | None = None  # the last question's receipt, for a load's usage update
    ids: dict[int, str] = field(default_factory=dict)  # a call (by identity) -> its toolCallId


class EditorAgent:
    """The ACP `Agent`: `acp.run_agent(EditorAgent(make_agent))`.

    `await make_agent(approver, servers, session_id, cwd, stored)` gives a conversation's
    `Agent` (with the MCP servers the editor passed beside ours), its tools behind the one
    consent wrapper with `approver` asking for a yes, going on from `stored` (a saved session
    `sessions.find` gave, or None for a new one); `window` is the model's context window when
    known. `sessions`: the saved sessions (`acp_main.EditorSessions`), None when sessions are off.
    `refusal`: a setting no session can start with; every `session/new` and `session/load` is
    answered with it.
    """

    def __init__(
        self,
        make_agent: Callable[[Any, list[Any], str, str, Any], Awaitable[Any]],
        *,
        model: str,
        window: Callable[[], int | None] = lambda: None,
        version: str = "0",
        sessions: Any = None,
        refusal: VeniceAgentError | None = None,
    ) -> None:
        self.make_agent, self.model, self.window, self.version = make_agent, model, window, version
        self.sessions, self.refusal = sessions, refusal
        self.client: Any = None
        self.conversations: dict[str, Conversation] = {}
        self._ids = itertools.count(1)
        self._sent: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    # -- the protocol --------------------------------------------------------------------
    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=self.sessions is not None,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),  # stdio is always taken
            ),
            agent_info=Implementation(name="venice-agent", title="venice-agent", version=self.version),
            auth_methods=[],
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        _check_folder(cwd)
        if self.refusal is not None:
            raise cannot_start(self.refusal)
        # With sessions on, the id is the saved session's: the one `venice-agent --resume` takes.
        session_id = self.sessions.new_id() if self.sessions is not None else f"s{next(self._ids)}"
        conversation = Conversation(agent=None)
        try:
            conversation.agent = await self.make_agent(
                self._approver(session_id, conversation), mcp_servers or [], session_id, cwd, None
            )
        except VeniceAgentError as error:
            raise cannot_start(error) from None
        self.conversations[session_id] = conversation
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        """A saved session (or one of this process's own): its whole conversation replayed as
        `session/update`s, then the response; later prompts go on with it."""
        _check_folder(cwd)
        if self.refusal is not None:
            raise cannot_start(self.refusal)
        conversation = self.conversations.get(session_id)
        if conversation is None:
            if self.sessions is None:
                raise _invalid(
                    f"no session {session_id!r}: sessions are off, so none is saved; turn them on with {ENABLE}"
                )
            try:
                stored = await self.sessions.find(session_id)
            except StoreError as error:
                raise _invalid(error.message) from None
            conversation = Conversation(agent=None)
            try:
                conversation.agent = await self.make_agent(
                    self._approver(session_id, conversation), mcp_servers or [], session_id, cwd, stored
                )
            except VeniceAgentError as error:
                raise cannot_start(error) from None
            receipts = stored.session.receipts
            conversation.last = receipts[-1]["receipt"] if receipts else None
            self.conversations[session_id] = conversation
        elif conversation.running is not None and not conversation.running.done():
            raise RequestError.invalid_request({"reason": "a question is running in this session"})
        agent = conversation.agent
        for update in replay(agent.record, agent.tools.spec):
            self._sent.put_nowait((session_id, update))
        if conversation.last is not None:  # the editor's meter shows the session as it stands
            self._sent.put_nowait((session_id, self._usage_update(agent, conversation.last)))
        await self._flush()  # all of it before the response, as the protocol asks
        return LoadSessionResponse()

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None  # the key comes from the environment, as for every command

    async def prompt(self, prompt: list[Any], session_id: str, **meta: Any) -> PromptResponse:
        """One question; `meta` is the request's `_meta` (an editor's `traceparent`: the
        question joins its trace when tracing is on, as ACP's meta-propagation RFD says)."""
        conversation = self._conversation(session_id)
        if conversation.running is not None and not conversation.running.done():
            raise RequestError.invalid_request({"reason": "a question is already running in this session"})
        question = text_of(prompt)
        if not question.strip():
            raise RequestError.invalid_params({"reason": "the prompt holds no text"})
        events = self._events(session_id, conversation)
        # An embedded resource is a file's contents from the editor: local data, as piped text
        # and read_file are, so any tool that leaves the machine asks first from now on.
        local = any(getattr(block, "type", None) == "resource" for block in prompt)
        with observe.continued(meta):  # the task takes the trace with it
            conversation.running = asyncio.ensure_future(
                conversation.agent.ask(question, events=events, local_data=local)
            )
        try:
            receipt = await asyncio.shield(conversation.running)
        except asyncio.CancelledError:  # the connection itself went away: so does the question
            conversation.running.cancel()
            raise
        except VeniceAgentError as error:
            raise cannot_start(error) from None
        finally:
            await self._flush()
        if receipt.stopped_because is not Exit.ANSWERED and receipt.refusal and not receipt.partial:
            await self._send(session_id, update_agent_message_text(f"\n\nstopped: {receipt.refusal}"))
        whole = conversation.last = receipt.to_dict()
        await self._send(session_id, self._usage_update(conversation.agent, whole))
        await self._flush()
        return PromptResponse(
            stop_reason=stop_reason(receipt.stopped_because),  # type: ignore[arg-type]
            usage=_usage(receipt),
            field_meta={"venice-agent/receipt": whole},
        )

    async def cancel(self, session_id: str, **_: Any) -> None:
        conversation = self.conversations.get(session_id)
        if conversation is not None and conversation.running is not None:
            conversation.running.cancel()  # the loop ends it `cancelled`, rolled back

    # -- what a question says ------------------------------------------------------------
    def _events(self, session_id: str, conversation: Conversation) -> Callable[[Event], None]:
        def sink(event: Event) -> None:
            update = self._update(conversation, event)
            if update is not None:
                self._sent.put_nowait((session_id, update))
                self._start_sender()

        return sink

    def _update(self, conversation: Conversation, event: Event) -> Any:
        if isinstance(event, TextDelta):
            return update_agent_message_text(event.text) if event.text else None
        if isinstance(event, ThinkingDelta):  # the model's reasoning: shown apart, never the answer
            return update_agent_thought_text(event.text) if event.text else None
        if isinstance(event, TextDiscarded):
            return None  # an editor cannot take text back; the retried round's text follows
        if isinstance(event, ConsentAsked | ToolStarted):
            known = id(event.call) in conversation.ids
            call_id = self._call_id(conversation, event.call)
            status = "pending" if isinstance(event, ConsentAsked) else "in_progress"
            if known:
                return update_tool_call(call_id, status=status)  # type: ignore[arg-type]
            spec = conversation.agent.tools.spec(event.call.tool)
            return start_tool_call(
                call_id,
                f"→ {call_text(event.call.tool, event.call.arguments)}",
                kind=tool_kind(spec),  # type: ignore[arg-type]
                status=status,  # type: ignore[arg-type]
                raw_input=event.call.arguments,
            )
        if isinstance(event, ConsentGiven) and not event.approved:
            call_id = self._call_id(conversation, event.call)
            content = [tool_content(text_block(f"declined {event.call.tool}"))]
            return update_tool_call(call_id, status="failed", content=content)
        if isinstance(event, ToolFinished):
            call_id = self._call_id(conversation, event.call)
            shown = event.error if event.error is not None else preview(event.result, RESULT_PREVIEW)
            return update_tool_call(
                call_id,
                status="failed" if event.error is not None else "completed",
                content=[tool_content(text_block(shown))],
                raw_output=event.error if event.error is not None else event.result,
            )
        if isinstance(event, Finished):
            return None  # the response itself ends the question
        return None

    def _call_id(self, conversation: Conversation, call: Call) -> str:
        key = id(call)
        if key not in conversation.ids:
            conversation.ids[key] = f"call-{next(self._ids)}"
        return conversation.ids[key]

    def _usage_update(self, agent: Any, receipt: dict[str, Any]) -> UsageUpdate:
        """From a question's receipt (as `Receipt.to_dict` gives it, live or saved)."""
        usage = receipt.get("usage") or {}
        used = receipt.get("context_tokens")
        if not isinstance(used, int):
            used = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        size = receipt.get("context_window") or self.window() or 0
        # The session's total; none when any of its requests' cost is unknown (no floor in ACP).
        cost = None if agent.spent_unknown else Cost(amount=agent.spent, currency="USD")
        return UsageUpdate(
            session_update="usage_update",
            used=max(used, 0),
            size=max(int(size), 0),
            cost=cost,
            field_meta={"venice-agent/window_known": bool(size)},
        )

    # -- consent ---------------------------------------------------------------------------
    def _approver(self, session_id: str, conversation: Conversation) -> Approver:
        # It runs only inside a `session/prompt`, a request on the connection `on_connect` gave:
        # `self.client` is always set by then.
        async def approve(call: Call, spec: ToolSpec, why: Why) -> bool | CallOutcome:
            if why is Why.SAMPLING:
                return CallOutcome.NO_ONE_TO_ASK  # a server's prompt to the model needs a terminal
            await self._flush()  # the tool call is shown before it is asked about
            options = [
                PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once"),
                PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
            ]
            asked = ToolCallUpdate(
                tool_call_id=self._call_id(conversation, call),
                title=consent_question(call.tool, call.arguments, spec.server, why is Why.LOCAL_DATA),
                raw_input=call.arguments,
                status="pending",
            )
            try:
                answer = await self.client.request_permission(
                    session_id=session_id, tool_call=asked, options=options
                )
            except Exception:  # an editor that cannot answer: nobody could be asked
                return CallOutcome.NO_ONE_TO_ASK
            outcome = answer.outcome  # validated by the SDK: an AllowedOutcome or a DeniedOutcome
            return isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW

        return approve

    # -- sending, in order ----------------------------------------------------------------
    def _start_sender(self) -> None:
        if self._sender is None or self._sender.done():
            self._sender = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while not self._sent.empty():
            session_id, update = self._sent.get_nowait()
            try:
                await self.client.session_update(session_id=session_id, update=update)
            except Exception:
                pass  # an editor that went away: the question's own response says the rest
            finally:
                self._sent.task_done()

    async def _flush(self) -> None:
        self._start_sender()
        await self._sent.join()

    async def _send(self, session_id: str, update: Any) -> None:
        self._sent.put_nowait((session_id, update))
        await self._flush()

    def _conversation(self, session_id: str) -> Conversation:
        found = self.conversations.get(session_id)
        if found is None:
            raise RequestError.invalid_params({"reason": f"no session {session_id}"})
        return found


def _check_folder(cwd: str) -> None:
    """ACP's rule: a session's folder is an absolute path (ours is where its session is found)."""
    if "\0" in cwd or not os.path.isabs(cwd):
        raise _invalid(f"cwd {cwd!r} is not an absolute path")


def cannot_start(error: VeniceAgentError) -> RequestError:
    """The error a request that cannot start answers: our one line, and the exit status the
    command line would end with."""
    return RequestError(CANNOT_START, error.message, {"exit_status": error.exit_status})


def _invalid(reason: str) -> RequestError:
    """An invalid-params error whose message says why: editors show the message."""
    return RequestError(-32602, f"Invalid params: {reason}", {"reason": reason})


def _usage(receipt: Receipt) -> Usage | None:
    usage = receipt.usage
    if not usage:
        return None
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    return Usage(
        total_tokens=int(usage.get("total_tokens") or prompt + completion),
        input_tokens=prompt,
        output_tokens=completion,
        cached_read_tokens=cached if isinstance(cached, int) else None,
    )


__all__ = ["STOP_REASONS", "EditorAgent", "stop_reason"]
