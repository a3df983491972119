"""The MCP conformance suite's client scenarios, run by its own runner against our session code
(`servers/conformance_client.py` opens an McpToolbox on the URL the runner gives it)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servers.node import bin_path, node22

SERVERS = Path(__file__).parent / "servers"


@pytest.mark.parametrize("scenario", ["initialize", "tools_call"])
def test_conformance_client_scenario(scenario, tmp_path):
    runner = bin_path("conformance").resolve()
    client = f"{sys.executable} {SERVERS / 'conformance_client.py'}"
    env = {**os.environ, "PATH": f"{node22().parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(node22()), "-r", str(SERVERS / "loopback.cjs"), str(runner), "client"]
    command += ["--command", client, "--scenario", scenario, "-o", str(tmp_path)]
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
