"""The manual's editor and MCP-client snippets (docs/editor.md, docs/mcp-server.md), run as written: Zed's `agent_servers` entry
(`venice-agent acp --max-usd 0.05`) driven by the ACP SDK's client, and the Claude Desktop /
Cursor / VS Code entry (`venice-agent mcp --max-usd 0.50`) driven by the mcp SDK's client, each
against the fake server serving the project's copy of Venice's model list (prices, no output
limit: the money cap once refused every such model, issue 34). Only the key and the server's
address differ from a user's machine."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from cli_support import clean_env, fake_venice
from test_acp import Editor, allow
from test_mcp_front import text_of

DOCS = Path(__file__).resolve().parent.parent / "docs"
MODEL = "zai-org-glm-5-2"  # a Venice text model: prices published, no maxCompletionTokens


def json_block_after(heading: str, page: str) -> dict[str, Any]:
    """The first ```json block after the text `heading` in the manual's `page`, parsed."""
    text = (DOCS / page).read_text(encoding="utf-8")
    rest = text[text.index(heading) :]
    match = re.search(r"```json\n(.*?)```", rest, re.S)
    assert match is not None, heading
    return json.loads(match.group(1))


def entry_env(entry: dict[str, Any], folder: Path, base_url: str) -> dict[str, str]:
    """The entry's environment with the test's key, on the fake server, nothing of the user's."""
    assert set(entry["env"]) == {"VENICE_API_KEY"}  # what a user fills in, and nothing else
    return clean_env(folder, base_url, VENICE_MODEL=MODEL)


async def test_the_zed_snippet_answers_under_its_money_cap(tmp_path: Path) -> None:
    entry = json_block_after("In Zed, add to `settings.json`:", "editor.md")["agent_servers"]["venice-agent"]
    assert entry["command"] == "venice-agent" and "--max-usd" in entry["args"]
    with fake_venice({"listing": "venice", "replies": [{"text": "Paris."}]}, tmp_path) as fake:
        editor = Editor(allow)
        with (tmp_path / "acp.stderr").open("w") as log:
            async with spawn_agent_process(
                editor,
                _command(entry["command"]),
                *entry["args"],
                env=entry_env(entry, tmp_path, fake.base_url),
                cwd=tmp_path,
                transport_kwargs={"stderr": log.fileno()},
            ) as (conn, _process):
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                done = await conn.prompt(session_id=session.session_id, prompt=[text_block("capital?")])
        (body,) = fake.chat_bodies()
    assert done.stop_reason == "end_turn", (tmp_path / "acp.stderr").read_text()
    assert editor.text() == "Paris."
    assert body["model"] == MODEL and body["max_completion_tokens"] > 0  # capped by the request


async def test_the_mcp_client_snippet_answers_under_its_money_cap(tmp_path: Path) -> None:
    entry = json_block_after("Claude Desktop (`claude_desktop_config.json`)", "mcp-server.md")["mcpServers"]["venice-agent"]
    assert entry["command"] == "venice-agent" and "--max-usd" in entry["args"]
    with fake_venice({"listing": "venice", "replies": [{"text": "Paris."}]}, tmp_path) as fake:
        params = StdioServerParameters(
            command=_command(entry["command"]),
            args=entry["args"],
            env=entry_env(entry, tmp_path, fake.base_url),
            cwd=str(tmp_path),
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            result = await client.call_tool("ask", {"question": "capital?"})
        bodies = fake.chat_bodies()
    assert not result.is_error, text_of(result)
    assert text_of(result) == "Paris."
    assert [body["model"] for body in bodies] == [MODEL] and bodies[0]["max_completion_tokens"] > 0


def _command(name: str) -> str:
    """`venice-agent` as the editor finds it on PATH: the one installed beside the tests' Python."""
    from cli_support import COMMAND

    assert Path(COMMAND).name == name
    return COMMAND
