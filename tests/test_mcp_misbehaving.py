"""Server mistakes stay one call's error: a result breaking its own output schema, text cut
inside a character, junk on stdout — against a raw JSON-RPC server (tests/servers/raw_mcp.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from venice_terminal_agent import ToolError
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.session import SessionHooks
from venice_terminal_agent.mcp.toolbox import McpToolbox

RAW = Path(__file__).parent / "servers" / "raw_mcp.py"
BIN = Path(sys.executable).parent
NOTICE = "raw wrote something that is not MCP to stdout; ignored"


def raw(*flags: str) -> ServerConfig:
    return ServerConfig("raw", command=sys.executable, args=(str(RAW), *flags))


async def test_a_result_breaking_its_output_schema_is_that_calls_error_and_the_server_stays():
    async with McpToolbox.open([raw()], call_timeout=30) as box:
        with pytest.raises(ToolError) as wrong:
            await box.call("weather", {})
        assert wrong.value.message.startswith(
            "raw's result for weather did not match the tool's declared output schema ("
        )
        assert "'hot' is not of type 'number'" in wrong.value.message
        with pytest.raises(ToolError) as missing:
            await box.call("bare", {})
        assert "did not match the tool's declared output schema" in missing.value.message
        assert "its last output" not in missing.value.message  # nothing died: no stderr quoted
        assert box.servers[0].state == "ready" and box.failures == []
        assert await box.call("echo", {"text": "still here"}) == "still here"


async def test_a_server_that_really_dies_is_still_failed_with_its_last_words():
    async with McpToolbox.open([raw()], call_timeout=30) as box:
        with pytest.raises(ToolError) as died:
            await box.call("crash", {})
        assert "its last output: raw server: crashing on purpose" in died.value.message
        assert box.servers[0].state == "failed"


async def test_text_cut_inside_a_character_arrives_at_once_with_the_half_replaced():
    # call_timeout is far above what the test may take: a lost answer would fail the test on time
    async with McpToolbox.open([raw()], call_timeout=120) as box:
        assert await box.call("cut", {}) == "smile \ufffd"
        assert await box.call("echo", {"text": "next"}) == "next"


async def test_junk_on_stdout_is_one_notice_per_server_and_the_answers_still_arrive():
    notices: list[str] = []
    hooks = SessionHooks(notice=notices.append)
    async with McpToolbox.open([raw("--noise")], call_timeout=30, hooks=hooks) as box:
        assert await box.call("echo", {"text": "a"}) == "a"
        assert await box.call("cut", {}) == "smile \ufffd"
    assert notices == [NOTICE]


def test_tools_call_says_one_line_about_junk_on_stdout_and_no_traceback(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"raw": {"command": sys.executable, "args": [str(RAW), "--noise"]}}})
    )
    done = subprocess.run(
        [str(BIN / "venice-agent"), "tools", "call", "echo", '{"text": "hi"}', "--mcp-config", str(config), "--yes"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hi"
    assert done.stderr.strip() == NOTICE


async def test_base64_never_reaches_the_model_not_even_inside_structured_content():
    async with McpToolbox.open([raw()], call_timeout=30) as box:
        text = await box.call("media", {})
    line = "[image image/png, about 300000 bytes, not shown]"
    assert text == f'{{"content": ["{line}"], "path": "/photos/cat.png"}}\n{line}'


def test_every_shape_of_binary_in_structured_content_is_one_line():
    from venice_terminal_agent.mcp.results import without_binary

    blob = "QUJD" * 100  # 400 characters of base64, 300 bytes
    value = {
        "resource": {"uri": "file:///a.bin", "mimeType": "application/zip", "blob": blob},
        "thumbnail": f"data:image/jpeg;base64,{blob}",
        "raw": blob,
        "id": "QUJD" * 10,  # short: an id, left alone
        "note": "a sentence of text " * 20,
    }
    assert without_binary(value) == {
        "resource": "[blob application/zip, about 300 bytes, <file:///a.bin>, not shown]",
        "thumbnail": "[data image/jpeg, about 300 bytes, not shown]",
        "raw": "[binary data, about 300 bytes, not shown]",
        "id": "QUJD" * 10,
        "note": "a sentence of text " * 20,
    }
