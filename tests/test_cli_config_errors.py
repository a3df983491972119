"""Configuration errors are configuration errors: one line, exit status 2, before any request;
and one server's unset `${NAME}` disables that server alone. The real CLI as a process,
against the fake model server and a real stdio MCP server (mcp-server-time)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_support import COMMAND, PYTHON, clean_env, fake_venice
from venice_terminal_agent.config import load_settings
from venice_terminal_agent.core.receipt import EXIT_STATUS, Exit
from venice_terminal_agent.mcp.servers_file import parse_servers

TOOLS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "tools.md"


def run(tmp_path: Path, base_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(tmp_path, base_url, **env),
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # no controlling terminal: consent cannot be asked
        timeout=60,
        check=False,
    )


def time_only(tmp_path: Path, **more: dict) -> Path:
    servers = {"time": {"command": PYTHON, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {**servers, **more}}))
    return path


@pytest.mark.parametrize("base_url", ["not a url", "localhost:8000/v1"])
def test_a_malformed_base_url_is_one_line_and_exit_2_before_any_request(
    tmp_path: Path, base_url: str
) -> None:
    done = run(tmp_path, base_url, "--mcp-config", str(time_only(tmp_path)), "hello")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"venice-agent: bad setting: VENICE_BASE_URL: {base_url!r} is not an http(s) URL, "
        "e.g. https://api.venice.ai/api/v1"
    ]


@pytest.mark.parametrize("model", [["--model", "fake-model"], []], ids=["with --model", "discovered"])
def test_a_key_rejected_on_the_first_chat_request_ends_key_rejected_and_its_status_says_so(
    tmp_path: Path, model: list[str]
) -> None:
    # Issue 22, fault 10: the receipt said `model_error` while the process exited 2.
    with fake_venice([{"status": 401, "error": "Authentication failed"}], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, *model, "--mcp-config", str(time_only(tmp_path)), "hello")
    assert done.returncode == EXIT_STATUS[Exit.KEY_REJECTED] == 13, done.stdout + done.stderr
    assert "rejected the API key" in done.stderr  # why it failed: stderr; stdout holds the receipt line
    assert done.stdout.splitlines()[-1].startswith("stopped: key_rejected · 0 calls")


def test_a_key_rejected_at_start_up_exits_as_a_rejected_key_in_a_question_does(tmp_path: Path) -> None:
    failing = {"replies": [], "models_error": {"status": 401, "error": "Authentication failed"}}
    with fake_venice(failing, tmp_path) as fake:  # model discovery is the first request
        done = run(tmp_path, fake.base_url, "--no-mcp", "hello")
    assert done.returncode == EXIT_STATUS[Exit.KEY_REJECTED], done.stdout + done.stderr
    assert "rejected the API key" in done.stderr and done.stdout == ""


def test_an_unset_variable_disables_that_server_alone_with_a_warning(tmp_path: Path) -> None:
    notes = {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}}
    config = time_only(tmp_path, notes=notes)
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "Noon."},
    ]
    with fake_venice(script, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--mcp-config", str(config), "--yes", "what time is it?")
    assert done.returncode == 0, done.stdout + done.stderr
    # `> answer.txt` would hold the answer and the receipt line only; warnings are on stderr.
    assert done.stdout.splitlines() == [
        "Noon.",
        "stopped: answered · 1 call · 2 rounds · 30 tokens · cost unknown",
    ]
    assert "→ get_current_time" in done.stderr
    assert "notes cannot start: 'headers' uses ${NOTES_TOKEN}, which is not set" in done.stderr
    assert "ready)" not in done.stderr  # the start-up spinner is for terminals only


def test_an_unset_variable_in_the_url_query_is_named_not_masked(tmp_path: Path) -> None:
    # A query value is masked as a secret; an unset ${NAME} there is the name to set, not a secret.
    config = tmp_path / "mcp.json"
    notes = {"url": "http://127.0.0.1:9/mcp?token=${NOTES_TOKEN}"}
    config.write_text(json.dumps({"mcpServers": {"notes": notes}}))
    done = run(tmp_path, "http://127.0.0.1:9", "tools", "list", "--mcp-config", str(config))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "notes cannot start: 'url' uses ${NOTES_TOKEN}, which is not set" in done.stdout


def test_the_manuals_example_mcp_json_loads_as_printed_without_its_variable() -> None:
    blocks = re.findall(r"```json\n(\{\n  \"mcpServers\".*?)```", TOOLS_PAGE.read_text(), re.S)
    block = next((found for found in blocks if '"time"' in found), None)  # "Your own servers"
    assert block is not None
    servers = parse_servers(json.loads(block), "docs/tools.md", load_settings(), environ={})
    assert [(server.name, bool(server.unavailable)) for server in servers] == [
        ("time", False),
        ("notes", True),
        ("apify", False),
    ]


def test_apifys_flags_without_apify_are_refused_not_ignored(tmp_path: Path) -> None:
    config = time_only(tmp_path)
    with fake_venice([], tmp_path) as fake:
        asked = run(tmp_path, fake.base_url, "--mcp-config", str(config), "--tools", "actors", "what time?")
        listed = run(tmp_path, fake.base_url, "tools", "list", "--mcp-config", str(config), "--tools", "docs")
        none = run(tmp_path, fake.base_url, "--no-mcp", "--tools", "docs", "--transport", "http", "hi")
        assert fake.chat_bodies() == []
    assert asked.returncode == listed.returncode == none.returncode == 2
    assert asked.stderr.splitlines() == [
        "venice-agent: --tools only applies to Apify's MCP server, which is not used here "
        "(MCP servers: time): drop --tools, or add Apify to the MCP config"
    ]
    assert "venice-agent tools list: --tools only applies to Apify's MCP server" in listed.stderr
    assert (
        "--tools and --transport only apply to Apify's MCP server, which is not used here (no MCP server)"
        in (none.stderr)
    )


def test_a_bad_value_is_named_as_it_was_given_flag_or_variable(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        flag = run(tmp_path, fake.base_url, "--no-mcp", "--max-usd", "-1", "hi")
        variable = run(tmp_path, fake.base_url, "--no-mcp", "hi", MAX_USD="-1")
        assert fake.chat_bodies() == []
    assert flag.returncode == variable.returncode == 2
    assert flag.stderr.splitlines() == ["venice-agent: bad setting: --max-usd: must be more than 0, not -1"]
    assert variable.stderr.splitlines() == ["venice-agent: bad setting: MAX_USD: must be more than 0, not -1"]


@pytest.mark.parametrize("given", ["inf", "1e400", "nan", "-inf"])
def test_a_money_cap_that_is_no_finite_number_is_refused_before_any_request(
    tmp_path: Path, given: str
) -> None:
    """An infinite cap (1e400 reads as one) would cap nothing, silently: as any bad cap, it is
    one line naming the flag or the variable, status 2, and nothing is asked of the model."""
    with fake_venice([], tmp_path) as fake:
        flag = run(tmp_path, fake.base_url, "--no-mcp", "--max-usd", given, "hi")
        session = run(tmp_path, fake.base_url, "--no-mcp", "hi", SESSION_MAX_USD=given)
        assert fake.chat_bodies() == []
    assert flag.returncode == session.returncode == 2
    shown = f"{float(given):g}"
    assert flag.stderr.splitlines() == [
        f"venice-agent: bad setting: --max-usd: must be a finite number, not {shown}"
    ]
    assert session.stderr.splitlines() == [
        f"venice-agent: bad setting: SESSION_MAX_USD: must be a finite number, not {given}"
    ]  # a variable is shown as it was written; the flag was read as a number first
