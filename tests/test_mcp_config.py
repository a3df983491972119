"""Which servers start: the mcpServers file users already have, or Apify (hosted or local)."""

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from venice_terminal_agent.config import Settings
from venice_terminal_agent.core.errors import ConfigError
from venice_terminal_agent.mcp import servers_file as mcp_config
from venice_terminal_agent.mcp.apify import apify_server, with_query
from venice_terminal_agent.mcp.servers_file import JWT_BEARER, load_servers, parse_servers


def settings(**values) -> Settings:
    return Settings(_env_file=None, **values)


def tools_query(url: str) -> list[str]:
    return parse_qs(urlsplit(url).query)["tools"][0].split(",")


def test_without_a_token_apify_hosted_serves_the_four_anonymous_tools():
    server = apify_server(settings())
    assert server.transport == "http" and server.apify and server.headers == {}
    assert server.url.startswith("https://mcp.apify.com/?")
    assert tools_query(server.url) == [
        "search-actors",
        "fetch-actor-details",
        "search-apify-docs",
        "fetch-apify-docs",
    ]


def test_with_a_token_apify_hosted_sends_it_as_a_bearer_and_keeps_its_defaults():
    server = apify_server(settings(apify_token="apify_api_secret"))
    assert server.url == "https://mcp.apify.com" and server.headers == {
        "Authorization": "Bearer apify_api_secret"
    }
    assert "secret" not in repr(server)  # a config printed by mistake shows no token
    chosen = apify_server(settings(apify_token="t", apify_mcp_tools="actors, docs,apify/rag-web-browser"))
    assert tools_query(chosen.url) == ["actors", "docs", "apify/rag-web-browser"]


def test_asking_for_token_only_tools_without_a_token_says_so():
    with pytest.raises(
        ConfigError, match="APIFY_MCP_TOOLS asks for call-actor, which Apify serves only with a token"
    ):
        apify_server(settings(apify_mcp_tools="docs,call-actor"))
    assert tools_query(apify_server(settings(apify_mcp_tools="docs")).url) == ["docs"]


def test_local_apify_needs_a_token_and_node_22_and_gets_only_its_token():
    with pytest.raises(
        ConfigError, match=r"the local Apify MCP server \(APIFY_MCP_TRANSPORT=stdio\) needs an Apify token"
    ):
        apify_server(settings(apify_mcp_transport="stdio"))
    server = apify_server(
        settings(
            apify_mcp_transport="stdio", apify_token="tok", apify_mcp_tools="docs", venice_api_key="sk-v"
        )
    )
    assert (server.command, server.args) == ("npx", ("-y", "@apify/actors-mcp-server", "--tools", "docs"))
    assert dict(server.env) == {"APIFY_TOKEN": "tok"} and server.needs_node == 22
    assert server.startup_timeout == 120  # the first `npx -y` run downloads the package


def test_with_query_keeps_other_parameters():
    assert (
        with_query("https://mcp.apify.com/?ui=false&tools=x", tools="a,b")
        == "https://mcp.apify.com/?ui=false&tools=a,b"
    )


CONFIG = {
    "mcpServers": {
        "time": {
            "command": "uvx",
            "args": ["mcp-server-time", "--tz=${TZNAME}"],
            "env": {"TOKEN": "${env:TIME_TOKEN}"},
        },
        "notes": {
            "url": "http://127.0.0.1:8000/mcp",
            "headers": {"Authorization": "Bearer ${NOTES}"},
            "trusted": True,
        },
        "off": {"command": "x", "disabled": True},
        "apify": {},
    }
}
ENVIRON = {"TZNAME": "UTC", "TIME_TOKEN": "t1", "NOTES": "n1"}


def test_a_claude_desktop_style_file_gives_its_servers():
    time, notes, apify = parse_servers(CONFIG, "mcp.json", settings(), ENVIRON)
    assert (time.name, time.transport, time.args, dict(time.env)) == (
        "time", "stdio", ("mcp-server-time", "--tz=UTC"), {"TOKEN": "t1"},
    )  # fmt: skip
    assert (notes.transport, dict(notes.headers), notes.trusted) == (
        "http",
        {"Authorization": "Bearer n1"},
        True,
    )
    assert apify.apify and apify.url.startswith("https://mcp.apify.com/?tools=")
    assert not time.trusted and not time.apify
    assert time.startup_timeout == 120 and notes.startup_timeout is None  # uvx downloads on first run


def test_values_from_the_environment_never_show_in_where():
    entries = {"mcpServers": {"s": {"command": "server", "args": ["--api-key", "${KEY}", "--verbose"]}}}
    (server,) = parse_servers(entries, "f", settings(), {"KEY": "key-123456"})
    assert server.args == ("--api-key", "key-123456", "--verbose")
    assert server.where == "server --api-key *** --verbose" and "key-123456" not in repr(server)


