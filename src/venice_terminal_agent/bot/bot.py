"""The chat bot: `await Bot(...).respond(text, chat)`, with `run_loop` behind it.

Per conversation (`chat`):
- a message identical to the chat's previous message costs no call: the previous answer;
- at most `calls_per_window` tool calls in any rolling `window` seconds; past that the reply
  says when to come back and nothing runs; the budget recovers as old calls age out;
- each run's loop budget is what is left, reserved atomically in the store before it runs
  (so replies racing in one chat never spend more than the window allows);
- every reply ends with a line saying how the loop ended and how many calls are left.

Without `agent` the bot plans from commands (see `commands.py`); with one, the model plans.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.defaults import CALLS_PER_WINDOW, WINDOW_SECONDS
from ..core.errors import ToolError
from ..core.events import Event, EventSink, ToolStarted
from ..core.loop import run_loop
from ..core.pager import DEFAULT_PAGE_CHARS, Pager
from ..core.receipt import Exit, Receipt, proposed_summary
from ..core.scrub import redact, well_formed
from ..core.toolbox import CombinedToolbox, FunctionToolbox, Toolbox, as_toolbox
from ..core.wording import all_of, plural, shown_answer, verb
from ..store.protocol import ChatStore, StoreError
from ..store.sqlite import Store, Ticket
from ..tools.builtin import FileTools
from .commands import CommandPlanner, help_text, results_text

MAX_CHATS_KEPT = 1024  # conversations whose pages and agents stay in memory (least recently used dropped)


class AskingAgent(Protocol):
    """What the bot needs from the LLM agent (`agent.Agent`)."""

    async def ask(
        self, question: str, *, events: EventSink | None = None, budget: int | None = None
    ) -> Receipt: ...


@dataclass(frozen=True)
class Reply:
    """What the person reads (`text`) and the run behind it (`receipt`, None when nothing ran)."""

    text: str
    receipt: Receipt | None
    status: str  # the last line of `text`: how the loop ended, calls left
    left: int  # calls left in the window after this reply
    repeated: bool = False  # the previous answer, for a repeated message
    retry_after: float | None = None  # seconds to wait, when the window is spent
    run_id: int | None = None

    def __str__(self) -> str:
        return self.text


class Bot:
    """A chat bot with a per-conversation budget of tool calls that recovers over time.

    `tools`: extra tools beside the built-in ones (`read_file`, `list_files` under `root`,
    and the bot's own `page`); `db`: an SQLite file (None: in memory), or `store`: any
    `store.protocol.ChatStore` (Redis, for many processes); `clock`: seconds
    (default `time.time`); `agent`: an object with `ask(question, *, events, budget)` (the
    LLM agent), or a callable making one per chat; without it the bot plans from commands.
    """

    def __init__(
        self,
        tools: Toolbox | Mapping[str, Callable[..., Any]] | None = None,
        *,
        db: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] | None = None,
        calls_per_window: int = CALLS_PER_WINDOW,
        window: float = WINDOW_SECONDS,
        agent: AskingAgent | Callable[[str], AskingAgent] | None = None,
        root: str | os.PathLike[str] | None = None,
        page_chars: int = DEFAULT_PAGE_CHARS,
        store: ChatStore | None = None,
        files: bool = True,
        secrets: Sequence[str] = (),
    ) -> None:
        if calls_per_window < 0:
            raise ValueError("calls_per_window must be >= 0")
        if not window > 0:
            raise ValueError("window must be a positive number of seconds")
        self.clock = clock or time.time
        self.calls_per_window = calls_per_window
        self.window = float(window)
        self.agent = agent
        self.page_chars = page_chars
        self.store: ChatStore = store if store is not None else Store(db)
        # The run's secrets (`Settings.secrets`: the keys, each MCP server's headers and env),
        # masked in every reply and in everything the store keeps: a tool or the model may repeat
        # one, and a bot's reader is not the person whose settings hold it.
        self.secrets = list(secrets)
        self._extra = as_toolbox(tools)
        # Names of the fixed tools, known once (a dynamic toolbox, such as MCP, is asked each time).
        self._extra_names = [] if tools is None else list(tools) if isinstance(tools, Mapping) else None
        self._files = FileTools(root)
        # files=False (--no-files): no built-in tool reads local files.
        file_tools: dict[str, Callable[..., Any]] = (
            {"read_file": self._files.read_file, "list_files": self._files.list_files} if files else {}
        )
        self._file_box = FunctionToolbox(file_tools, read_only=file_tools)
        self._file_names = list(file_tools)
        self._chats: OrderedDict[str, tuple[Pager, Toolbox]] = OrderedDict()
        # One agent (a conversation) and its lock per chat, capped like `_chats`.
        self._agents: OrderedDict[str, tuple[AskingAgent, asyncio.Lock]] = OrderedDict()
        self._shared_lock = asyncio.Lock()  # for one agent given to every chat
        self._opening = asyncio.Lock()
        self._opened = False
        # Failed replies whose reservation the store could not settle then (it was down):
        # (chat, ticket, calls spent, when), settled before this bot's next use of the store.
        self._unsettled: list[tuple[str, Ticket, int, float]] = []

    async def __aenter__(self) -> Bot:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Open the store now (else the first reply does): a bad file fails here, clearly."""
        if self._opened:
            return
        async with self._opening:
            if not self._opened:
                await self.store.open()
                self._opened = True

    async def aclose(self) -> None:
        await self.store.close()
        self._opened = False

    async def respond(self, text: str, chat: str, *, events: EventSink | None = None) -> Reply:
        """Answer one message of conversation `chat`.

        A reply that fails on our side (a crash, a cancellation outside the loop, a store that
        cannot record it) settles its reservation at the calls that really ran, then raises."""
        if not isinstance(text, str) or not isinstance(chat, str):
            raise TypeError("respond(text, chat) takes two strings")
        # A client's text is repaired as a model's is: a lone surrogate cannot be stored or sent.
        text, chat = well_formed(text), well_formed(chat)
        await self.open()
        await self._settle_late()
        pager, toolbox = self._chat(chat)
        planner = None if self.agent is not None else self._command_planner(text, toolbox)
        wanted = None if planner is None else planner.calls_needed
        ticket = await self.store.begin_reply(
            chat, text, now=self.clock(), limit=self.calls_per_window, window=self.window, wanted=wanted
        )
        if ticket.repeat is not None:
            return await self._repeat(chat, text, ticket)
        if ticket.wait is not None:
            return await self._come_back(chat, text, ticket.wait)

        ran = _CallsRan(events)
        try:
            if planner is not None:
                receipt = await run_loop(planner, toolbox, ticket.reserved, events=ran, pager=pager)
            else:
                receipt = await self._ask_agent(chat, text, ticket.reserved, ran)
        except BaseException:
            await self._settle(chat, ticket, ran.calls, failed=redact(text, self.secrets) or text)
            raise
        receipt = receipt.masked(self.secrets)
        text = redact(text, self.secrets) or text
        body = _body(receipt)
        left = max(0, ticket.left - receipt.calls)
        calls = proposed_summary(receipt.proposed, receipt.calls)  # those that did not run too
        status = f"stopped: {receipt.stopped_because} · {calls} · {left} left {self._window_words()}"
        try:
            run_id = await self.store.finish_reply(
                chat, text, body, now=self.clock(), kind="run", receipt=receipt, ticket=ticket
            )
        except BaseException:
            await self._settle(chat, ticket, receipt.calls)
            raise
        return Reply(f"{body.rstrip()}\n{status}", receipt, status, left, run_id=run_id)

    async def _settle(self, chat: str, ticket: Ticket, spent: int, *, failed: str | None = None) -> None:
        """A failed reply's reservation, settled at `spent`; with `failed` (the message), the
        exchange is kept as an error, never given again as a repeat. When the store cannot
        do it now, it is done before the next use of the store (the error on its way says
        what failed)."""
        now = self.clock()
        try:
            await self.store.settle(chat, ticket, spent, now=now)
        except StoreError:
            self._unsettled.append((chat, ticket, spent, now))
            return
        if failed is not None:
            with contextlib.suppress(StoreError):
                await self.store.finish_reply(
                    chat, failed, "(the run failed)", now=now, kind="error", reusable=False
                )

    async def _settle_late(self) -> None:
        """Settle what failed replies left held while the store was down (a `StoreError`
        while it still is: the request is refused like any other then)."""
        while self._unsettled:
            late = self._unsettled.pop(0)  # taken first: replies doing this at once share the work
            chat, ticket, spent, when = late
            try:
                await self.store.settle(chat, ticket, spent, now=when)
            except BaseException:
                self._unsettled.insert(0, late)
                raise

    async def calls_left(self, chat: str) -> int:
        await self.open()
        await self._settle_late()
        used = await self.store.calls_used(well_formed(chat), now=self.clock(), window=self.window)
        return max(0, self.calls_per_window - used)

    async def history(self, chat: str, limit: int = 50) -> list[dict[str, Any]]:
        """The chat's last exchanges, oldest first (kept in the store across restarts)."""
        await self.open()
        return await self.store.history(well_formed(chat), limit)

    def toolbox(self, chat: str) -> Toolbox:
        """The tools of one conversation: its own `page`, the extra tools, the file tools."""
        return self._chat(chat)[1]

    def _chat(self, chat: str) -> tuple[Pager, Toolbox]:
        """The pages and tools of a conversation, made on first use (least recently used dropped)."""
        kept = self._chats.get(chat)
        if kept is not None:
            self._chats.move_to_end(chat)
            return kept
        pager = Pager(self.page_chars)

        def page(id: int) -> str:
            """Return one page of a long result cut earlier in this chat, by its id."""
            return pager.get(id)  # an unknown id is a ToolError, said with the known ids

        own = FunctionToolbox({"page": page}, read_only=["page"])
        kept = self._chats[chat] = (pager, CombinedToolbox(own, self._extra, self._file_box))
        if len(self._chats) > MAX_CHATS_KEPT:
            self._chats.popitem(last=False)
        return kept

    def _tool_names(self, toolbox: Toolbox) -> list[str]:
        if self._extra_names is None:
            return [spec.name for spec in toolbox.specs()]
        return ["page", *self._extra_names, *self._file_names]

    # ---- the three kinds of reply ----

    async def _repeat(self, chat: str, text: str, ticket: Ticket) -> Reply:
        assert ticket.repeat is not None
        ended = f" (stopped: {ticket.repeat_exit})" if ticket.repeat_exit else ""
        status = (
            f"same message as before: previous answer{ended}, no call · "
            f"{ticket.left} left {self._window_words()}"
        )
        await self.store.finish_reply(chat, text, ticket.repeat, now=self.clock(), kind="repeat")
        return Reply(f"{ticket.repeat.rstrip()}\n{status}", None, status, ticket.left, repeated=True)

    async def _come_back(self, chat: str, text: str, wait: float) -> Reply:
        if self.calls_per_window == 0:
            body = "This bot makes no tool calls (its budget is 0 calls)."
        else:
            body = (
                f"{all_of(self.calls_per_window, 'tool call')} {self._window_words()} "
                f"{verb(self.calls_per_window, 'is', 'are')} spent; "
                f"come back in {human_wait(wait)}."
            )
        status = f"not run: no calls left {self._window_words()} · 0 calls"
        await self.store.finish_reply(chat, text, body, now=self.clock(), kind="wait", reusable=False)
        retry_after = wait if self.calls_per_window else None
        return Reply(f"{body.rstrip()}\n{status}", None, status, 0, retry_after=retry_after)

    async def _ask_agent(self, chat: str, text: str, budget: int, events: EventSink | None) -> Receipt:
        agent, lock = self._agent_for(chat)
        # One conversation per agent: two questions at once would interleave its history.
        async with lock:
            return await agent.ask(text, events=events, budget=budget)

    def _agent_for(self, chat: str) -> tuple[AskingAgent, asyncio.Lock]:
        if hasattr(self.agent, "ask"):
            return self.agent, self._shared_lock  # type: ignore[return-value]
        kept = self._agents.get(chat)
        if kept is not None:
            self._agents.move_to_end(chat)
            return kept
        kept = self._agents[chat] = (self.agent(chat), asyncio.Lock())  # type: ignore[operator,misc]
        if len(self._agents) > MAX_CHATS_KEPT:
            # The least recently used chat whose question is not running is forgotten.
            idle = next((name for name, (_, lock) in self._agents.items() if not lock.locked()), None)
            if idle is not None and idle != chat:
                del self._agents[idle]
        return kept

    def _command_planner(self, text: str, toolbox: Toolbox) -> CommandPlanner:
        names = self._tool_names(toolbox)
        return CommandPlanner(text, names, help_text(names, self.calls_per_window, self._per_window()))

    def _per_window(self) -> str:
        """The limit's period: "an hour", "every 10 minutes"."""
        return "an hour" if self.window == 3600 else f"every {human_wait(self.window)}"

    def _window_words(self) -> str:
        return "this hour" if self.window == 3600 else f"in this {human_wait(self.window)} window"


class _CallsRan:
    """The run's event sink, counting the tool calls that started: what a run that fails
    before its receipt has spent."""

    def __init__(self, events: EventSink | None) -> None:
        self.events = events
        self.calls = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            self.calls += 1
        if self.events is not None:
            self.events(event)


def _body(receipt: Receipt) -> str:
    """What the person reads above the status line."""
    if receipt.stopped_because is Exit.ANSWERED and receipt.answer is not None:
        return shown_answer(receipt.answer)
    if receipt.partial and receipt.answer is not None:
        return f"{shown_answer(receipt.answer)}\n\n(partial answer: {receipt.refusal})"
    done = [(step.tool, step.result) for step in receipt.steps if step.error is None]
    parts = [results_text(done)] if done else []
    parts.append(receipt.refusal or f"stopped without an answer ({receipt.stopped_because})")
    return "\n\n".join(parts)


def human_wait(seconds: float) -> str:
    """A wait as people say it, rounded up so it is never too early: '1 hour', '12 minutes'."""
    whole = max(1, math.ceil(seconds - 1e-9))
    if whole < 60:
        return plural(whole, "second")
    minutes = math.ceil(seconds / 60 - 1e-9)
    hours, minutes = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(plural(hours, "hour"))
    if minutes:
        parts.append(plural(minutes, "minute"))
    return " ".join(parts)


__all__ = ["Bot", "Reply", "ToolError", "human_wait"]
