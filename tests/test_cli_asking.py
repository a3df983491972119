"""Asking better, through the real command and the fake Venice: -s/--system, stdin as
material, web search, reasoning controls. Each test reads the request really sent."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import fake_venice, run_cli


def system_of(body: dict) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def test_system_adds_an_instruction_after_our_prompt_which_starts_the_same(tmp_path: Path) -> None:
    (tmp_path / "style.md").write_text("Answer in French.\nBe brief.\n")
    with fake_venice([{"text": "a"}, {"text": "b"}, {"text": "c"}], tmp_path) as fake:
        plain = run_cli(tmp_path, fake.base_url, "--no-mcp", "hi")
        text = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "Answer in French.", "hi")
        file = run_cli(tmp_path, fake.base_url, "--no-mcp", "--system", "@style.md", "hi")
        bodies = fake.chat_bodies()
    assert [done.returncode for done in (plain, text, file)] == [0, 0, 0], text.stderr + file.stderr
    ours, with_text, with_file = (system_of(body) for body in bodies)
    assert with_text.startswith(ours) and with_file.startswith(ours)  # the prefix stays stable
    assert with_text.endswith("\nAnswer in French.")
    assert with_file.endswith("\nAnswer in French.\nBe brief.")
    assert [m["role"] for m in bodies[1]["messages"]] == ["system", "user"]  # one system message


def test_system_from_a_missing_file_or_with_a_resume_is_refused_before_any_request(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        missing = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "@nope.md", "hi")
        empty = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "  ", "hi")
        resumed = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "x", "-c", "hi")
        bodies = fake.chat_bodies()
    assert missing.returncode == 2 and missing.stderr.startswith(
        "venice-agent: -s @nope.md: cannot read nope.md"
    )
    assert empty.returncode == 2 and "the instruction is empty" in empty.stderr
    assert resumed.returncode == 2 and "a resumed session keeps its own" in resumed.stderr
    assert bodies == []


def receipt_of(stdout: str) -> dict:
    return json.loads(stdout)


def user_of(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def test_piped_text_is_attached_to_the_question(tmp_path: Path) -> None:
    with fake_venice([{"text": "A summary."}], tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "--no-mcp", "--json", "summarise this", stdin="# Notes\nBuy milk.\n"
        )
        [body] = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert user_of(body) == "summarise this\n\n<stdin>\n# Notes\nBuy milk.\n</stdin>"
    assert "stdin  18 characters attached to the question (local data" in done.stderr
    assert receipt_of(done.stdout)["answer"] == "A summary."


def test_a_dash_reads_the_whole_of_stdin_as_the_question(tmp_path: Path) -> None:
    with fake_venice([{"text": "4"}], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "-", stdin="What is\n2 + 2?\n")
        empty = run_cli(tmp_path, fake.base_url, "--no-mcp", "-", stdin="\n")
        [body] = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert user_of(body) == "What is\n2 + 2?"
    assert "attached" not in done.stderr  # the question itself, not material
    assert empty.returncode == 2 and "stdin was empty" in empty.stderr


def test_piped_lines_without_a_question_stay_the_repl(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", stdin="first\nsecond\n")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert [user_of(body) for body in bodies] == ["first", "first"]  # the second carries the history
    assert [m["content"] for m in bodies[1]["messages"] if m["role"] == "user"] == ["first", "second"]


def test_piped_material_is_local_data_so_a_tool_that_leaves_the_machine_asks(tmp_path: Path) -> None:
    from cli_support import mcp_config

    servers = str(mcp_config(tmp_path, paid_server=False))  # get_current_time: read-only, trusted
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "I could not look the time up."},
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "It is noon."},
    ]
    with fake_venice(script, tmp_path) as fake:
        piped = run_cli(
            tmp_path, fake.base_url, "--mcp-config", servers, "--json", "what time?", stdin="secret notes\n"
        )
        plain = run_cli(tmp_path, fake.base_url, "--mcp-config", servers, "--json", "what time?")
        bodies = fake.chat_bodies()
    assert piped.returncode == 0 and plain.returncode == 0, piped.stderr + plain.stderr
    # With the material in the conversation, the read-only tool needs a yes, and nobody is there.
    assert receipt_of(piped.stdout)["steps"] == []
    tool_message = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert "declined" in tool_message["content"]
    assert "skipped get_current_time: it may send local file contents off this machine" in piped.stderr
    # Without it, the same call runs free.
    assert [step["tool"] for step in receipt_of(plain.stdout)["steps"]] == ["get_current_time"]
