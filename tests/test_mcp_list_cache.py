"""A one-shot question opens with each MCP server's cached tool list (mcp/list_cache.py): the
servers start only when the model calls a tool, and then everything (names, consent, the
call, the next request's tools) goes by what the servers list now, never by the cache.

Real stdio servers (mcp-server-time, the test shop) and the real command on the fake model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.types import Tool

from cli_support import PAID_SERVER, PYTHON, clean_env, fake_venice, modules_after_running, run_cli
from venice_terminal_agent.mcp.list_cache import HOUR, ListCache, server_key
from venice_terminal_agent.mcp.server_config import ServerConfig

TIME = {"command": PYTHON, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"], "trusted": True}
QUESTION = "What is the capital of France?"
NOTE = "(cached); it starts, and is listed again, before any call"
HINTED = Path(__file__).parent / "servers" / "cache_hint.py"


def servers(folder: Path, **entries: dict[str, Any]) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


def cache_files(home: Path) -> list[Path]:
    return sorted((home / ".cache" / "venice-agent" / "tool-lists").glob("*.json"))


def ask(
    folder: Path, script: list[Any], config: Path, *args: str, **env: str
) -> tuple[Any, list[dict[str, Any]]]:
    with fake_venice(script, folder) as fake:
        before = len(fake.chat_bodies())  # the folder's record goes on from earlier questions
        done = run_cli(folder, fake.base_url, "--no-files", "--mcp-config", str(config), *args, **env)
        return done, fake.chat_bodies()[before:]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def edit_cached(home: Path, change: Any) -> None:
    """Make the one cached list say something its server does not (a list gone stale)."""
    [path] = cache_files(home)
    entry = json.loads(path.read_text())
    change(entry["tools"])
    path.write_text(json.dumps(entry))


def test_a_second_question_opens_with_the_cached_list_and_imports_no_mcp_when_no_tool_is_called(
    tmp_path: Path,
) -> None:
    config = servers(tmp_path, time=TIME)
    first, bodies = ask(tmp_path, [{"text": "Paris."}], config, QUESTION)
    assert first.returncode == 0, first.stderr
    assert NOTE not in first.stderr  # nothing cached yet: the server started first
    [entry] = cache_files(Path.home())
    assert {tool["name"] for tool in json.loads(entry.read_text())["tools"]} == {
        "get_current_time",
        "convert_time",
    }

    with fake_venice([{"text": "Paris."}], tmp_path) as fake:
        modules = modules_after_running(
            "--no-files",
            "--mcp-config",
            str(config),
            QUESTION,
            env=clean_env(tmp_path, fake.base_url),
            cwd=tmp_path,
        )
        body = fake.chat_bodies()[-1]  # the record goes on from the first question
    assert "mcp" not in modules  # the server was never spoken to: no SDK, no second of CPU
    assert tool_names(body) == tool_names(bodies[0])  # the model was shown the same tools

    again, _ = ask(tmp_path, [{"text": "Paris."}], config, QUESTION)
    assert again.returncode == 0 and again.stdout.startswith("Paris."), again.stderr
    assert "time: its tools as listed" in again.stderr and NOTE in again.stderr


def test_a_tool_call_starts_the_server_and_runs_as_without_a_cache(tmp_path: Path) -> None:
    config = servers(tmp_path, time=TIME)
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "Noon."},
    ]
    ask(tmp_path, [{"text": "Paris."}], config, QUESTION)  # lists and caches
    done, bodies = ask(tmp_path, script, config, "--json", "What time is it?")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert [step["tool"] for step in receipt["steps"]] == ["get_current_time"]
    assert '"timezone": "UTC"' in receipt["steps"][0]["result"]  # the real server answered
    assert NOTE in done.stderr and "changed since" not in done.stderr
    assert tool_names(bodies[0]) == tool_names(bodies[1])


def test_consent_goes_by_what_the_server_lists_now_not_by_a_cached_read_only_hint(tmp_path: Path) -> None:
    """The cache says `charge` is read-only (it would run without asking); the server does not,
    so with nobody to ask it does not run."""
    config = servers(tmp_path, shop={"command": PYTHON, "args": [str(PAID_SERVER)], "trusted": True})
    ask(tmp_path, [{"text": "Hello."}], config, QUESTION)

    def read_only(tools: list[dict[str, Any]]) -> None:
        for tool in tools:
            tool["annotations"] = {"readOnlyHint": True}

    edit_cached(Path.home(), read_only)
    script = [{"tool_calls": [{"name": "charge", "arguments": {"amount": 5}}]}, {"text": "Not charged."}]
    done, bodies = ask(tmp_path, script, config, "--json", "charge me")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["proposed"] == [{"tool": "charge", "arguments": {"amount": 5}, "outcome": "no_one_to_ask"}]
    assert receipt["calls"] == 0 and "charged 5" not in done.stdout
    assert "shop: its tools changed since its list was cached (descriptions or schemas)" in done.stderr
    # The cache now holds what the server said: the next question opens with the truth.
    [entry] = cache_files(Path.home())
    assert all("readOnlyHint" not in json.dumps(tool) for tool in json.loads(entry.read_text())["tools"])
    assert len(bodies) == 2


def test_a_tool_gone_from_the_server_is_refused_and_the_next_request_shows_the_servers_list(
    tmp_path: Path,
) -> None:
    config = servers(tmp_path, time=TIME)
    ask(tmp_path, [{"text": "Paris."}], config, QUESTION)
    gone = {"name": "time_in_mars", "description": "The time on Mars.", "inputSchema": {"type": "object"}}
    edit_cached(Path.home(), lambda tools: tools.append(gone))
    script = [{"tool_calls": [{"name": "time_in_mars", "arguments": {}}]}, {"text": "I cannot tell."}]
    done, bodies = ask(tmp_path, script, config, "--json", "What time is it on Mars?")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["proposed"] == [{"tool": "time_in_mars", "arguments": {}, "outcome": "invalid"}]
    assert "time_in_mars" in tool_names(bodies[0])  # the first request went by the cache
    assert tool_names(bodies[1]) == ["page", "get_current_time", "convert_time"]  # then by the server
    assert "time: its tools changed since its list was cached (1 tool removed)" in done.stderr


def test_a_private_question_writes_no_list_and_a_cache_of_zero_hours_is_never_used(tmp_path: Path) -> None:
    config = servers(tmp_path, time=TIME)
    private, _ = ask(tmp_path, [{"text": "Paris."}], config, "--private", QUESTION)
    assert private.returncode == 0, private.stderr
    assert cache_files(Path.home()) == []  # --private: nothing of the run is written

    ask(tmp_path, [{"text": "Paris."}], config, QUESTION, MCP_LIST_CACHE_HOURS="0")
    assert cache_files(Path.home()) == []
    ask(tmp_path, [{"text": "Paris."}], config, QUESTION)
    off, _ = ask(tmp_path, [{"text": "Paris."}], config, QUESTION, MCP_LIST_CACHE_HOURS="0")
    assert NOTE not in off.stderr  # the server started first, as without a cache


@pytest.mark.parametrize(("ttl_ms", "used"), [(0, False), (3_600_000, True)])
def test_a_2026_server_says_how_long_its_list_may_be_cached(tmp_path: Path, ttl_ms: int, used: bool) -> None:
    """`ttlMs` 0 (the SDK's default: stale at once) keeps the server started first; an hour lets
    the next question open with the list."""
    entry = {"command": PYTHON, "args": [str(HINTED), str(ttl_ms)], "protocol": "2026-07-28"}
    config = servers(tmp_path, hinted=entry)
    first, _ = ask(tmp_path, [{"text": "Paris."}], config, QUESTION)
    assert first.returncode == 0, first.stderr
    [cached] = cache_files(Path.home())
    assert json.loads(cached.read_text())["ttl_ms"] == ttl_ms  # as the server sent it
    again, _ = ask(tmp_path, [{"text": "Paris."}], config, QUESTION)
    assert (NOTE in again.stderr) is used, again.stderr


def test_an_entry_is_fresh_for_its_hours_or_the_servers_ttl_and_a_changed_entry_is_another_server(
    tmp_path: Path,
) -> None:
    now = [1_000_000.0]
    cache = ListCache(tmp_path, max_age=24 * HOUR, clock=lambda: now[0])
    server = ServerConfig("time", command=sys.executable, args=("-m", "mcp_server_time"))
    tool = {"name": "get_current_time", "inputSchema": {"type": "object"}}
    cache.write(server, [Tool.model_validate(tool)], "Say the zone.")
    entry = cache.read(server)
    assert entry is not None and [t.name for t in entry.tools] == ["get_current_time"]
    assert entry.instructions == "Say the zone."
    now[0] += 24 * HOUR
    assert cache.read(server) is None  # too old: the server starts first

    cache.write(server, [Tool.model_validate(tool)], None, ttl_ms=60_000)  # a 2026-07-28 server's own limit
    now[0] += 59
    assert cache.read(server) is not None
    now[0] += 2
    assert cache.read(server) is None

    other = ServerConfig(
        "time", command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC")
    )
    assert server_key(other) != server_key(server) and cache.read(other) is None
    with_token = ServerConfig(
        "time", command=sys.executable, args=("-m", "mcp_server_time"), env={"TOKEN": "s3cret"}
    )
    cache.write(with_token, [Tool.model_validate(tool)], None)
    assert "s3cret" not in cache.path(with_token).read_text()  # the entry's secrets are never written

    cache.write(server, [Tool.model_validate(tool)], None, uses_more=True)  # it listed skills or resources
    assert cache.read(server) is None
    cache.path(server).write_text("{not json")
    assert cache.read(server) is None  # a damaged entry: started first, as without a cache
