"""The README's sampling row: a server's sampling request is "never offered under `--yes`,
without a terminal, by `serve`, or by `tools call` (no model)". The terminal's cases are in
test_mcp_sampling_pty.py; here the two fronts without a person at a terminal, against
server-everything, which lists its sampling tool only to a client that offers sampling
(test_mcp_sampling_pty.py shows it listed when offered)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pexpect

from cli_support import COMMAND, clean_env, fake_venice, run_cli
from serve_support import served
from test_mcp_sampling_pty import everything_config

SAMPLING_TOOL = "trigger-sampling-request"


def test_tools_offers_a_server_no_sampling_even_at_a_terminal(tmp_path: Path) -> None:
    """`tools` has no model to ask: at a terminal, with a person there, a server is still not
    offered sampling (it lists no sampling tool), and calling that tool is refused as unknown."""
    config = everything_config(tmp_path)
    with fake_venice([], tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url)
        child = pexpect.spawn(
            COMMAND, ["tools", "list", "--mcp-config", str(config), "--json"],
            cwd=str(tmp_path), env=env, encoding="utf-8", dimensions=(40, 200), timeout=90,
        )  # fmt: skip
        listed = child.read()
        child.close()
        called = run_cli(
            tmp_path, fake.base_url, "tools", "call", "--yes", "--mcp-config", str(config),
            SAMPLING_TOOL, json.dumps({"prompt": "name a colour", "maxTokens": 40}),
        )  # fmt: skip
        bodies = fake.chat_bodies()
    assert child.exitstatus == 0, listed
    names = {tool["name"] for tool in json.loads(listed[listed.index("{") :])["tools"]}
    assert "echo" in names and SAMPLING_TOOL not in names
    assert called.returncode != 0 and SAMPLING_TOOL in called.stderr + called.stdout
    assert bodies == []  # no model was ever asked


async def test_serve_offers_a_server_no_sampling_even_with_yes(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": SAMPLING_TOOL, "arguments": {"prompt": "name a colour", "maxTokens": 40}}]},
        {"text": "teal"},  # the sampling answer, were sampling offered; else the answer
        {"text": "done"},
    ]
    config = everything_config(tmp_path)
    with fake_venice(script, tmp_path) as fake:
        args = ("--yes", "--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with (
            served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server,
            httpx2.AsyncClient(base_url=server.url, timeout=90) as http,
        ):
            reply = (
                await http.post("/v1/chats/c/messages", json={"text": "ask the server to sample"})
            ).json()
        bodies = fake.chat_bodies()
    offered = {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert "echo" in offered and SAMPLING_TOOL not in offered
    assert len(bodies) == 2 and bodies[1]["messages"][-1]["role"] == "tool"  # no sampling request between
    assert reply["text"].startswith("teal")  # the model's answer after the refused call
