"""What the client offers servers: elicitation (the terminal form; declined without one), roots.

server-everything's `trigger-elicitation-request` asks for a name (required), a yes/no, an
integer and more, most with defaults; the tool echoes what it received.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servers.node import EVERYTHING_ENV, bin_path
from venice_terminal_agent.fronts.terminal.elicit_form import parse
from venice_terminal_agent.mcp.features import FormField, form_fields, with_defaults

BIN = Path(sys.executable).parent
SERVERS = Path(__file__).parent / "servers"


@pytest.fixture
def everything(tmp_path) -> Path:
    config = tmp_path / "mcp.json"
    server = {"command": str(bin_path("mcp-server-everything")), "args": ["stdio"], "env": EVERYTHING_ENV}
    config.write_text(json.dumps({"mcpServers": {"everything": server}}))
    return config


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("VENICE_", "APIFY_"))}


def test_the_form_in_a_real_terminal_sends_what_was_typed_and_the_defaults(everything):
    import pexpect

    child = pexpect.spawn(
        str(BIN / "venice-agent"), ["tools", "call", "trigger-elicitation-request", "--mcp-config", str(everything)],
        env=clean_env(), encoding="utf-8", timeout=60, dimensions=(40, 160),
    )  # fmt: skip
    try:
        child.expect_exact("[y/N]")  # consent for the call itself
        child.sendline("y")
        child.expect_exact("everything asks: Please provide inputs for the following fields:")
        child.expect_exact("[y = fill in, n = decline, Enter = cancel]")
        child.sendline("y")
        answers = [  # (what the form shows, what is typed); Enter keeps a default
            ("Your full, legal name", "String:", ""),
            ("this one is required", "String:", "Ada"),
            ("Agree to the terms", "Boolean (y/n):", "y"),
            ("Favorite first line", "[It was a dark and stormy night.]:", ""),
            ("Your email address", "String with email format:", ""),
            ("Portfolio / personal website", "String with uri format:", ""),
            ("Your date of birth", "String with date format:", ""),
            ("Your favorite integer", "Integer [42]:", "seven"),
            ("an integer, e.g. 3", "Integer [42]:", "7"),
            ("Favorite number", "[3.14]:", ""),
            ("Choose your favorite friend", "[Monica]:", ""),
            ("Choose your favorite instruments", "[Guitar]:", ""),
            ("Choose your favorite hero", "[hero-1]:", ""),
            ("Choose your favorite types of fish", "[fish-1]:", ""),
            ("Choose your favorite type of pet", "[pet-1]:", ""),
        ]
        for shown, prompt, typed in answers:
            child.expect_exact(shown)
            child.expect_exact(prompt)
            child.sendline(typed)
        child.expect_exact("- Name: Ada")
        child.expect_exact("- Agreed to terms: true")
        child.expect_exact("- Favorite Integer: 7")
        child.expect_exact("- Favorite Number: 3.14")  # the default, filled in by the client
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_without_a_terminal_the_request_is_declined(everything):
    done = subprocess.run(
        [str(BIN / "venice-agent"), "tools", "call", "trigger-elicitation-request", "--yes",
         "--mcp-config", str(everything)],
        capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "User declined to provide the requested information." in done.stdout


def test_with_yes_a_terminal_is_not_asked_and_the_request_is_declined(everything):
    """--yes never answers for the person: no form, even on a terminal."""
    import pexpect

    child = pexpect.spawn(
        str(BIN / "venice-agent"),
        ["tools", "call", "trigger-elicitation-request", "--yes", "--mcp-config", str(everything)],
        env=clean_env(), encoding="utf-8", timeout=60, dimensions=(40, 160),
    )  # fmt: skip
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert "Please provide inputs" not in child.before
    assert "User declined to provide the requested information." in child.before
    assert child.exitstatus == 0


def test_schema_fields_defaults_and_typed_answers():
    schema = {
        "type": "object", "required": ["name"],
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "size": {"type": "integer", "default": 3},
            "pet": {"type": "string", "oneOf": [{"const": "cat"}, {"const": "dog"}], "default": "cat"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a"]},
        },
    }  # fmt: skip
    name, size, pet, tags = form_fields(schema)
    assert (name.required, size.kind, pet.choices, tags.kind, tags.choices) == (
        True,
        "integer",
        ("cat", "dog"),
        "array",
        ("a", "b"),
    )
    assert with_defaults(form_fields(schema), {"name": "x", "size": None}) == {
        "name": "x",
        "size": 3,
        "pet": "cat",
        "tags": ["a"],
    }
    assert parse(size, "4") == (4, None) and parse(size, "4.5")[1] == "an integer, e.g. 3"
    assert parse(pet, "cow")[1] == "one of: cat, dog"
    assert parse(tags, "a, b") == (["a", "b"], None)
    assert parse(FormField("ok", "boolean", "OK"), "no") == (False, None)


def test_the_client_offers_the_file_root_as_its_root(everything, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [str(BIN / "venice-agent"), "tools", "call", "get-roots-list", "--yes", "--mcp-config", str(everything)],
        capture_output=True, text=True, timeout=120, env=clean_env(), cwd=work, stdin=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"1. work\n   URI: {work.as_uri()}" in done.stdout


def test_a_url_the_server_requires_as_an_error_is_shown(everything):
    """A server may answer a call with "URL elicitation required" (-32042) and the URLs in its
    data: the one-line error carries them, or nobody could go on. (server-everything's error
    names a prerequisite URL of its own, not the one asked for.)"""
    arguments = json.dumps({"url": "https://auth.example/start", "errorPath": True})
    done = subprocess.run(
        [str(BIN / "venice-agent"), "tools", "call", "trigger-url-elicitation", arguments, "--yes",
         "--mcp-config", str(everything)],
        capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 5
    assert done.stderr.strip().splitlines() == [
        "venice-agent tools call: trigger-url-elicitation: This request requires browser-based "
        "authorization: open https://modelcontextprotocol.io, then try again"
    ]


async def test_escape_sequences_in_a_forms_choices_are_shown_never_obeyed():
    """A server's enum values are its text: after a wrong answer the line naming the allowed
    values (and the question itself) shows a window-title sequence and a blink as escapes."""
    from io import StringIO

    from rich.console import Console

    from servers.forms import BLINK, TITLE
    from venice_terminal_agent.fronts.terminal.elicit_form import terminal_elicitor
    from venice_terminal_agent.mcp.features import ClientFeatures
    from venice_terminal_agent.mcp.server_config import ServerConfig
    from venice_terminal_agent.mcp.session import SessionHooks
    from venice_terminal_agent.mcp.toolbox import McpToolbox

    screen, asked = StringIO(), []
    typed = iter(["y", "red", BLINK])

    async def ask(question: str) -> str:
        asked.append(question)
        return next(typed)

    console = Console(file=screen, force_terminal=True, width=200)
    features = ClientFeatures(elicitor=terminal_elicitor(console, ask))
    server = ServerConfig("forms", command=sys.executable, args=(str(SERVERS / "forms.py"),))
    hooks = SessionHooks(client_options=features.client_options)
    async with McpToolbox.open([server], hooks=hooks) as box:
        chosen = json.loads(await box.call("choose", {}))["result"]
    assert chosen == repr(BLINK)  # the right answer still goes back as it was
    shown = screen.getvalue() + "".join(asked)
    assert "one of: \\x1b]0;pwned\\x07, \\x1b[5mblink\\x1b[0m" in screen.getvalue()
    assert "(\\x1b]0;pwned\\x07 / \\x1b[5mblink\\x1b[0m)" in asked[1]
    assert TITLE not in shown and "\x1b[5m" not in shown and "\x07" not in shown


def asking_server(rounds_before_done: int | None):
    """An MCP server on 2026-07-28 whose `confirm` tool answers "input required" (MRTR,
    SEP-2322) with a yes/no form until it has had `rounds_before_done` answers (None: never
    done); `seen` keeps each round's echoed request state and answers."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context
    from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

    server, seen = MCPServer("nagging"), []
    form = {"type": "object", "properties": {"sure": {"type": "boolean"}}, "required": ["sure"]}

    @server.tool()
    def confirm(ctx: Context) -> str | InputRequiredResult:
        """Asks before it does anything."""
        answers = ctx.input_responses or {}
        seen.append((ctx.request_state, {key: (a.action, a.content) for key, a in answers.items()}))
        if rounds_before_done is not None and len(seen) > rounds_before_done:
            return f"done after {rounds_before_done} answers"
        question = ElicitRequest(params=ElicitRequestFormParams(message="Sure?", requested_schema=form))
        return InputRequiredResult(input_requests={"ok": question}, request_state=f"state-{len(seen)}")

    return server, seen


