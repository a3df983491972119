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
