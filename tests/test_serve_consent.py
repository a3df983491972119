"""`venice-agent serve` asks nobody: a call that needs a yes is "left out unless `--yes`" (the
README's table of fronts). Without --yes, tests/test_serve.py; here the other side: with it,
the paid tools are offered to the model and a call of one runs and is counted."""

from __future__ import annotations

from pathlib import Path

import httpx2

from cli_support import clean_env, fake_venice, mcp_config
from serve_support import served


async def test_with_yes_paid_tools_are_offered_and_a_call_runs_and_counts(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "charge", "arguments": {"amount": 5}}]},
        {"text": "Charged."},
    ]
    config = mcp_config(tmp_path, time_server=False)  # the shop: tools that are not read-only
    with fake_venice(script, tmp_path) as fake:
        args = ("--yes", "--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with (
            served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server,
            httpx2.AsyncClient(base_url=server.url, timeout=60) as http,
        ):
            assert "paid tools left out" not in server.line
            reply = (await http.post("/v1/chats/p/messages", json={"text": "charge 5"})).json()
        bodies = fake.chat_bodies()
    offered = {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert {"charge", "refund"} <= offered
    assert reply["text"] == "Charged.\nstopped: answered · 1 call · 4 left this hour"
    assert [item["outcome"] for item in reply["receipt"]["proposed"]] == ["ran"]
    told = [m["content"] for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert told and "charged 5" in told[-1]
