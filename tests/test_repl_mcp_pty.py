"""/resources, /prompts and /prompt in the REPL, in a real pseudo-terminal: the real CLI,
the fake Venice server, and server-everything over stdio."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import fake_venice
from servers.node import EVERYTHING_ENV, bin_path
from test_repl_pty import Terminal


def everything_config(folder: Path) -> Path:
    path = folder / "everything.json"
    server = {"command": str(bin_path("mcp-server-everything")), "args": ["stdio"], "env": EVERYTHING_ENV}
    path.write_text(json.dumps({"mcpServers": {"everything": server}}))
    return path


def test_resources_and_prompts_listed_and_a_prompt_asked_as_the_next_question(tmp_path: Path) -> None:
    with fake_venice([{"text": "Sunny in Prague."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=everything_config(tmp_path))
        term.ask("/resources")
        listing = term.expect("structure.md")
        assert "demo://resource/static/document/architecture.md" in listing and "text/markdown" in listing
        term.ask("/prompts")
        listing = term.expect("ask one: /prompt NAME key=value")
        assert "args-prompt" in listing and "city (required: Name of the city), state" in listing
        term.ask("/prompt args-prompt state=Bohemia")
        term.expect("args-prompt: missing city; its arguments: city (required: Name of the city), state")
        term.ask("/prompt nope")
        term.expect("no prompt named nope; /prompts lists them")
        term.ask('/prompt everything__args-prompt city="Prague"')
        term.expect("What's weather in Prague?")
        term.expect("Sunny in Prague.")
        term.expect("stopped: answered · 0 calls · 1 round")
        term.ask("/quit")
        assert term.finish() == 0
    (body,) = fake.chat_bodies()  # the model was asked once: the prompt, not the commands
    assert body["messages"][-1] == {"role": "user", "content": "What's weather in Prague?"}
    assert "read_resource" in [tool["function"]["name"] for tool in body["tools"]]


def test_the_chat_bot_in_a_terminal_takes_the_same_commands(tmp_path: Path) -> None:
    import pexpect

    from cli_support import COMMAND, clean_env

    with fake_venice([{"text": "Sunny in Prague."}], tmp_path) as fake:
        child = pexpect.spawn(
            COMMAND, ["chat", "--chat", "me", "--db", "bot.db", "--mcp-config", str(everything_config(tmp_path))],
            cwd=str(tmp_path), env=clean_env(tmp_path, fake.base_url), encoding="utf-8", dimensions=(40, 160),
            timeout=30,
        )  # fmt: skip
        try:
            child.expect_exact("planned by the model fake-model")
            child.expect_exact("›")
            child.sendline("/resources")
            child.expect_exact("demo://resource/static/document/structure.md")
            child.expect_exact("›")
            child.sendline("/prompt args-prompt")
            child.expect_exact("args-prompt: missing city; its arguments:")
            child.expect_exact("›")
            child.sendline("/prompt args-prompt city=Prague")
            child.expect_exact("Sunny in Prague.")
            child.expect_exact("stopped: answered · 0 calls")
            child.expect_exact("›")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0
    (body,) = fake.chat_bodies()
    assert body["messages"][-1] == {"role": "user", "content": "What's weather in Prague?"}


def test_tools_call_shows_the_servers_progress_as_a_question_does(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        arguments = json.dumps({"duration": 1, "steps": 5})
        term = Terminal(
            tmp_path,
            fake,
            "trigger-long-running-operation",
            arguments,
            "--yes",
            config=everything_config(tmp_path),
            command=("tools", "call"),
        )
        term.expect("running trigger-long-running-operation: 2 of 5…")
        term.expect("Long running operation completed")
        assert term.finish() == 0
