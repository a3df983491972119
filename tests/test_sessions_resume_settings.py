"""Resuming under other settings: another --model is said in one line and only the reasoning
fields are dropped; without --model the session's model goes on; --session-max-usd counts what
the session spent before the resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import fake_venice
from test_sessions_cli import Cli, call, sent, stored

REASONING = {
    "reasoning_content": "thinking",
    "thought_signature": "sig",
    "reasoning_details": [{"type": "x", "index": 0}],
}


def test_another_model_is_said_and_only_reasoning_fields_are_dropped(tmp_path: Path) -> None:
    script = {
        "models": ["alpha", "beta"],
        "replies": [
            {**call("list_files", path="."), **REASONING},
            {"text": "Two files.", **REASONING},
            {"text": "a"},
            {"text": "b"},
        ],
    }
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("--model", "alpha", "list them").returncode == 0
        kept = [json.loads(text) for text in stored(tmp_path)]
        assert all(key in kept[2] for key in REASONING)  # kept whole in the session
        same = run("-c", "again", VENICE_MODEL="beta")  # the session's model, not the environment's
        assert same.returncode == 0, same.stderr
        assert fake.chat_bodies()[-1]["model"] == "alpha"
        assert sent(fake.chat_bodies()[-1])[: len(kept)] == [json.dumps(m) for m in kept]  # nothing dropped
        kept = [json.loads(text) for text in stored(tmp_path)]
        other = run("-c", "--model", "beta", "and now?")
        assert other.returncode == 0, other.stderr
        assert (
            "this session was with alpha; it goes on with beta (its reasoning fields left out)"
            in other.stderr
        )
        body = fake.chat_bodies()[-1]
        assert body["model"] == "beta"
        expected = [
            {k: v for k, v in m.items() if k not in REASONING} if m["role"] == "assistant" else m
            for m in kept
        ]
        assert body["messages"][:-1] == expected
        assert [list(m) for m in body["messages"][:-1]] == [list(m) for m in expected]  # keys in order
        assert any(any(key in m for key in REASONING) for m in kept)  # there was something to drop


PRICED = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 4000}
SPENT = {"prompt_tokens": 10, "completion_tokens": 5, "cost": {"usd": 0.059}}


def test_the_session_cap_counts_what_the_session_spent_before_the_resume(tmp_path: Path) -> None:
    # A request's input alone could cost about $0.002 here (each byte sent a token at $1 a million).
    script = {"replies": [{"text": "one", "usage": SPENT}, {"text": "fresh"}], "model_spec": PRICED}
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("--session-max-usd", "0.06", "first").returncode == 0
        resumed = run("-c", "--session-max-usd", "0.06", "--json", "second")
        assert "$0.059 so far" in resumed.stderr
        assert resumed.returncode == 8, resumed.stderr  # $0.059 spent: the next request could pass $0.06
        assert json.loads(resumed.stdout)["stopped_because"] == "cost_cap"
        assert len(fake.chat_bodies()) == 1  # refused before it was sent
        fresh = run("--session-max-usd", "0.06", "a new session")
        assert fresh.returncode == 0, fresh.stderr  # the same cap, nothing spent yet: it runs


def test_another_server_is_said_in_one_line_and_the_conversation_goes_there_whole(tmp_path: Path) -> None:
    """A session resumed against another base URL (another server: other models, other prices)
    goes on there, said once, with the stored conversation sent as it was."""
    (tmp_path / "other").mkdir()
    with (
        fake_venice({"replies": [{"text": "one"}]}, tmp_path) as first,
        fake_venice({"replies": [{"text": "two"}, {"text": "three"}]}, tmp_path / "other") as second,
    ):
        run = Cli(tmp_path, first.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("first").returncode == 0
        kept = [json.loads(text) for text in stored(tmp_path)]
        moved = run("-c", "second", VENICE_BASE_URL=second.base_url)
        assert moved.returncode == 0, moved.stderr
        line = f"this session was with the server at {first.base_url}; it goes on with {second.base_url}"
        assert moved.stderr.count(line) == 1
        assert second.chat_bodies()[-1]["messages"][:-1] == kept
        same = run("-c", "third", VENICE_BASE_URL=second.base_url)
        assert same.returncode == 0, same.stderr
        assert "this session was with the server at" not in same.stderr  # said once, at the move


def listed(run: Cli) -> tuple[str, dict[str, Any]]:
    """`sessions list`'s line for the one session, and its `--json` entry."""
    text, as_json = run("sessions", "list"), run("sessions", "list", "--json")
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    (line,) = text.stdout.splitlines()
    (entry,) = json.loads(as_json.stdout)
    return line, entry


def test_a_session_on_a_server_without_prices_says_its_cost_is_unknown_not_zero(tmp_path: Path) -> None:
    # The fake lists no prices and sends no cost: each receipt says "cost unknown", and so does
    # the session's total, on the resume line, in the lists and in the export.
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        first = run("first")
        assert first.returncode == 0 and "cost unknown" in first.stdout, first.stderr
        resumed = run("-c", "second")
        assert resumed.returncode == 0, resumed.stderr
        assert "$0.00" not in resumed.stderr
        assert "· 1 question · " in resumed.stderr and " · cost unknown" in resumed.stderr
        line, entry = listed(run)
        assert "$0.00" not in line and "· cost unknown ·" in line
        assert entry["cost_unknown"] is True and entry["cost"] == 0  # 0 known, the rest unknown
        exported = run("sessions", "export", entry["id"], "--format", "md")
        assert "$0.00" not in exported.stdout and "· cost unknown ·" in exported.stdout
        in_repl = run("-c", stdin="/sessions\n")  # the REPL's own list
        assert in_repl.returncode == 0, in_repl.stderr
        assert f"* {entry['id']}  first  · 2 q · " in in_repl.stdout and "$0.00" not in in_repl.stdout
        assert in_repl.stdout.rstrip().endswith("· cost unknown")


def test_a_session_of_known_and_unknown_costs_says_at_least_what_is_known(tmp_path: Path) -> None:
    # A priced server; the second question's reply is cut before its usage came (its cost is
    # unknown, and it is rolled back: only its money is kept).
    cut = {"text": "Cut before the usage", "cut": 2}
    script = {
        "replies": [
            {"text": "one", "usage": {**SPENT, "cost": {"usd": 0.03}}},
            cut,
            cut,
            cut,
            cut,
            {"text": "three"},
        ],
        "model_spec": PRICED,
    }
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("first").returncode == 0
        failed = run("-c", "second")
        assert "cost unknown" in failed.stdout + failed.stderr, failed.stdout + failed.stderr
        line, entry = listed(run)
        assert "· at least $0.03 ·" in line
        assert entry["cost_unknown"] is True and entry["cost"] == 0.03
        resumed = run("-c", "--json", "third")
        assert "at least $0.03 so far" in resumed.stderr
