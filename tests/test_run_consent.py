"""`venice-agent run PLAN` asks at the terminal for a call that needs a yes (the README's table
of fronts: "asked at the terminal (MCP tools with `--mcp-config`); `--yes`"). Without a terminal
the plan stops (tests/test_run_cli.py); here a person is there, in a real pseudo-terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from cli_support import COMMAND, clean_env, mcp_config

PLAN = [{"tool": "charge", "arguments": {"amount": 5}}, {"answer": "charged"}]


def run_in_a_terminal(folder: Path, *args: str, answer: str | None) -> tuple[str, int, dict]:
    """The plan run at a terminal; `answer` typed at the consent prompt (None: expect none)."""
    plan = folder / "plan.json"
    plan.write_text(json.dumps(PLAN))
    command = ["run", str(plan), "--json", *args]
    config = mcp_config(folder, time_server=False)
    child = pexpect.spawn(
        COMMAND, [*command, "--mcp-config", str(config)], cwd=str(folder),
        env=clean_env(folder, "http://127.0.0.1:9"), encoding="utf-8", dimensions=(40, 200), timeout=90,
    )  # fmt: skip
    try:
        if answer is not None:
            child.expect_exact('Run charge({"amount": 5})')
            child.expect_exact("[y/N]")
            child.sendline(answer)
        said = child.read()
    finally:
        child.close()
    return said, child.exitstatus, json.loads(said[said.index('{\r\n  "stopped_because"') :])


def test_yes_at_the_prompt_runs_the_paid_call(tmp_path: Path) -> None:
    said, status, receipt = run_in_a_terminal(tmp_path, answer="y")
    assert status == 0 and receipt["stopped_because"] == "answered", said
    assert [step["result"] for step in receipt["steps"]] == ['{"result": "charged 5"}']


@pytest.mark.parametrize("answer", ["n", ""])  # no, and Enter: the default is no
def test_no_at_the_prompt_stops_the_plan_and_the_call_never_runs(tmp_path: Path, answer: str) -> None:
    said, status, receipt = run_in_a_terminal(tmp_path, answer=answer)
    assert status == 5 and receipt["stopped_because"] == "tool_error", said
    assert receipt["steps"] == [] and "charged 5" not in said
    assert receipt["proposed"][0]["outcome"] == "declined"


def test_yes_flag_runs_it_without_asking(tmp_path: Path) -> None:
    said, status, receipt = run_in_a_terminal(tmp_path, "--yes", answer=None)
    assert status == 0 and "[y/N]" not in said
    assert [step["result"] for step in receipt["steps"]] == ['{"result": "charged 5"}']
