"""The MCP Inspector's command-line mode (npm `@modelcontextprotocol/inspector`, `--cli`, pinned
in tests/node/inspector) listing and calling `ask` on the real `venice-agent mcp` over stdio,
against the fake model server. Inspector, command and fake server run together in a network
namespace with only loopback where `unshare -n` works (servers/with_fake_venice.py), so none of
them can dial out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_support import COMMAND, TESTS, FakeServer, clean_env, mcp_config
from servers.node import INSPECTOR_MODULES, bin_path, in_loopback_namespace, loopback_only_works, node22

pytestmark = pytest.mark.slow  # a second line behind test_mcp_front.py (the SDK's own client)
BESIDE_FAKE = TESTS / "servers" / "with_fake_venice.py"


def inspector(folder: Path, script: list[dict[str, Any]], *method: str) -> subprocess.CompletedProcess[str]:
    """`mcp-inspector --cli -e … METHOD… -- venice-agent mcp …` beside the fake model server."""
    env = clean_env(folder, "{base_url}", VENICE_MODEL="fake-model")
    given = [
        "PATH",
        "HOME",
        "VENICE_API_KEY",
        "VENICE_BASE_URL",
        "VENICE_MODEL",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
    ]
    # The Inspector hands its stdio server only the variables given with -e.
    variables = [part for name in given for part in ("-e", f"{name}={env[name]}")]
    config = mcp_config(folder, paid_server=False)
    command = [
        sys.executable, str(BESIDE_FAKE), json.dumps(script), str(folder),
        str(node22()), str(bin_path("mcp-inspector", INSPECTOR_MODULES).resolve()), "--cli", *variables,
        "--cwd", str(folder), *method, "--", COMMAND, "mcp", "--mcp-config", str(config),
    ]  # fmt: skip
    if loopback_only_works():
        command = in_loopback_namespace(command)
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
        env={**env, "VENICE_BASE_URL": ""},
        stdin=subprocess.DEVNULL,
        check=False,
    )


def chat_bodies(folder: Path) -> list[dict[str, Any]]:
    """What the fake model server was asked (it ran beside the Inspector, recording here)."""
    return FakeServer(None, "", folder / "requests.jsonl").chat_bodies()  # type: ignore[arg-type]


def test_the_inspector_lists_ask_with_its_input_and_output_schema(tmp_path: Path) -> None:
    done = inspector(tmp_path, [], "--method", "tools/list")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (tool,) = json.loads(done.stdout)["tools"]
    assert tool["name"] == "ask"
    assert tool["inputSchema"]["required"] == ["question"]
    assert set(tool["inputSchema"]["properties"]) == {
        "question",
        "budget",
        "max_usd",
        "max_rounds",
        "conversation",
    }
    assert {"answer", "stopped_because", "notes", "conversation", "receipt"} <= set(
        tool["outputSchema"]["properties"]
    )


def test_the_inspector_calls_ask_and_gets_the_answer_and_its_receipt(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    script = [{"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]}, {"text": "One file."}]
    done = inspector(
        tmp_path,
        script,
        "--method",
        "tools/call",
        "--tool-name",
        "ask",
        "--tool-arg",
        "question=what is here?",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "One file."}]
    receipt = result["structuredContent"]["receipt"]
    assert receipt["stopped_because"] == "answered" and receipt["rounds"] == 2
    assert receipt["steps"][0]["tool"] == "list_files" and "notes.txt" in str(receipt["steps"][0]["result"])
    users = [m["content"] for m in chat_bodies(tmp_path)[0]["messages"] if m["role"] == "user"]
    assert users == ["what is here?"]
