"""Consent, decided in one place: the approving wrapper every command puts around its toolbox.

`ask`, `chat`, `run` and `tools call` all wrap their tools in `Consent`; nothing else decides
whether a call may run. The rules, for one proposed call:

1. A tool the toolbox describes as read-only runs without asking, unless local file contents
   are in the conversation and the tool leaves the machine (see 4).
2. A tool not known to be read-only (a paid or writing tool, or one the toolbox does not
   describe at all) needs a yes.
3. `--yes` (`auto_approve`) is that yes. Otherwise the approver is asked; no approver, an
   answer other than True, or an approver that raises, is a no. No paid call without a yes.
4. Local data: once a built-in file tool (`read_file`, `list_files`) has returned a result
   through this wrapper, every call to a tool that leaves the machine (any MCP tool, i.e. a
   tool with a server; the built-ins do not) needs a yes too, read-only or not: a prompt
   injection in a scraped page could otherwise carry a file's contents out in a search query.
   The rule lasts until `forget_local_data()` (the REPL's /clear). Local data that comes with
   the question itself (text piped to `venice-agent "question"`) counts the same from the
   start (`local_data_given()`).
5. A server's sampling request (it asks the model a question, on this question's account) always
   needs a person's yes: `--yes` is not one, since it approves the model's own calls, not a
   prompt a server wrote (`approve_sampling`). Like elicitation, nobody there means no.

Like the loop, this module is pure: no terminal, no MCP, no model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from enum import StrEnum
from typing import Any

from .events import ConsentAsked, ConsentGiven, EventSink, ignore
from .receipt import Call
from .toolbox import Toolbox, ToolSpec, as_toolbox

FILE_TOOLS = frozenset({"read_file", "list_files"})  # the built-in tools that read local data


class Why(StrEnum):
    """Why a call needs a yes; the approver says it to the person."""

    PAID = "paid"  # not known to be read-only: it may spend money or change things
    LOCAL_DATA = "local_data"  # it may send local file contents off this machine
    SAMPLING = "sampling"  # a server asks the model a question, paid from this question


Approver = Callable[[Call, ToolSpec, Why], Awaitable[bool]]


def leaves_machine(spec: ToolSpec | None) -> bool:
    """An MCP tool (it has a server) or one nobody described; the built-ins stay here."""
    return spec is None or spec.server is not None


class Consent:
    """A toolbox that knows which calls need a yes, and asks for it (`approve`).

    It is a toolbox itself (`in`, `specs`, `call` go to the wrapped one), so `run_loop` takes it
    as is and asks `approve` before each call.
    """

    def __init__(
        self,
        tools: Toolbox | Mapping[str, Callable[..., Any]] | None,
        *,
        approver: Approver | None = None,
        auto_approve: bool = False,
    ) -> None:
        self.tools = as_toolbox(tools)
        self.approver = approver
        self.auto_approve = auto_approve
        self.local_data = False  # a built-in file tool's result is in the conversation

    # -- the toolbox ----------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def specs(self) -> Any:
        return self.tools.specs()

    async def refresh(self) -> bool:
        """Reload the wrapped tools if they can (MCP listChanged); True when they changed."""
        reload = getattr(self.tools, "refresh", None)
        return bool(reload is not None and await reload())

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        result = await self.tools.call(name, arguments)
        if name in FILE_TOOLS and not leaves_machine(self.spec(name)):
            self.local_data = True  # only a result counts: a refused read brought nothing in
        return result

    # -- consent --------------------------------------------------------------------------
    def spec(self, name: str) -> ToolSpec | None:
        return next((spec for spec in self.tools.specs() if spec.name == name), None)

    def why(self, call: Call, spec: ToolSpec | None = None) -> Why | None:
        """Why `call` needs a yes, or None when it may run without asking."""
        spec = spec or self.spec(call.tool)
        if self.local_data and leaves_machine(spec):
            return Why.LOCAL_DATA
        if spec is not None and spec.read_only:
            return None
        return Why.PAID

    async def approve(
        self, call: Call, *, events: EventSink | None = None, spec: ToolSpec | None = None
    ) -> bool:
        """May `call` run? Asks the approver when a rule says so; every doubt is a no. `spec`
        describes a tool outside this toolbox: a server's own tool, which the model proposed
        inside the server's sampling request (the server runs it)."""
        why = self.why(call, spec)
        if why is None:
            return True
        emit = events or ignore
        if self.auto_approve:
            emit(ConsentGiven(call, True))
            return True
        return await self._ask(call, spec or self.spec(call.tool) or ToolSpec(call.tool), why, emit)

    async def approve_sampling(self, request: Call, server: str, *, events: EventSink | None = None) -> bool:
        """May `server`'s sampling request go to the model? Only a person's yes (rule 5).

        `request` shows it: `tool` "sampling", `arguments` the server, a preview of what it
        asks and its token limit."""
        return await self._ask(request, ToolSpec(request.tool, server=server), Why.SAMPLING, events or ignore)

    async def _ask(self, call: Call, spec: ToolSpec, why: Why, emit: EventSink) -> bool:
        emit(ConsentAsked(call))
        approved = False
        if self.approver is not None:
            try:
                approved = await self.approver(call, spec, why) is True
            except (Exception, KeyboardInterrupt):
                # An approver that fails says no (so does Ctrl+C at its prompt); cancelling the
                # question is not an answer and goes on up.
                approved = False
        emit(ConsentGiven(call, approved))
        return approved

    def local_data_given(self) -> None:
        """The question brings local data itself (piped text): rule 4 holds from now on."""
        self.local_data = True

    def forget_local_data(self) -> None:
        """The conversation was cleared: no local file contents are in it any more."""
        self.local_data = False
