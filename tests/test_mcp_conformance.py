"""The MCP conformance suite's client scenarios, run by its own runner against our session code
(`servers/conformance_client.py` opens an McpToolbox on the URL the runner gives it), in a
loopback-only network namespace where `unshare -n` works."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servers.node import bin_path, in_loopback_namespace, loopback_only_works, node22

SERVERS = Path(__file__).parent / "servers"


@pytest.mark.parametrize("scenario", ["initialize", "tools_call"])
def test_conformance_client_scenario(scenario, tmp_path):
    runner = bin_path("conformance").resolve()
    client = f"{sys.executable} {SERVERS / 'conformance_client.py'}"
    env = {**os.environ, "PATH": f"{node22().parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [
        str(node22()),
        str(runner),
        "client",
        "--command",
        client,
        "--scenario",
        scenario,
        "-o",
        str(tmp_path),
    ]
    if loopback_only_works():  # its test servers listen on every interface: keep them to ourselves
        command = in_loopback_namespace(command)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (checks_file,) = tmp_path.glob(f"{scenario}-*/checks.json")
    checks = json.loads(checks_file.read_text())
    failed = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
    assert not failed
    passed = {check["id"] for check in checks if check["status"] == "SUCCESS"}
    assert (
        passed == {"initialize": {"mcp-client-initialization"}, "tools_call": {"tool-add-numbers"}}[scenario]
    )
