"""Plain chat: `{"mcpServers": {}}` or `--no-mcp` means no MCP server at all. The agent answers
with its built-in tools and says so; asking, `chat`, `serve` and `doctor` as real processes
against the fake model server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from cli_support import clean_env, fake_venice
from cli_support import run_cli as run
from serve_support import served

BUILT_IN = ["list_files", "page", "read_file"]


def empty_config(folder: Path) -> Path:
    path = folder / "empty.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    return path


def broken_user_config(folder: Path) -> None:
    """A user mcp.json whose only server cannot start: --no-mcp must never try it."""
    user = folder / "config" / "venice-agent"
    user.mkdir(parents=True)
    (user / "mcp.json").write_text(json.dumps({"mcpServers": {"ghost": {"command": "no-such-mcp-server"}}}))


def offered_tools(body: dict) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools", []))


def test_an_empty_server_list_answers_with_the_built_in_tools(tmp_path: Path) -> None:
    with fake_venice([{"text": "Hello."}], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--mcp-config", str(empty_config(tmp_path)), "hi")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Hello."
    assert "apify  not used, no MCP servers" in done.stderr and "the built-in tools only" in done.stderr
    assert offered_tools(bodies[0]) == BUILT_IN


def test_no_mcp_starts_no_server_even_when_the_user_config_has_some(tmp_path: Path) -> None:
    broken_user_config(tmp_path)
    with fake_venice([{"text": "Hello."}], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "hi")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert "ghost" not in done.stderr and "no MCP servers" in done.stderr
    assert offered_tools(bodies[0]) == BUILT_IN


def test_no_mcp_and_an_mcp_config_together_are_a_usage_error(tmp_path: Path) -> None:
    done = run(tmp_path, "http://127.0.0.1:9", "--no-mcp", "--mcp-config", str(empty_config(tmp_path)), "hi")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "venice-agent: --no-mcp and --mcp-config contradict each other; give one of them"
    )


def test_chat_with_a_model_and_no_mcp(tmp_path: Path) -> None:
    broken_user_config(tmp_path)
    with fake_venice([{"text": "Hi there."}], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "chat", "--no-mcp", "--db", "bot.db", stdin="hello\n")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert "Hi there.\nstopped: answered · 0 calls" in done.stdout
    assert "ghost" not in done.stderr
    assert offered_tools(bodies[0]) == BUILT_IN


async def test_serve_with_a_model_and_an_empty_server_list(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model")
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(empty_config(tmp_path)))
        async with asyncio.timeout(60), served(tmp_path, *args, env=env) as server:
            assert "planned by the model fake-model, no MCP servers" in server.line


def test_doctor_with_no_mcp_checks_no_server(tmp_path: Path) -> None:
    broken_user_config(tmp_path)
    with fake_venice([], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "doctor", "--no-mcp")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MCP servers: none (--no-mcp)" in done.stdout and "ghost" not in done.stdout
