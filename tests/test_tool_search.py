"""Tool search for big catalogues: a real MCP server of 300 tools, the fake model over HTTP.

The model is shown the built-ins and `search_tools`; a search adds what it found to the next
request (at the end of the tool list, in a stable order); the found tool asks for consent like
any other, and the receipt is an ordinary one.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest

from cli_support import PYTHON, TESTS, fake_venice, run_cli
from servers.catalogue import build_server
from venice_terminal_agent import Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.consent import Consent, Why, declined_result, no_yes
from venice_terminal_agent.core.pager import Pager
from venice_terminal_agent.core.receipt import CallOutcome
from venice_terminal_agent.core.toolbox import CombinedToolbox, ToolSpec
from venice_terminal_agent.core.wording import NO_TERMINAL
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.testing import FakeVenice
from venice_terminal_agent.tools.builtin import builtin_toolbox
from venice_terminal_agent.tools.search import SEARCH_TOOL, SearchRule, ToolSearch, rank, schema_tokens

BUILTINS = ["read_file", "list_files", "page"]
FOUND = [
    "github_create_issue",
    "github_get_issue",
    "github_update_issue",
    "github_list_issue",
    "github_delete_issue",
]
ISSUE = {"workspace": "acme", "fields": {"title": "crash on start"}}


def calls(name: str, arguments: dict) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def names(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


@asynccontextmanager
async def searched_agent(script: list, tmp_path, rule: SearchRule | None = None, approver=None):
    pager = Pager()
    servers = [ServerConfig("catalogue", in_memory=build_server())]
    async with McpToolbox.open(servers, pager=pager) as box:
        tools = ToolSearch(CombinedToolbox(builtin_toolbox(tmp_path, pager), box), rule)
        async with FakeVenice(script) as fake, VeniceClient("k", fake.base_url) as client:
            consent = Consent(tools, approver=approver)
            yield fake, Agent(client, consent, AgentOptions(model="fake-model", pager=pager))


async def test_a_tool_out_of_300_is_found_then_called_with_consent(tmp_path):
    asked: list[tuple[str, Why, str | None]] = []

    async def approver(call, spec: ToolSpec, why: Why) -> bool:
        asked.append((call.tool, why, spec.server))
        return True

    script = [
        calls(SEARCH_TOOL, {"query": "create a github issue"}),
        calls("github_create_issue", ISSUE),
        {"text": "Filed."},
    ]
    async with searched_agent(script, tmp_path, approver=approver) as (fake, agent):
        receipt = await agent.ask("file a bug on github: crash on start")
        requests = fake.chat_requests

    # The first request: the built-ins and search_tools, not the 300 schemas.
    assert names(requests[0]) == [*BUILTINS, SEARCH_TOOL]
    # The search found the tool; its schema (and the other matches') is in the next request,
    # appended after the first request's tools, which stay as they were.
    found = json.loads(requests[1]["messages"][-1]["content"])
    assert [tool["name"] for tool in found["found"]] == FOUND
    assert names(requests[1]) == [*BUILTINS, SEARCH_TOOL, *FOUND]
    assert requests[1]["tools"][: len(requests[0]["tools"])] == requests[0]["tools"]
    schema = requests[1]["tools"][len(BUILTINS) + 1]["function"]
    assert schema["parameters"]["required"] == ["workspace"]
    assert "issue_id" in schema["parameters"]["properties"]
    # It asked like any other paid tool (search_tools did not: it is read-only and local).
    assert asked == [("github_create_issue", Why.PAID, "catalogue")]
    assert receipt.stopped_because is Exit.ANSWERED and receipt.answer == "Filed."
    assert [(step.tool, step.arguments) for step in receipt.steps] == [
        (SEARCH_TOOL, {"query": "create a github issue"}),
        ("github_create_issue", ISSUE),
    ]
    assert receipt.steps[1].result == f"github_create_issue ran with {json.dumps(ISSUE, sort_keys=True)}"
    assert receipt.to_dict()["steps"][1]["tool"] == "github_create_issue"


async def test_found_tools_stay_for_the_conversation_and_a_declined_call_is_declined(tmp_path):
    async def no(call, spec, why) -> bool:
        return False

    script = [
        calls(SEARCH_TOOL, {"query": "refund stripe"}),
        calls("stripe_create_refund", {"workspace": "acme"}),
        {"text": "You said no."},
        calls("slack_create_message", {"workspace": "acme"}),  # called without a search first
        {"text": "Not sent either."},
        {"text": "Hello again."},
    ]
    async with searched_agent(script, tmp_path, approver=no) as (fake, agent):
        first = await agent.ask("refund order 7")
        second = await agent.ask("tell the team on slack")
        await agent.ask("hi")
        requests = fake.chat_requests
        agent.clear()
        assert [spec.name for spec in agent.offered(agent.history)] == [*BUILTINS, SEARCH_TOOL]

    assert first.stopped_because is Exit.ANSWERED
    assert [step.tool for step in first.steps] == [SEARCH_TOOL]  # declined: not a step
    declined = json.loads(requests[2]["messages"][-1]["content"])
    assert "declined" in declined["error"]
    refunds = [name for name in names(requests[1]) if name.startswith("stripe_")]
    assert "stripe_create_refund" in refunds
    # The next question starts with what the conversation found; a tool it called unfound
    # joins at the end, after its call (one order, only ever appended to).
    assert names(requests[3]) == names(requests[1])
    assert names(requests[5]) == [*names(requests[1]), "slack_create_message"]
    assert second.stopped_because is Exit.ANSWERED


async def test_a_small_catalogue_is_sent_whole_and_search_can_be_forced(tmp_path):
    script = [{"text": "one"}]
    rule = SearchRule(max_tools=1000)  # auto, window unknown: 303 tools are under this limit
    async with searched_agent(script, tmp_path, rule) as (fake, agent):
        await agent.ask("hi")
        assert len(names(fake.chat_requests[0])) == 303 and SEARCH_TOOL not in agent.tools
    async with searched_agent(script, tmp_path, SearchRule("off")) as (fake, agent):
        await agent.ask("hi")
        assert len(names(fake.chat_requests[0])) == 303


def spec(name: str, description: str = "", title: str = "") -> ToolSpec:
    return ToolSpec(name, description, server="s", title=title)


def test_the_rule_uses_the_window_when_known_and_the_count_when_not():
    specs = [spec(f"tool_{i}", "x" * 300) for i in range(50)]
    tokens = schema_tokens(specs)
    assert SearchRule(max_tools=40).searched(specs) and not SearchRule(max_tools=50).searched(specs)
    assert SearchRule(window=tokens * 10 - 10).searched(specs)  # a little over 10%
    assert not SearchRule(window=tokens * 10 + 10, max_tools=1).searched(specs)  # the window decides
    assert SearchRule("on").searched(specs[:1]) and not SearchRule("off").searched(specs)


def test_ranking_is_by_words_of_name_title_and_description_and_stable():
    specs = [
        spec("send_message", "Post a message to a channel"),
        spec("weather", "Tomorrow's forecast", title="Weather forecast"),
        spec("sendEmail", "Send an email to someone"),
        spec("list_messages", "Read a channel's messages"),
    ]
    assert [s.name for s in rank(specs, "send messages", 5)] == ["send_message", "sendEmail", "list_messages"]
    assert [s.name for s in rank(specs, "email", 5)] == ["sendEmail"]  # camelCase split
    assert [s.name for s in rank(specs, "forecast", 5)] == ["weather"]
    assert rank(specs, "weather", 1)[0].name == "weather"
    assert rank(specs, "the a of", 5) == [] and rank(specs, "database", 5) == []
    twins = [spec("zeta_reader", "fetch the page"), spec("alpha_reader", "fetch the page")]
    assert [s.name for s in rank(twins, "fetch", 5)] == [
        "zeta_reader",
        "alpha_reader",
    ]  # ties: catalogue order


# -- the command line, as processes, on the stdio server -------------------------------------


def catalogue_config(folder) -> str:
    servers = {"catalogue": {"command": PYTHON, "args": [str(TESTS / "servers" / "catalogue.py")]}}
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def test_asking_searches_300_tools_and_says_so(tmp_path):
    script = [
        calls(SEARCH_TOOL, {"query": "create a github issue"}),
        calls("github_create_issue", ISSUE),
        {"text": "Filed."},
    ]
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "--mcp-config", catalogue_config(tmp_path), "--yes", "--json", "bug"
        )
        requests = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert "  search  the catalogue of 303 tools is searched: the model sees the built-ins" in done.stderr
    assert names(requests[0]) == [*BUILTINS, SEARCH_TOOL]
    assert names(requests[1]) == [*BUILTINS, SEARCH_TOOL, *FOUND]
    receipt = json.loads(done.stdout)
    assert [step["tool"] for step in receipt["steps"]] == [SEARCH_TOOL, "github_create_issue"]
    assert receipt["stopped_because"] == "answered"


def test_without_a_yes_the_found_tool_is_declined_and_tools_says_the_catalogue_is_searched(tmp_path):
    script = [
        calls(SEARCH_TOOL, {"query": "create a github issue"}),
        calls("github_create_issue", ISSUE),
        {"text": "I could not file it."},
    ]
    config = catalogue_config(tmp_path)
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--mcp-config", config, stdin="bug\n/tools\n")
        requests = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    declined = json.loads(requests[2]["messages"][-1]["content"])
    assert declined == {
        "error": declined_result(no_yes(CallOutcome.NO_ONE_TO_ASK))
    }  # asked like any other paid tool: nobody there
    assert (
        f"skipped github_create_issue: it needs your consent, and {NO_TERMINAL}" in done.stdout + done.stderr
    )
    assert (
        "  tools  read_file, list_files, page, search_tools\n" in done.stderr
    )  # the banner: what the model sees
    lines = done.stdout.splitlines()
    assert any(line.startswith("asks github_create_issue ") for line in lines)  # the whole catalogue
    assert lines[-1].startswith("the catalogue of 303 tools is searched")


LISTED = {"model_spec": {"availableContextTokens": 2_000_000}}


@pytest.mark.parametrize(
    ("window", "env", "searched"),
    [
        (LISTED, {}, False),
        ({"props": {"n_ctx": 2_000_000}, "entry": {"owned_by": "llamacpp"}}, {}, False),  # llama-server's
        (LISTED, {"CONTEXT_TOKENS": "100000"}, True),  # less of the window used: the schemas fill 55% of it
    ],
    ids=["model list", "llama.cpp /props", "CONTEXT_TOKENS under it"],
)
def test_doctor_counts_a_known_window_as_a_question_does(tmp_path, window, env, searched):
    # 303 schemas are far more than 40 tools but 3% of a 2M-token window: a question sends them
    # whole, and doctor must say so, not count tools as if the window were unknown.
    config = catalogue_config(tmp_path)
    with fake_venice({"replies": [{"text": "Hi."}], **window}, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "doctor", "--mcp-config", config, "--json", **env)
        asked = run_cli(tmp_path, fake.base_url, "--mcp-config", config, "hi", **env)
        requests = fake.chat_bodies()
    assert asked.returncode == 0, asked.stderr
    sent = names(requests[0])
    assert (sent == [*BUILTINS, SEARCH_TOOL]) if searched else (len(sent) == 303 and SEARCH_TOOL not in sent)
    detail = {check["name"]: check for check in json.loads(done.stdout)["checks"]}["tools"]["detail"]
    said = (
        "the catalogue of 303 tools is searched: "
        if searched
        else "303 tools, sent whole with each request; "
    )
    assert detail.startswith(said), detail
    size = "100000" if searched else "2000000"
    assert f"% of the {size}-token window (the limit is 10%)" in detail, detail


def test_doctor_says_whether_the_catalogue_would_be_searched(tmp_path):
    config = catalogue_config(tmp_path)
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "doctor", "--mcp-config", config, "--json")
        off = run_cli(tmp_path, fake.base_url, "doctor", "--mcp-config", config, "--json", TOOL_SEARCH="off")
    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert checks["tools"]["detail"] == (
        "the catalogue of 303 tools is searched: the model sees the built-ins, search_tools and the tools "
        "it found (TOOL_SEARCH); the window is unknown, and the limit is 40 tools"
    )
    checks = {check["name"]: check for check in json.loads(off.stdout)["checks"]}
    assert checks["tools"]["detail"] == "303 tools, sent whole with each request; TOOL_SEARCH=off"
