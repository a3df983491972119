"""MCP roots are chosen per server: the real `@modelcontextprotocol/server-filesystem` (pinned in
tests/node/filesystem) serves the folders on its command line unless it is offered roots, and
then serves those instead, so a server given its folders must keep them.

Each test runs the real CLI in a folder of its own: that folder is the file root, the default
root offered to a server that names no folder of its own.
"""

import json
import subprocess
from pathlib import Path

from cli_support import COMMAND, clean_env
from servers.node import EVERYTHING_ENV, FILESYSTEM_MODULES, bin_path


def tools_call(folder: Path, servers: dict, tool: str, arguments: dict) -> subprocess.CompletedProcess[str]:
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return subprocess.run(
        [COMMAND, "tools", "call", tool, json.dumps(arguments), "--yes", "--mcp-config", str(config)],
        capture_output=True, text=True, timeout=120, env=clean_env(folder, "http://127.0.0.1:9"),
        cwd=folder, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def filesystem(*args: str, **entry) -> dict:
    return {
        "command": str(bin_path("mcp-server-filesystem", FILESYSTEM_MODULES)),
        "args": list(args),
        **entry,
    }


def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    work, photos, other = tmp_path / "work", tmp_path / "photos", tmp_path / "other"
    for folder in (work, photos, other):
        folder.mkdir()
        (folder / "note.txt").write_text(f"the note in {folder.name}\n")
    return work, photos, other


def content(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["content"]


def test_a_server_given_its_folders_keeps_them(tmp_path):
    work, photos, _ = folders(tmp_path)
    servers = {"files": filesystem(str(photos))}
    note = content(tools_call(work, servers, "read_text_file", {"path": str(photos / "note.txt")}))
    assert note == "the note in photos\n"
    allowed = content(tools_call(work, servers, "list_allowed_directories", {}))
    assert allowed == f"Allowed directories:\n{photos.resolve()}"


async def test_the_roots_an_entry_names_are_offered_and_served(tmp_path):
    """The server asks for the roots after it started and replaces its folders with them
    while calls already arrive: the test asks, a bounded number of times, until it has."""
    from venice_terminal_agent.config import Settings
    from venice_terminal_agent.mcp.features import ClientFeatures
    from venice_terminal_agent.mcp.servers_file import parse_servers
    from venice_terminal_agent.mcp.session import SessionHooks
    from venice_terminal_agent.mcp.toolbox import McpToolbox

    work, photos, other = folders(tmp_path)
    entry = filesystem(str(photos), roots=[str(other)])
    servers = parse_servers({"mcpServers": {"files": entry}}, "mcp.json", Settings(_env_file=None), {})
    assert servers[0].roots == (str(other),)
    hooks = SessionHooks(client_options=ClientFeatures(roots=(work,)).client_options)
    async with McpToolbox.open(servers, hooks=hooks) as box:
        for _ in range(200):
            allowed = json.loads(await box.call("list_allowed_directories", {}))["content"]
            if allowed != f"Allowed directories:\n{photos.resolve()}":
                break
        assert allowed == f"Allowed directories:\n{other.resolve()}"
        note = json.loads(await box.call("read_text_file", {"path": str(other / "note.txt")}))
    assert note["content"] == "the note in other\n"


def test_an_entry_with_no_roots_is_offered_none(tmp_path):
    work, _, _ = folders(tmp_path)
    allowed = content(tools_call(work, {"files": filesystem(roots=[])}, "list_allowed_directories", {}))
    assert allowed == "Allowed directories:\n"  # the file root was not offered: nothing is served
    everything = {
        "command": str(bin_path("mcp-server-everything")), "args": ["stdio"], "roots": [], "env": EVERYTHING_ENV
    }
    done = tools_call(work, {"everything": everything}, "get-roots-list", {})
    assert (
        done.returncode == 2 and "there is no tool named 'get-roots-list'" in done.stderr
    )  # no roots capability


def test_roots_in_the_config_are_a_list_of_folders():
    import pytest

    from venice_terminal_agent.config import Settings
    from venice_terminal_agent.core.errors import ConfigError
    from venice_terminal_agent.mcp.servers_file import parse_servers

    for wrong in ("/data", [1], [""]):
        with pytest.raises(ConfigError, match="'roots' is a list of folders"):
            parse_servers(
                {"mcpServers": {"f": {"command": "x", "roots": wrong}}}, "f", Settings(_env_file=None), {}
            )
    (server,) = parse_servers(
        {"mcpServers": {"f": {"command": "x", "roots": ["${DATA}/photos"]}}},
        "f",
        Settings(_env_file=None),
        {"DATA": "/d"},
    )
    assert server.roots == ("/d/photos",)


def test_an_argument_that_cannot_be_a_file_name_is_not_a_folder(tmp_path):
    """An inline JSON configuration is one argument, and one longer than a file name may be
    made `Path.is_dir` raise (`[Errno 36] File name too long`): the server did not start. An
    unknown `~user` raised too (`Path.expanduser`). Neither is a folder: the server starts."""
    from cli_support import PAID_SERVER, PYTHON

    inline = json.dumps({"settings": {"comment": "x" * 300}})
    for odd in (inline, "~no-such-user-here/x"):
        servers = {"shop": {"command": PYTHON, "args": [str(PAID_SERVER), odd], "trusted": True}}
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": servers}))
        done = subprocess.run(
            [COMMAND, "tools", "list", "--json", "--mcp-config", str(config)],
            capture_output=True, text=True, timeout=120, env=clean_env(tmp_path, "http://127.0.0.1:9"),
            cwd=tmp_path, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (odd[:20], done.stderr)
        assert "did not start" not in done.stderr
