"""`venice-agent doctor`: the real CLI as a process, against the fake model server and real
stdio MCP servers; a checklist that passes only when every part works."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_support import COMMAND, PYTHON, clean_env, fake_venice

KEY = "sk-test-abcdef1234"


def doctor(tmp_path: Path, base_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "doctor", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(tmp_path, base_url, VENICE_API_KEY=KEY, **env),
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=90,
        check=False,
    )


def config(tmp_path: Path, **servers: dict) -> Path:
    path = tmp_path / "mcp.json"
    time_server = {"command": PYTHON, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    path.write_text(json.dumps({"mcpServers": {"time": time_server, **servers}}))
    return path


def test_every_check_passes_and_the_key_is_masked(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SAVE_HISTORY=0\n")
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--mcp-config", str(config(tmp_path)), "--db", "runs.db")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("✓ ") for line in lines), lines
    text = "\n".join(lines)
    assert f".env: {tmp_path / '.env'}" in text and f"MCP servers: {tmp_path / 'mcp.json'}" in text
    assert "VENICE_API_KEY set (sk-…1234)" in text and KEY not in text
    assert f"{fake.base_url} answers (1 model)" in text
    assert "fake-model, supports function calling" in text
    assert "✓ mcp time" in text and "started, 2 tools" in text
    assert "runs.db (created on first use)" in text


def test_a_server_that_cannot_start_fails_the_doctor_with_advice_also_as_json(tmp_path: Path) -> None:
    ghost = {"command": "no-such-mcp-server"}
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--mcp-config", str(config(tmp_path, ghost=ghost)), "--json")
    assert done.returncode == 2, done.stdout + done.stderr
    report = json.loads(done.stdout)
    checks = {check["name"]: check for check in report["checks"]}
    assert report["ok"] is False and checks["mcp time"]["ok"] is True
    assert checks["mcp ghost"]["ok"] is False
    assert "`no-such-mcp-server` was not found" in checks["mcp ghost"]["detail"]
    assert checks["mcp ghost"]["advice"].startswith("check 'command' in the MCP config")


def test_a_node_too_old_for_a_server_that_needs_it_is_named_with_what_to_install(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    node = bin_dir / "node"
    node.write_text("#!/bin/sh\necho v16.20.0\n")
    node.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{Path(PYTHON).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env = {"PATH": path, "APIFY_TOKEN": "apify-test", "APIFY_MCP_TRANSPORT": "stdio"}
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, **env)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("✗ node"))
    assert f"v16.20.0 at {node}, needed by apify" in lines[at]
    assert lines[at + 1].strip() == "→ install Node.js 22 or later and put it first on PATH"
    assert "apify-test" not in done.stdout


def test_a_model_that_cannot_call_functions_fails_the_model_check(tmp_path: Path) -> None:
    script = {"replies": [], "model_spec": {"capabilities": {"supportsFunctionCalling": False}}}
    with fake_venice(script, tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--no-mcp")  # the model's check alone
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("✗ model "))
    assert lines[at].endswith("fake-model does not support function calling")
    assert (
        lines[at + 1].strip() == "→ choose a model that supports function calling (--model or VENICE_MODEL)"
    )


def test_a_broken_mcp_config_is_one_failed_check_and_the_model_is_still_checked(tmp_path: Path) -> None:
    broken = tmp_path / "mcp.json"
    broken.write_text('{"mcpServers": ')
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--mcp-config", str(broken), "--json")
    assert done.returncode == 2, done.stdout + done.stderr
    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert checks["mcp config"]["ok"] is False and str(broken) in checks["mcp config"]["detail"]
    assert checks["mcp config"]["advice"] == "fix the MCP config file named above"
    assert checks["model"]["ok"] is True
    assert [name for name in checks if name.startswith("mcp ")] == ["mcp config"]  # no server started


def test_a_bad_setting_stops_the_checks_at_the_setting(tmp_path: Path) -> None:
    done = doctor(tmp_path, "not a url")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2].startswith("✗ settings") and "VENICE_BASE_URL" in lines[-2]
    assert lines[-1].strip() == "→ fix the setting named above"
    assert len(lines) == 3  # the files in use, the bad setting and its advice; nothing else was checked


def test_an_http_server_that_failed_is_named_by_its_url_as_tools_list_names_it(tmp_path: Path) -> None:
    from servers.net import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"  # nobody listens there
    path = config(tmp_path, notes={"url": url})
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--mcp-config", str(path))
        listed = subprocess.run(
            [COMMAND, "tools", "list", "--mcp-config", str(path)], capture_output=True, text=True,
            cwd=tmp_path, env=clean_env(tmp_path, fake.base_url), stdin=subprocess.DEVNULL, timeout=90, check=False,
        )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    failed = next(line for line in done.stdout.splitlines() if line.startswith("✗ mcp notes"))
    assert f"(http, {url}; " in failed, failed
    assert f"notes (http, {url}): failed: " in listed.stdout, listed.stdout + listed.stderr
    started = next(line for line in done.stdout.splitlines() if line.startswith("✓ mcp time"))
    assert (
        f"(stdio, {PYTHON} -m mcp_server_time --local-timezone UTC, MCP 2025-11-25)" in started
    )  # stdio keeps the 2025 handshake


def test_doctor_says_whether_sessions_are_saved_and_where(tmp_path: Path) -> None:
    from cli_support import run_cli

    sessions = tmp_path / "data" / "venice-agent" / "sessions.db"
    with fake_venice([{"text": "kept"}], tmp_path) as fake:
        off = doctor(tmp_path, fake.base_url, "--no-mcp")
        assert (
            run_cli(tmp_path, fake.base_url, "--no-mcp", "keep this", VENICE_AGENT_SESSIONS="1").returncode
            == 0
        )
        on = doctor(tmp_path, fake.base_url, "--no-mcp", VENICE_AGENT_SESSIONS="1")
    line = next(line for line in off.stdout.splitlines() if line.startswith("✓ sessions"))
    assert "off (turn on with venice-agent config set sessions on" in line
    assert f"{sessions} (none saved yet)" in line
    line = next(line for line in on.stdout.splitlines() if line.startswith("✓ sessions"))
    assert line.split(None, 2)[2] == f"on · {sessions} (1 session saved)"


def test_doctor_says_what_an_editor_would_get(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--mcp-config", str(config(tmp_path)), MAX_USD="0.05")
    line = next(line for line in done.stdout.splitlines() if "editor (ACP)" in line)
    assert "venice-agent acp: this model, 1 MCP server and the built-in tools" in line
    assert "at most $0.05 a question" in line and "ask in the editor" in line


def test_the_editor_line_counts_what_started_and_is_no_tick_without_a_model(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"mcpServers": {"gone": {"command": str(tmp_path / "no-such-server")}}}))
    with fake_venice({"models_error": {"status": 500}}, tmp_path) as fake:
        no_model = doctor(tmp_path, fake.base_url, "--mcp-config", str(broken))
    with fake_venice([], tmp_path) as fake:
        failed = doctor(tmp_path, fake.base_url, "--mcp-config", str(broken))

    def editor_line(done: subprocess.CompletedProcess[str]) -> str:
        return next(line for line in done.stdout.splitlines() if "editor (ACP)" in line)

    assert editor_line(no_model).startswith("✗ editor (ACP)")
    assert "no model to answer with" in editor_line(no_model) and "this model" not in editor_line(no_model)
    assert "this model, 0 MCP servers (gone did not start) and the built-in tools" in editor_line(failed)


def test_doctor_says_whether_an_editor_can_load_saved_sessions(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        off = doctor(tmp_path, fake.base_url, "--no-mcp")
        on = doctor(tmp_path, fake.base_url, "--no-mcp", VENICE_AGENT_SESSIONS="1")

    def editor_line(done: subprocess.CompletedProcess[str]) -> str:
        return next(line for line in done.stdout.splitlines() if "editor (ACP)" in line)

    assert "sessions off: none can be loaded (session/load)" in editor_line(off)
    assert "each session saved, saved ones can be loaded (session/load)" in editor_line(on)


def probed(tmp_path: Path, script: list) -> tuple[subprocess.CompletedProcess[str], dict[str, dict]]:
    with fake_venice(script, tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url, "--no-mcp", "--probe", "--json", VENICE_MODEL="fake-model")
        bodies = fake.chat_bodies()
    assert [bool(body.get("tools")) for body in bodies] == [True, False]  # two tiny requests
    assert bodies[1]["max_tokens"] == bodies[1]["max_completion_tokens"] == 1
    return done, {check["name"]: check for check in json.loads(done.stdout)["checks"]}


WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}


def test_the_probe_passes_on_a_server_that_streams_tools_and_usage_and_keeps_the_limit(
    tmp_path: Path,
) -> None:
    script = [
        {"tool_calls": [WEATHER], "usage": {"prompt_tokens": 120, "completion_tokens": 12}},
        {"text": "It", "finish_reason": "length", "usage": {"prompt_tokens": 30, "completion_tokens": 1}},
    ]
    done, checks = probed(tmp_path, script)
    assert done.returncode == 0, done.stdout
    assert checks["tool calls"]["detail"] == "streamed (get_weather)"
    assert checks["usage"]["ok"] and checks["output limit"]["detail"] == "honoured (asked for 1 token, got 1)"
    assert checks["tools sent"]["detail"] == "reach the model (the prompt grew 90 tokens with one tool)"


def test_the_probe_fails_a_server_that_sends_nothing_for_tools_no_usage_and_ignores_the_limit(
    tmp_path: Path,
) -> None:
    # As llama-cpp-python's server: a streamed request with tools gets HTTP 200 and an empty
    # body, usage never comes, and max_completion_tokens is not read. (`cut` is the fake's
    # switch: 0 sends no chunk at all; 8 of the text's 9 chunks leaves the usage chunk out.)
    script = [{"tool_calls": [WEATHER], "cut": 0}, {"text": "Paris is sunny today and warm.", "cut": 8}]
    done, checks = probed(tmp_path, script)
    assert done.returncode == 2
    assert checks["tool calls"]["detail"] == "a streamed request with tools got an empty reply"
    assert "cannot stream tool calls" in checks["tool calls"]["advice"]
    assert checks["usage"]["detail"] == "the server streams no token counts"
    assert not checks["output limit"]["ok"]


def test_the_probe_says_when_the_tools_never_reached_the_model(tmp_path: Path) -> None:
    # A chat template that drops the tools: the prompt is no longer with a tool than without.
    script = [
        {"text": "I do not know.", "usage": {"prompt_tokens": 31, "completion_tokens": 5}},
        {"text": "I", "finish_reason": "length", "usage": {"prompt_tokens": 31, "completion_tokens": 1}},
    ]
    done, checks = probed(tmp_path, script)
    assert done.returncode == 2
    assert checks["tools sent"]["detail"] == (
        "the prompt was 31 tokens with a tool and 31 without: the tools did not reach the model"
    )
    assert checks["tool calls"]["detail"].startswith("the model answered in text instead of calling the tool")
