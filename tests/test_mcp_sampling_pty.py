"""End to end in a real pseudo-terminal: one question against server-everything with sampling
and elicitation. The real CLI (`venice-agent "question"`), the fake Venice server as a process
(real HTTP) scripted to call the server's sampling tool and then its elicitation tool; the
person approves both calls and the sampling request, and fills in the form; the answer and the
receipt line show it, and the model saw what the server made of it."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from cli_support import COMMAND, clean_env, fake_venice, run_cli
from servers.node import EVERYTHING_ENV, bin_path

PRICING = {"pricing": {"input": {"usd": 1}, "output": {"usd": 2}}}  # USD per million tokens
FORM = [  # (what the form shows, its prompt, what is typed); Enter keeps a default
    ("Your full, legal name", "String:", "Ada"),
    ("Agree to the terms", "Boolean (y/n):", "y"),
    ("Favorite first line", "[It was a dark and stormy night.]:", ""),
    ("Your email address", "String with email format:", ""),
    ("Portfolio / personal website", "String with uri format:", ""),
    ("Your date of birth", "String with date format:", ""),
    ("Your favorite integer", "Integer [42]:", ""),
    ("Favorite number", "[3.14]:", ""),
    ("Choose your favorite friend", "[Monica]:", ""),
    ("Choose your favorite instruments", "[Guitar]:", ""),
    ("Choose your favorite hero", "[hero-1]:", ""),
    ("Choose your favorite types of fish", "[fish-1]:", ""),
    ("Choose your favorite type of pet", "[pet-1]:", ""),
]


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_question_with_sampling_and_elicitation_runs_end_to_end(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    server = {"command": str(bin_path("mcp-server-everything")), "args": ["stdio"], "env": EVERYTHING_ENV}
    config.write_text(json.dumps({"mcpServers": {"everything": server}}))
    script = {
        "model_spec": PRICING,
        "replies": [
            call("trigger-sampling-request", prompt="name a colour", maxTokens=40),
            {"text": "teal"},  # the server's sampling request
            call("trigger-elicitation-request"),
            {"text": "The server sampled teal, and Ada filled in the form."},
        ],
    }
    with fake_venice(script, tmp_path) as fake:
        child = pexpect.spawn(
            COMMAND, ["--mcp-config", str(config), "ask the server to sample, then fill its form"],
            cwd=str(tmp_path), env=clean_env(tmp_path, fake.base_url), encoding="utf-8",
            dimensions=(40, 200), timeout=90,
        )  # fmt: skip
        try:
            child.expect_exact("Run trigger-sampling-request(")
            child.expect_exact("[y/N]")
            child.sendline("y")
            child.expect_exact("everything asks the model (up to 40 tokens, on this question's account):")
            child.expect_exact("user: Resource trigger-sampling-request context: name a colour")
            child.expect_exact("Send it to the model? [y/N]")
            child.sendline("y")
            child.expect_exact("Run trigger-elicitation-request(")
            child.expect_exact("[y/N]")
            child.sendline("y")
            child.expect_exact("everything asks: Please provide inputs for the following fields:")
            child.expect_exact("[y = fill in, n = decline, Enter = cancel]")
            child.sendline("y")
            for shown, prompt, typed in FORM:
                child.expect_exact(shown)
                child.expect_exact(prompt)
                child.sendline(typed)
            child.expect_exact("The server sampled teal, and Ada filled in the form.")
            # 4 rounds: two tool rounds, the sampling request, the answer; 10+5 tokens each.
            child.expect_exact("stopped: answered · 2 calls · 4 rounds · 60 tokens · $0.00008")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0
        bodies = fake.chat_bodies()
    assert bodies[1]["max_completion_tokens"] == 40 and "tools" not in bodies[1]
    sampled, filled = bodies[2]["messages"][-1], bodies[3]["messages"][-1]
    assert sampled["role"] == "tool" and '"text": "teal"' in sampled["content"]
    assert filled["role"] == "tool" and "- Name: Ada" in filled["content"]


def sampling_script() -> dict:
    return {
        "model_spec": PRICING,
        "replies": [
            call("trigger-sampling-request", prompt="name a colour", maxTokens=40),
            {"text": "teal"},  # the sampling answer, if sampling were offered; else the answer
            {"text": "done"},
        ],
    }


def everything_config(folder: Path) -> Path:
    config = folder / "mcp.json"
    server = {"command": str(bin_path("mcp-server-everything")), "args": ["stdio"], "env": EVERYTHING_ENV}
    config.write_text(json.dumps({"mcpServers": {"everything": server}}))
    return config


def assert_not_offered(bodies: list[dict]) -> None:
    """The server was not offered sampling: server-everything then lists no sampling tool (it
    lists it to a client that offers sampling, as the test above shows), the model's call of it
    is refused as unknown, and no request ever carried a server's sampling question."""
    offered = {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert "trigger-sampling-request" not in offered and "echo" in offered
    assert len(bodies) == 2  # the call's round and the answer: no sampling request between them
    assert bodies[1]["messages"][-1]["role"] == "tool"  # the answer's round, after the refused call


def under_yes_in_a_terminal(tmp_path: Path, script: dict, question: str, shown: str) -> list[dict]:
    """Ask `question` with --yes in a pseudo-terminal against server-everything; `shown` must
    never appear on the screen before the command ends. The requests the model received."""
    config = everything_config(tmp_path)
    with fake_venice(script, tmp_path) as fake:
        child = pexpect.spawn(
            COMMAND, ["--yes", "--mcp-config", str(config), question],
            cwd=str(tmp_path), env=clean_env(tmp_path, fake.base_url), encoding="utf-8",
            dimensions=(40, 200), timeout=90,
        )  # fmt: skip
        try:
            index = child.expect_exact([shown, pexpect.EOF])
            seen = child.before
        finally:
            child.close()
        bodies = fake.chat_bodies()
    assert index == 1, f"it showed {shown!r}: {seen}"
    return bodies


def test_under_yes_in_a_terminal_sampling_is_never_offered(tmp_path: Path) -> None:
    """--yes runs the model's calls without asking, but a server's sampling request needs a
    person's yes, which --yes is not: the server is not offered sampling at all."""
    bodies = under_yes_in_a_terminal(
        tmp_path, sampling_script(), "ask the server to sample", "Send it to the model?"
    )
    assert_not_offered(bodies)


@pytest.mark.parametrize("yes", [True, False])
def test_without_a_terminal_sampling_is_never_offered(tmp_path: Path, yes: bool) -> None:
    config = everything_config(tmp_path)
    with fake_venice(sampling_script(), tmp_path) as fake:
        args = ["--yes"] if yes else []
        done = run_cli(
            tmp_path, fake.base_url, *args, "--mcp-config", str(config), "ask the server to sample"
        )
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert_not_offered(bodies)


def test_under_yes_in_a_terminal_a_servers_form_is_never_put_to_the_person(tmp_path: Path) -> None:
    """--yes runs the model's calls without asking; a server's form (elicitation) asks the person
    for data, which --yes cannot give: the form is not shown, and the server hears no."""
    script = {"model_spec": PRICING, "replies": [call("trigger-elicitation-request"), {"text": "done"}]}
    bodies = under_yes_in_a_terminal(tmp_path, script, "ask the server for a form", "fill in")
    told = bodies[1]["messages"][-1]
    assert told["role"] == "tool" and '"action": "decline"' in told["content"]