async def answered_on_a_terminal(server, typed: str | None):
    """Call `confirm` through McpToolbox with the terminal form, a person typing `typed`
    (None: no terminal, so nobody to ask)."""
    from io import StringIO

    from rich.console import Console

    from venice_terminal_agent.core.errors import ToolError
    from venice_terminal_agent.fronts.terminal.elicit_form import terminal_elicitor
    from venice_terminal_agent.mcp.features import ClientFeatures
    from venice_terminal_agent.mcp.server_config import ServerConfig
    from venice_terminal_agent.mcp.session import SessionHooks
    from venice_terminal_agent.mcp.toolbox import McpToolbox

    screen = StringIO()

    async def ask(question: str) -> str:
        return typed

    elicitor = None if typed is None else terminal_elicitor(Console(file=screen, force_terminal=True), ask)
    features = ClientFeatures(elicitor=elicitor)
    async with McpToolbox.open(
        [ServerConfig("nagging", in_memory=server)],
        hooks=SessionHooks(client_options=features.client_options),
    ) as box:
        assert [status.protocol for status in box.servers] == ["2026-07-28"]
        try:
            return await box.call("confirm", {}), screen.getvalue()
        except ToolError as error:
            return error, screen.getvalue()


async def test_an_input_required_result_is_asked_on_the_terminal_form_and_its_state_echoed():
    """MRTR goes through the same form as elicitation: the person answers, and the retry
    carries the answer and the server's request state unchanged."""
    server, seen = asking_server(rounds_before_done=1)
    result, screen = await answered_on_a_terminal(server, "y")
    assert json.loads(result) == {"result": "done after 1 answers"}
    assert "nagging asks: Sure?" in screen
    assert seen == [(None, {}), ("state-1", {"ok": ("accept", {"sure": True})})]


async def test_an_input_required_result_with_nobody_to_ask_is_declined():
    """The same rule as elicitation: without a terminal (or under --yes, or in serve) the
    server is told the input was declined, and the call goes on to the server's answer."""
    server, seen = asking_server(rounds_before_done=1)
    result, _ = await answered_on_a_terminal(server, None)
    assert json.loads(result) == {"result": "done after 1 answers"}
    assert seen == [(None, {}), ("state-1", {"ok": ("decline", None)})]


async def test_a_server_that_keeps_asking_for_input_ends_the_call_with_a_readable_error():
    """Past the SDK's ten rounds the call stops, said in our words (not the SDK's advice to
    raise `input_required_max_rounds` on a Client the person never sees)."""
    from venice_terminal_agent.core.errors import ToolError

    server, seen = asking_server(rounds_before_done=None)
    error, _ = await answered_on_a_terminal(server, "y")
    assert isinstance(error, ToolError)
    assert str(error) == (
        "nagging asked for more input 10 times during one call to confirm without finishing it, "
        "so the call was stopped"
    )
    assert len(seen) == 11  # the first call and its ten retries, then no more
