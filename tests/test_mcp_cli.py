"""`venice-agent tools list`, `tools call` and `run --mcp-config`, as processes, on real servers."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from venice_terminal_agent.fronts.text import CONSENT_KEY

SERVERS = Path(__file__).parent / "servers"
BIN = Path(sys.executable).parent


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "mcp.json"
    servers = {
        "paged": {"command": sys.executable, "args": [str(SERVERS / "paged.py")], "trusted": True},
        "time": {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.fixture
def paged_only(tmp_path) -> Path:
    path = tmp_path / "paged.json"
    servers = {"paged": {"command": sys.executable, "args": [str(SERVERS / "paged.py")], "trusted": True}}
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def venice_agent(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VENICE_", "APIFY_"))}
    return subprocess.run(
        [str(BIN / "venice-agent"), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
        timeout=120, env=env, cwd=cwd, check=False,
        start_new_session=True,  # no controlling terminal either: consent cannot be asked
    )  # fmt: skip


def test_tools_list_shows_servers_tools_and_consent(config):
    done = venice_agent("tools", "list", "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0] == f"paged (stdio, {sys.executable} {SERVERS / 'paged.py'}, MCP 2025-11-25): 14 tools"
    )  # the revision it speaks
    rows = [line.split(maxsplit=2) for line in lines if line.startswith("  ")]
    assert ["free", "read_note", "Read a note"] in rows  # trusted, annotated read-only
    assert any(line.startswith("  asks crash ") for line in lines)
    assert any(line.startswith("time (stdio, ") and line.endswith(": 2 tools") for line in lines)
    assert any(line.startswith("  asks get_current_time  ") for line in lines)
    assert lines[-1] == CONSENT_KEY  # the same key as the chat's /tools


def test_tools_list_json_and_a_broken_server(config):
    data = json.loads(config.read_text())
    data["mcpServers"]["ghost"] = {"command": "no-such-mcp-server"}
    config.write_text(json.dumps(data))
    done = venice_agent("tools", "list", "--mcp-config", str(config), "--json")
    assert done.returncode == 2  # a server failed to start; the others are still listed
    listing = json.loads(done.stdout)
    assert [(s["name"], s["state"]) for s in listing["servers"]] == [
        ("paged", "ready"), ("time", "ready"), ("ghost", "failed"),
    ]  # fmt: skip
    assert "`no-such-mcp-server` was not found" in listing["servers"][2]["error"]
    consent = {tool["name"]: tool["needs_consent"] for tool in listing["tools"]}
    assert consent["read_note"] is False and consent["get_current_time"] is True and len(consent) == 16


def test_tools_call_prints_the_result_or_fails_with_status_5(config, paged_only):
    done = venice_agent("tools", "call", "read_note", "--mcp-config", str(paged_only))
    assert (done.returncode, done.stdout) == (0, "a note\n")
    done = venice_agent("tools", "call", "broken", "{}", "--mcp-config", str(paged_only), "--yes")
    assert done.returncode == 5
    assert done.stderr.strip() == "venice-agent tools call: broken: the database is on fire"
    done = venice_agent(
        "tools", "call", "get_current_time", '{"timezone": "UTC"}', "--mcp-config", str(config), "-y"
    )
    assert done.returncode == 0 and json.loads(done.stdout)["timezone"] == "UTC"


def test_tools_call_never_runs_a_tool_needing_consent_without_a_yes(paged_only):
    done = venice_agent("tools", "call", "crash", "{}", "--mcp-config", str(paged_only))
    assert done.returncode == 2
    assert (
        "skipped crash: it needs your consent, and there is no terminal to ask on (or use --yes)"
        in done.stderr
    )


def test_tools_call_usage_errors(paged_only):
    config = paged_only
    done = venice_agent("tools", "call", "nope", "{}", "--mcp-config", str(config))
    assert done.returncode == 2 and "there is no tool named 'nope' (tools: big, broken" in done.stderr
    done = venice_agent("tools", "call", "read_ntoe", "{}", "--mcp-config", str(config))
    assert "there is no tool named 'read_ntoe'; did you mean read_note? (tools: big," in done.stderr
    done = venice_agent("tools", "call", "read_note", "[1]", "--mcp-config", str(config))
    assert done.returncode == 2 and "the arguments are a JSON object" in done.stderr
    done = venice_agent("tools", "call", "read_note", "{", "--mcp-config", str(config))
    assert done.returncode == 2 and "the arguments are not JSON" in done.stderr
    done = venice_agent("tools", "list", "--mcp-config", str(config.parent / "missing.json"))
    assert done.returncode == 2 and "the MCP config" in done.stderr and "no such file" in done.stderr


def test_tools_call_whose_server_did_not_start_says_so_in_one_line(tmp_path):
    config = tmp_path / "ghost.json"
    config.write_text(json.dumps({"mcpServers": {"ghost": {"command": "no-such-mcp-server"}}}))
    done = venice_agent("tools", "call", "haunt", "{}", "--mcp-config", str(config))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()  # not a warning, then "there is no tool named" as if none were meant
    assert line.startswith(
        "venice-agent tools call: there is no tool named 'haunt' among the servers that started "
        "(tools: none): ghost cannot start: `no-such-mcp-server` was not found"
    ), line


def test_run_calls_mcp_tools_beside_the_built_in_ones(paged_only, tmp_path):
    config = paged_only
    plan = tmp_path / "plan.json"
    steps = [
        {"tool": "read_note"},
        {"tool": "echo_2", "arguments": {"text": "hello"}},
        {"tool": "list_files"},
        {"answer": "done"},
    ]
    plan.write_text(json.dumps({"steps": steps, "budget": 3}))
    done = venice_agent("run", str(plan), "--mcp-config", str(config), "--yes", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["stopped_because"] == "answered"
    assert [step["result"] for step in receipt["steps"][:2]] == [
        "a note",
        '{"tool": "echo_2", "text": "hello"}',
    ]
    assert receipt["steps"][2]["result"] == ["paged.json", "plan.json"]
    # Without --yes and without a terminal, the paid call is declined and never runs; a plan
    # cannot do without it, so the run ends there on tool_error (5), never "answered".
    done = venice_agent("run", str(plan), "--mcp-config", str(config), "--json", cwd=tmp_path)
    receipt = json.loads(done.stdout)
    assert done.returncode == 5 and receipt["stopped_because"] == "tool_error"
    assert [step["tool"] for step in receipt["steps"]] == ["read_note"]
    assert receipt["refusal"] == (
        "echo_2 did not run: this call needs the user's yes and there was no one to ask, so the plan stops here"
    )


def test_tools_help_imports_neither_mcp_nor_openai():
    code = (
        "import sys\nfrom venice_terminal_agent.cli.app import app\n"
        "for args in (['tools', '--help'], ['tools', 'call', '--help'], ['run', '--help']):\n"
        "    try:\n        app(args, prog_name='venice-agent')\n    except SystemExit:\n        pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'openai', 'httpx2'}), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "venice-agent tools call [OPTIONS]" in done.stdout and "--mcp-config" in done.stdout


def test_tools_call_reads_every_page_of_a_long_result(paged_only, tmp_path):
    env_config = ["--mcp-config", str(paged_only), "--yes"]
    lines = 5000  # 7 characters each: 35,000 characters, two pages of the default 20,000
    first = venice_agent("tools", "call", "big", f'{{"lines": {lines}}}', *env_config)
    second = venice_agent("tools", "call", "big", f'{{"lines": {lines}}}', *env_config, "--page", "2")
    whole = venice_agent("tools", "call", "big", f'{{"lines": {lines}}}', *env_config, "--full")
    expected = "".join(f"{i:06d}\n" for i in range(lines))
    assert first.returncode == second.returncode == whole.returncode == 0, first.stderr
    assert first.stdout + second.stdout == expected  # cut at a line's end, nothing lost or added
    assert len(first.stdout) <= 20_000 and whole.stdout == expected
    assert first.stderr.strip() == "[page 1 of 2 of 35000 characters; the next: --page 2, or --full for all]"


def test_tools_call_prints_structured_results_as_indented_json(paged_only):
    done = venice_agent("tools", "call", "echo_1", '{"text": "a\\nb"}', "--mcp-config", str(paged_only), "-y")
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{\n  "tool": "echo_1",\n  "text": "a\\nb"\n}\n'


def test_tools_list_json_names_each_renamed_tool_s_original(tmp_path):
    server = {"command": sys.executable, "args": [str(SERVERS / "paged.py")]}
    config = tmp_path / "two.json"
    config.write_text(json.dumps({"mcpServers": {"a": server, "b": server}}))
    done = venice_agent("tools", "list", "--mcp-config", str(config), "--json")
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert tools["a__echo_0"]["original_name"] == "echo_0" and tools["b__echo_0"]["server"] == "b"


def test_a_hung_tool_ends_at_mcp_call_timeout_with_the_real_reason(paged_only: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VENICE_", "APIFY_"))}
    done = subprocess.run(
        [str(BIN / "venice-agent"), "tools", "call", "hang", "--mcp-config", str(paged_only), "--yes"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
        env={**env, "MCP_CALL_TIMEOUT": "0.5"},
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert "paged did not answer the call to hang within 0.5 s (the per-call timeout, MCP_CALL_TIMEOUT)" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
