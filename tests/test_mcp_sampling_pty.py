"""End to end in a real pseudo-terminal: one question against server-everything with sampling
and elicitation. The real CLI (`venice-agent "question"`), the fake Venice server as a process
(real HTTP) scripted to call the server's sampling tool and then its elicitation tool; the
person approves both calls and the sampling request, and fills in the form; the answer and the
receipt line show it, and the model saw what the server made of it."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect

from cli_support import COMMAND, clean_env, fake_venice
from servers.node import bin_path

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
    server = {"command": str(bin_path("mcp-server-everything")), "args": ["stdio"]}
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
