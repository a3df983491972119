"""Start-up is never a blank screen: on a terminal a spinner on stderr says what is awaited
(the model server, each MCP server still starting); piped, nothing of it is printed.
The real CLI in a pseudo-terminal, a model server that never answers, real stdio servers."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pexpect
import pytest

from cli_support import COMMAND, PYTHON, clean_env

# A stdio "server" that reads and never answers: it stays "starting" until the run ends.
SILENT_SERVER = ["-c", "import sys; sys.stdin.read()"]


@pytest.mark.parametrize(
    ("command", "question", "status"),
    [([], ["what time is it?"], 130), (["chat"], [], 0)],  # the chat bot leaves quietly on Ctrl+C
    ids=["ask", "chat"],
)
def test_the_spinner_names_the_model_server_and_the_mcp_servers_still_starting(
    tmp_path: Path, command: list[str], question: list[str], status: int
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": PYTHON, "args": ["-m", "mcp_server_time"]},
                    "slow": {"command": sys.executable, "args": SILENT_SERVER},
                }
            }
        )
    )
    with socket.socket() as silent:  # accepts connections, never answers: discovery waits
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        child = pexpect.spawn(
            COMMAND,
            [*command, "--mcp-config", str(config), *question],
            cwd=str(tmp_path),
            env=clean_env(tmp_path, base_url),
            encoding="utf-8",
            dimensions=(40, 200),
            timeout=60,
        )
        child.expect_exact("asking 127.0.0.1 for models · starting ")
        child.expect_exact("asking 127.0.0.1 for models · starting slow (1 of 2 ready)")
        child.sendintr()  # Ctrl+C while starting: nothing was asked yet
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == status
