"""Consent, decided in one place: the approving wrapper every command puts around its toolbox.

`ask`, `chat`, `run` and `tools call` all wrap their tools in `Consent`; nothing else decides
whether a call may run. The rules, for one proposed call:

1. A tool the toolbox describes as read-only runs without asking, unless local file contents
   are in the conversation and the tool leaves the machine (see 4).
2. A tool not known to be read-only (a paid or writing tool, or one the toolbox does not
   describe at all) needs a yes.
3. `--yes` (`auto_approve`) is that yes. Otherwise the approver is asked; no approver, an
   answer other than True, or an approver that raises, is a no. No paid call without a yes.
   A no says which it was (`decide`): the person declined, nobody could be asked (no approver,
   or one without a terminal), or the setup rules a yes out (`policy`: serve without --yes);
   the model is told that truth (`no_yes`), and the receipt keeps it.
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
6. A person may answer a tool's question with a yes for the rest of the session (the REPL's
   `a`, `Grant.SESSION`): later calls to that tool that need a yes for the same reason run
   without asking (a yes given for a paid call is not one to send local data off the machine,
   and a sampling request is always asked). Each receipt names the tools that ran on it
   (`granted_for_session`).

Like the loop, this module is pure: no terminal, no MCP, no model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from enum import StrEnum
from typing import Any

from .events import ConsentAsked, ConsentGiven, EventSink, ignore
from .receipt import Call, CallOutcome
from .toolbox import Toolbox, ToolSpec, as_toolbox, settle

FILE_TOOLS = frozenset({"read_file", "list_files"})  # the built-in tools that read local data


class Why(StrEnum):
    """Why a call needs a yes; the approver says it to the person."""

    PAID = "paid"  # not known to be read-only: it may spend money or change things
    LOCAL_DATA = "local_data"  # it may send local file contents off this machine
    SAMPLING = "sampling"  # a server asks the model a question, paid from this question


class Grant(StrEnum):
    """A yes that lasts longer than the call it answers (rule 6)."""

    SESSION = "session"  # this tool, for this reason, for the rest of the session


# True is a yes; False the person's no; `CallOutcome.NO_ONE_TO_ASK` when it could ask nobody;
# `Grant.SESSION` a yes for this tool for the rest of the session.
Approver = Callable[[Call, ToolSpec, Why], Awaitable[bool | CallOutcome | Grant]]
Verdict = bool | CallOutcome  # True, or why the call does not run

NO_YES = {
    CallOutcome.DECLINED: "the user declined this call",
    CallOutcome.NO_ONE_TO_ASK: "this call needs the user's yes and there was no one to ask",
    CallOutcome.REFUSED_BY_POLICY: "this call needs the user's yes, and {policy}",
}


def no_yes(verdict: Verdict, policy: str | None = None) -> str:
    """Why a call got no yes, as the model (or a plan's refusal) is told: the truth of it, never
    "declined" when nobody was asked."""
    outcome = verdict if isinstance(verdict, CallOutcome) and verdict in NO_YES else CallOutcome.DECLINED
    return NO_YES[outcome].format(policy=policy or "this setup runs no such call")


def declined_result(reason: str) -> str:
    """The tool result the model gets for a call that got no yes: why (`no_yes`), and that it
    did not run."""
    return f"{reason}; it did not run"


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
        policy: str | None = None,
    ) -> None:
        self.tools = as_toolbox(tools)
        self.approver = approver
        self.auto_approve = auto_approve
        # Why no yes can be given here at all (serve without --yes): calls that need one are
        # refused without asking, and the model is told this reason.
        self.policy = policy
        self.local_data = False  # a built-in file tool's result is in the conversation
        self.for_session: set[tuple[str, Why]] = set()  # (tool, why) a person said yes to for good

    # -- the toolbox ----------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def specs(self) -> Any:
        return self.tools.specs()

    async def refresh(self) -> bool:
        """Reload the wrapped tools if they can (MCP listChanged); True when they changed."""
        reload = getattr(self.tools, "refresh", None)
        return bool(reload is not None and await reload())

    async def settle(self) -> None:
        await settle(self.tools)  # before `why`: consent goes by the servers' own lists

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
        return await self.decide(call, events=events, spec=spec) is True

    async def decide(
        self, call: Call, *, events: EventSink | None = None, spec: ToolSpec | None = None
    ) -> Verdict:
        """`approve`, saying of a no which it was (`CallOutcome`), for the loop's receipt."""
        why = self.why(call, spec)
        if why is None:
            return True
        emit = events or ignore
        if self.auto_approve:
            emit(ConsentGiven(call, True))
            return True
        if self.policy is not None:
            emit(ConsentGiven(call, False))
            return CallOutcome.REFUSED_BY_POLICY
        if (call.tool, why) in self.for_session:
            emit(ConsentGiven(call, True))
            return True
        return await self._ask(call, spec or self.spec(call.tool) or ToolSpec(call.tool), why, emit)

    def no_yes(self, verdict: Verdict) -> str:
        """Why this wrapper said no to a call (`no_yes` with this setup's policy)."""
        return no_yes(verdict, self.policy)

    async def approve_sampling(self, request: Call, server: str, *, events: EventSink | None = None) -> bool:
        """May `server`'s sampling request go to the model? Only a person's yes (rule 5).

        `request` shows it: `tool` "sampling", `arguments` the server, a preview of what it
        asks and its token limit."""
        verdict = await self._ask(
            request, ToolSpec(request.tool, server=server), Why.SAMPLING, events or ignore
        )
        return verdict is True

    async def _ask(self, call: Call, spec: ToolSpec, why: Why, emit: EventSink) -> Verdict:
        emit(ConsentAsked(call))
        verdict: Verdict = CallOutcome.NO_ONE_TO_ASK  # no approver: nobody to ask
        if self.approver is not None:
            try:
                answer = await self.approver(call, spec, why)
            except (Exception, KeyboardInterrupt):
                # An approver that fails says no (so does Ctrl+C at its prompt); cancelling the
                # question is not an answer and goes on up.
                answer = False
            if answer is Grant.SESSION and why is not Why.SAMPLING:
                self.for_session.add((call.tool, why))
                answer = True
            verdict = (
                answer if answer is True or answer is CallOutcome.NO_ONE_TO_ASK else CallOutcome.DECLINED
            )
        emit(ConsentGiven(call, verdict is True))
        return verdict

    def granted_for_session(self, tool: str) -> bool:
        """A person said yes to `tool` for the rest of the session (rule 6)."""
        return any(name == tool for name, _ in self.for_session)

    def local_data_given(self) -> None:
        """The question brings local data itself (piped text): rule 4 holds from now on."""
        self.local_data = True

    def forget_local_data(self) -> None:
        """The conversation was cleared: no local file contents are in it any more."""
        self.local_data = False
