"""`venice-agent run` as a user runs it: a real process, real files, real exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
COMMAND = str(Path(sys.executable).parent / "venice-agent")


def venice_agent(*args: str, stdin: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60, check=False
    )


def test_readme_first_command_answers() -> None:
    readme = (REPO / "README.md").read_text()
    assert "uv run venice-agent run examples/tour.json" in readme.split("\n\n")[1]
    done = venice_agent("run", "examples/tour.json")
    assert done.returncode == 0, done.stderr
    assert "→ list_files" in done.stdout
    assert "→ read_file" in done.stdout
    assert "→ page" in done.stdout
    assert "stopped: answered · 3 calls" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("plan", "status", "exit_name"),
    [
        ("tour.json", 0, "answered"),
        ("budget.json", 3, "budget"),
        ("repeat.json", 4, "repeated_call"),
        ("unknown-tool.json", 5, "tool_error"),
    ],
)
def test_each_exit_has_its_status_and_json_receipt(plan: str, status: int, exit_name: str) -> None:
    done = venice_agent("run", str(EXAMPLES / plan), "--json")
    assert done.returncode == status, done.stderr
    receipt = json.loads(done.stdout)  # the receipt alone on stdout
    assert receipt["stopped_because"] == exit_name
    assert {"steps", "answer", "refusal"} <= set(receipt)
    assert (receipt["refusal"] is None) == (exit_name == "answered")


def test_budget_flag_overrides_the_plan() -> None:
    done = venice_agent("run", str(EXAMPLES / "tour.json"), "--budget", "1", "--json")
    assert done.returncode == 3
    assert len(json.loads(done.stdout)["steps"]) == 1


def test_plan_from_stdin() -> None:
    plan = json.dumps([{"tool": "list_files", "arguments": {"path": "examples"}}, {"answer": "seen"}])
    done = venice_agent("run", "-", "--json", stdin=plan)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "seen"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"steps": 3}', "a plan is a list of steps"),
        ('[{"think": "hard"}]', "step 1: unknown step kind"),
        ('[{"tool": "x", "arguments": [1]}]', "step 1: 'arguments' is an object"),
        ('{"steps": [], "budget": -1}', "'budget' is a whole number"),
    ],
)
def test_bad_plan_is_one_line_and_status_2(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    done = venice_agent("run", str(bad))
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_missing_plan_file_is_status_2(tmp_path: Path) -> None:
    done = venice_agent("run", str(tmp_path / "nope.json"))
    assert done.returncode == 2
    assert "nope.json: no such file" in done.stderr
    assert "Traceback" not in done.stderr


def test_root_confines_the_files(tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_text("inside")
    plan = json.dumps([{"tool": "read_file", "arguments": {"path": "note.txt"}}, {"answer": "ok"}])
    done = venice_agent("run", "-", "--json", "--root", str(tmp_path), stdin=plan)
    assert json.loads(done.stdout)["steps"][0]["result"] == "inside"


def test_escape_sequences_from_a_file_do_not_reach_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "evil.txt").write_text("\x1b]0;pwned\x07\x1b[2Jhello")
    plan = json.dumps([{"tool": "read_file", "arguments": {"path": "evil.txt"}}, {"answer": "ok"}])
    done = venice_agent("run", "-", "--root", str(tmp_path), stdin=plan)
    assert "\x1b" not in done.stdout
    assert "\\x1b]0;pwned" in done.stdout


@pytest.mark.parametrize(("plan", "last"), [("budget.json", "not_run"), ("unknown-tool.json", "invalid")])
def test_the_call_a_plan_stopped_at_is_on_the_receipt_but_not_a_step(plan: str, last: str) -> None:
    receipt = json.loads(venice_agent("run", str(EXAMPLES / plan), "--json").stdout)
    outcomes = [item["outcome"] for item in receipt["proposed"]]
    assert outcomes == ["ran"] * len(receipt["steps"]) + [last]


def paid_plan_without_a_terminal(folder: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """`venice-agent run` of a plan whose first step is the paid `charge`, with no controlling
    terminal (nobody can be asked), its receipt as JSON. The shop alone is its MCP server."""
    from cli_support import mcp_config

    plan = json.dumps([{"tool": "charge", "arguments": {"amount": 5}}, {"answer": "charged"}])
    return subprocess.run(
        [COMMAND, "run", "-", "--json", *flags, "--mcp-config", str(mcp_config(folder, time_server=False))],
        input=plan,
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=60,
        check=False,
        start_new_session=True,
    )


def test_a_paid_call_in_a_plan_with_no_one_to_ask_stops_it_and_says_so(tmp_path: Path) -> None:
    done = paid_plan_without_a_terminal(tmp_path)
    receipt = json.loads(done.stdout)
    assert done.returncode == 5 and receipt["stopped_because"] == "tool_error", done.stderr
    assert receipt["refusal"] == (
        "charge did not run: this call needs the user's yes and there was no one to ask, so the plan stops here"
    )
    assert receipt["proposed"] == [{"tool": "charge", "arguments": {"amount": 5}, "outcome": "no_one_to_ask"}]


def test_a_readme_plan_run_outside_a_clone_says_where_the_examples_are(tmp_path: Path) -> None:
    """The installed command has no examples folder: the README's plan is missing outside a
    clone, and the line says which command runs the tour shipped with it."""
    done = venice_agent("run", "examples/tour.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "venice-agent run: examples/tour.json: no such file (the examples "
        "are in a clone of the repository; venice-agent demo --tour runs the tour shipped with the command)\n"
    )
    assert "demo --tour" not in venice_agent("run", "mine.json", cwd=tmp_path).stderr


def test_under_yes_a_paid_call_in_a_plan_runs_and_the_json_keeps_stdout_to_itself(tmp_path: Path) -> None:
    """`--yes` approves the plan's paid call without asking; without it (the test above) nobody
    is asked. The terminal's words go to stderr, so stdout is the receipt alone."""
    done = paid_plan_without_a_terminal(tmp_path, "--yes")
    receipt = json.loads(done.stdout)
    assert done.returncode == 0 and receipt["stopped_because"] == "answered", done.stderr
    assert [step["result"] for step in receipt["steps"]] == ['{"result": "charged 5"}']


def test_in_a_terminal_a_plans_paid_call_asks_and_a_yes_runs_it(tmp_path: Path) -> None:
    """With a terminal, `run` asks before the paid call (on stderr, default no); y runs it."""
    import pexpect

    from cli_support import mcp_config

    (tmp_path / "plan.json").write_text(
        json.dumps([{"tool": "charge", "arguments": {"amount": 5}}, {"answer": "charged"}]), encoding="utf-8"
    )
    child = pexpect.spawn(
        COMMAND,
        ["run", "plan.json", "--mcp-config", str(mcp_config(tmp_path, time_server=False))],
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.expect_exact('Run charge({"amount": 5})? [y/N]')
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "charged 5" in (child.before or "")
