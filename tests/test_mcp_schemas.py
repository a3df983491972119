"""Tool schemas as real servers publish them, made acceptable to the model server before they
are sent: mcp-server-git (PyPI, pinned in the dev group) publishes `"default": null`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.testing.checks import problem

GIT_SERVER = Path(sys.executable).parent / "mcp-server-git"


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


async def test_null_defaults_from_mcp_server_git_never_reach_the_model_server(repository):
    config = ServerConfig("git", command=str(GIT_SERVER), args=("--repository", str(repository)))
    async with McpToolbox.open([config]) as box:
        assert box.failures == []
        published = {tool.name: tool.input_schema for tool in box._sessions["git"].tools}
        specs = {spec.name: spec for spec in box.specs()}
    assert '"default": null' in json.dumps(published["git_log"])  # what the server really sends
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [spec.openai_function() for spec in specs.values()],
    }
    assert problem(body) is None  # the strict fake Venice's own check: no null anywhere
    start = specs["git_log"].parameters["properties"]["start_timestamp"]
    assert "default" not in start
    assert start["anyOf"] == [{"type": "string"}, {"type": "null"}]  # everything else kept
    assert start["description"].startswith("Start timestamp for filtering commits")
    assert specs["git_log"].parameters["properties"]["max_count"]["default"] == 10