def test_apify_entries_get_the_apify_token_and_no_one_else_does():
    entries = {
        "mcpServers": {
            "local": {"command": "npx", "args": ["-y", "@apify/actors-mcp-server"]},
            "hosted": {"url": "https://mcp.apify.com/?tools=docs"},
            "other": {"command": "other-server"},
        }
    }
    local, hosted, other = parse_servers(entries, "f", settings(apify_token="tok"), {})
    assert dict(local.env) == {"APIFY_TOKEN": "tok"} and local.needs_node == 22
    assert dict(hosted.headers) == {"Authorization": "Bearer tok"}
    assert dict(other.env) == {} and not other.apify


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'expected {"mcpServers"'),
        ({"mcpServers": {"a": "npx"}}, "server 'a': an entry is an object"),
        ({"mcpServers": {"a": {}}}, "server 'a': give 'command'"),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}, "'command' or 'url', not both"),
        ({"mcpServers": {"a": {"command": "x", "args": "--flag"}}}, "'args' is a list of strings"),
        ({"mcpServers": {"a": {"url": "http://h", "type": "sse"}}}, "SSE transport is not supported"),
        ({"mcpServers": {"a": {"command": "x", "trusted": "yes"}}}, "'trusted' is true or false"),
        (
            {"mcpServers": {"a": {"command": "x", "protocol": "2024"}}},
            "'protocol' is auto, 2025-11-25 or 2026-07-28",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "startup_timeout": 0}}},
            "'startup_timeout' is a number of seconds",
        ),
        (
            {"mcpServers": {"a": {"url": "http://h", "oauth": {"grant_type": JWT_BEARER, "client_id": "w"}}}},
            "JWT-bearer grant needs client_id and assertion",
        ),
    ],
)
def test_a_bad_file_is_one_readable_line(data, message):
    with pytest.raises(ConfigError) as caught:
        parse_servers(data, "mcp.json", settings(), {})
    assert message in str(caught.value) and str(caught.value).startswith("mcp.json")


def test_stdio_servers_keep_the_2025_handshake_http_ones_negotiate_and_an_entry_chooses():
    entries = {
        "local": {"command": "x"},
        "remote": {"url": "http://h/mcp"},
        "modern": {"command": "x", "protocol": "2026-07-28", "startup_timeout": 90},
        "pinned": {"url": "http://h/mcp", "protocol": "2025-11-25"},
    }
    local, remote, modern, pinned = parse_servers({"mcpServers": entries}, "f", settings(), {})
    assert [s.wanted_protocol for s in (local, remote, modern, pinned)] == [
        "2025-11-25", "auto", "2026-07-28", "2025-11-25",
    ]  # fmt: skip
    assert modern.startup_timeout == 90


def test_oauth_takes_the_issuer_of_a_pre_registered_client_and_a_workload_identity():
    oauth = {"client_id": "c", "client_secret": "s", "issuer": "https://as.example"}
    workload = {"grant_type": JWT_BEARER, "client_id": "w", "assertion": "${WORKLOAD_TOKEN}"}
    entries = {"a": {"url": "http://h/mcp", "oauth": oauth}, "b": {"url": "http://h/mcp", "oauth": workload}}
    a, b = parse_servers({"mcpServers": entries}, "f", settings(), {"WORKLOAD_TOKEN": "eyJ.w.t"})
    assert a.oauth["issuer"] == "https://as.example"
    assert b.oauth["assertion"] == "eyJ.w.t" and "eyJ.w.t" in b.secret_values()  # never shown


def test_an_empty_list_or_every_entry_disabled_means_no_mcp_server():
    assert parse_servers({"mcpServers": {}}, "mcp.json", settings(), {}) == []
    off = {"mcpServers": {"a": {"command": "x", "disabled": True}}}
    assert parse_servers(off, "mcp.json", settings(), {}) == []


def test_no_mcp_reads_no_file_and_contradicts_a_given_one(tmp_path, monkeypatch):
    user = tmp_path / "mcp.json"
    user.write_text('{"mcpServers": {"a": {"command": "x"}}}')
    monkeypatch.setattr(mcp_config, "default_config_path", lambda: user)
    assert load_servers(settings(), no_mcp=True) == []
    with pytest.raises(ConfigError, match="--no-mcp and --mcp-config contradict each other"):
        load_servers(settings(), user, no_mcp=True)


def test_load_servers_reads_the_given_file_else_the_user_file_else_apify(tmp_path, monkeypatch):
    monkeypatch.setattr(mcp_config, "default_config_path", lambda: tmp_path / "absent.json")
    (default,) = load_servers(settings())
    assert default.name == "apify" and default.apify
    given = tmp_path / "given.json"
    given.write_text(json.dumps({"mcpServers": {"one": {"command": "one-server"}}}))
    assert [s.name for s in load_servers(settings(), given)] == ["one"]
    user_file = tmp_path / "mcp.json"
    user_file.write_text(json.dumps({"servers": {"two": {"url": "http://127.0.0.1:1/mcp"}}}))  # VS Code's key
    monkeypatch.setattr(mcp_config, "default_config_path", lambda: user_file)
    assert [s.name for s in load_servers(settings())] == ["two"]
    given.write_text("{not json")
    with pytest.raises(ConfigError, match="is not JSON"):
        load_servers(settings(), given)
    with pytest.raises(ConfigError, match=r"the MCP config .*: no such file"):
        load_servers(settings(), tmp_path / "nowhere.json")


def test_the_user_config_file_lives_in_the_platform_config_folder():
    path = mcp_config.default_config_path()
    assert path.name == "mcp.json" and path.parent.name == "venice-agent"
