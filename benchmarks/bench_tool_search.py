"""What a model request weighs with a 300-tool catalogue: searched (`search_tools`) against sent whole.

One run, one real MCP server over stdio (tests/servers/catalogue.py: 300 connector tools of
the size real ones have), the fake model server on a socket, the same question both ways:

- whole (`TOOL_SEARCH=off`): every schema goes with each request; the model calls
  `github_create_issue`, then answers (2 requests);
- searched (`TOOL_SEARCH=on`): the built-ins and `search_tools`; the model searches, calls the
  tool it found, then answers (3 requests).

Each request body the server received is measured in bytes and in estimated tokens (the
agent's own estimate, `core/tokens.py`), and averaged per request.

    uv run python benchmarks/bench_tool_search.py

Target: a searched request weighs at most 15% of a request with the catalogue sent whole (the
mean per request, in tokens); the whole question's ratio is printed beside it.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from pathlib import Path

from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.consent import Consent
from venice_terminal_agent.core.pager import Pager
from venice_terminal_agent.core.tokens import estimate_tokens
from venice_terminal_agent.core.toolbox import CombinedToolbox
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.testing import FakeVenice
from venice_terminal_agent.tools.builtin import builtin_toolbox
from venice_terminal_agent.tools.search import SEARCH_TOOL, SearchRule, ToolSearch

TARGET = 0.15
SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "catalogue.py"
QUESTION = "File a bug on GitHub in the acme workspace: the app crashes on start."
CALL = {"name": "github_create_issue", "arguments": {"workspace": "acme", "fields": {"title": "crash on start"}}}
ANSWER = {"text": "Filed the issue in acme."}
SCRIPTS = {
    "whole": [{"tool_calls": [CALL]}, ANSWER],
    "searched": [
        {"tool_calls": [{"name": SEARCH_TOOL, "arguments": {"query": "create a github issue"}}]},
        {"tool_calls": [CALL]},
        ANSWER,
    ],
}


async def ask(box: McpToolbox, pager: Pager, mode: str) -> list[dict]:
    rule = SearchRule("on" if mode == "searched" else "off")
    tools = Consent(ToolSearch(CombinedToolbox(builtin_toolbox(pager=pager), box), rule), auto_approve=True)
    async with FakeVenice(SCRIPTS[mode]) as fake, VeniceClient("k", fake.base_url) as client:
        receipt = await Agent(client, tools, AgentOptions(model="fake-model", pager=pager)).ask(QUESTION)
        assert receipt.stopped_because == "answered" and receipt.steps[-1].tool == CALL["name"], receipt
        return list(fake.chat_requests)


def weigh(requests: list[dict]) -> tuple[list[int], list[int]]:
    bodies = [json.dumps(body, ensure_ascii=False, separators=(",", ":")) for body in requests]
    return [len(body.encode()) for body in bodies], [estimate_tokens(body) for body in bodies]


async def main() -> None:
    pager = Pager()
    server = ServerConfig("catalogue", command=sys.executable, args=(str(SERVER),))
    async with McpToolbox.open([server], pager=pager) as box:
        count = len(box.specs())
        measured = {mode: weigh(await ask(box, pager, mode)) for mode in SCRIPTS}
    print(f"one question, a catalogue of {count} MCP tools (+ 3 built-ins), stdio server")
    print(f"{'':>9}  {'requests':>8}  {'bytes/request':>13}  {'tokens/request':>14}  {'tokens, question':>16}")
    for mode, (sizes, tokens) in measured.items():
        print(
            f"{mode:>9}  {len(sizes):>8}  {statistics.mean(sizes):>13,.0f}  "
            f"{statistics.mean(tokens):>14,.0f}  {sum(tokens):>16,}"
        )
    whole, searched = measured["whole"][1], measured["searched"][1]
    ratio = statistics.mean(searched) / statistics.mean(whole)
    question = sum(searched) / sum(whole)
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(
        f"searched / whole, tokens per request: {ratio:.1%} (target at most {TARGET:.0%}: {verdict}); "
        f"the whole question: {question:.1%}"
    )


if __name__ == "__main__":
    asyncio.run(main())
