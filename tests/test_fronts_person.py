"""The person a front hands the runtime (`fronts/person.py`): who approves a call, fills in a
server's form, may be asked for sampling, and signs in. The runtime asks them, never a front's
UI: a stdio MCP server whose tool asks a form, behind `open_runtime` with model=False."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from servers.forms import BLINK
from venice_terminal_agent.config import Settings
from venice_terminal_agent.core.receipt import Call, CallOutcome
from venice_terminal_agent.fronts.person import NOBODY, Person
from venice_terminal_agent.fronts.runtime import Opening, open_runtime
from venice_terminal_agent.mcp.features import Form
from venice_terminal_agent.mcp.oauth.auth import SignIn
from venice_terminal_agent.mcp.server_config import ServerConfig

SERVERS = Path(__file__).parent / "servers"


def forms_server() -> ServerConfig:
    """servers/forms.py over stdio: its `choose` tool asks a form (a colour) mid-call."""
    return ServerConfig("forms", command=sys.executable, args=(str(SERVERS / "forms.py"),))


class Recorded:
    """A person who says yes to each call and fills each form with `colour`, and keeps what
    they were asked."""

    def __init__(self, colour: str = BLINK) -> None:
        self.colour = colour
        self.calls: list[str] = []
        self.forms: list[Form] = []
        self.asked_with_yes: list[bool] = []

    def approver(self) -> Any:
        async def approve(call: Call, spec: Any = None, why: Any = None) -> bool:
            self.calls.append(call.tool)
            return True

        return approve

    def elicitor(self, *, yes: bool) -> Any:
        self.asked_with_yes.append(yes)

        async def fill(form: Form) -> tuple[str, dict[str, Any] | None]:
            self.forms.append(form)
            return "accept", {"colour": self.colour}

        return fill

    def answers_sampling(self, *, yes: bool) -> bool:
        return not yes

    def sign_in(self) -> SignIn:
        return SignIn(open_url=None)


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, **values)


async def test_the_runtime_asks_the_person_the_front_hands_it():
    person = Recorded(BLINK)
    assert isinstance(person, Person)  # the protocol is all a front implements
    server = forms_server()
    async with open_runtime(settings(), [server], person, Opening(model=False)) as runtime:
        assert runtime.person is person
        consented = runtime.consented()
        verdict = await consented.decide(Call("choose", {}))
        answer = json.loads(await consented.call("choose", {}))["result"]
    assert verdict is True and answer == repr(BLINK)
    assert person.calls == ["choose"]  # consent asked the person's approver
    assert [form.message for form in person.forms] == ["Pick one"]  # the server's form too
    assert person.asked_with_yes == [False]
    assert runtime.sampling is None  # no model to ask: no sampling offered, whoever the person


async def test_with_yes_the_person_is_told_and_calls_run_without_asking():
    person = Recorded()
    server = forms_server()
    async with open_runtime(settings(auto_approve_tools=True), [server], person, Opening(model=False)) as runtime:
        verdict = await runtime.consented().decide(Call("choose", {}))
    assert verdict is True
    assert person.calls == []
    assert person.asked_with_yes == [True]


async def test_nobody_declines_the_servers_form_and_cannot_approve_a_call():
    server = forms_server()
    async with open_runtime(settings(), [server], NOBODY, Opening(model=False)) as runtime:
        outcome = await runtime.consented().decide(Call("choose", {}))
        answer = json.loads(await runtime.consented(auto_approve=True).call("choose", {}))["result"]
    assert outcome is CallOutcome.NO_ONE_TO_ASK
    assert answer == repr("decline")  # nobody to fill the form: the server hears no


def test_nobody_has_no_approver_form_or_sampling():
    assert NOBODY.approver() is None
    assert NOBODY.elicitor(yes=False) is None
    assert NOBODY.answers_sampling(yes=False) is False
