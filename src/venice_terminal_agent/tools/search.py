"""Tool search for big catalogues: the `search_tools(query)` tool, and which tools a model is shown.

Hundreds of tool schemas can fill a good part of a model's window before the question is even
read. When a catalogue is searched (`SearchRule.searched`), each request carries only the
built-in tools (those without a server), `search_tools`, and the tools this conversation found
with it or called; everything else is one search away. The found tools are appended in the
order they first appeared, so the tool list only ever grows at its end and a cached prompt
prefix stays valid.

The conversation is the memory: what a search found is read back from its result in the
history (`ToolSearch.offered(messages)`), so a resumed session, a rolled-back question and
/clear need no state here, and one toolbox serves many conversations (`serve`).

Nothing else changes: a found tool is called by its catalogue name and asked for like any
other (`core/consent.py`); `search_tools` is read-only and local, so it never asks. It is a
tool call like any other: on the receipt, and counted against the question's budget.

Ranking (deterministic, no model, no index on disk): BM25 over each tool's words, the name
counted three times, the title twice, the description once. Words are lower-cased, split at
anything not a letter or digit and at camelCase humps, common English words are dropped, and a
plural `s` is cut ("issues" finds `create_issue`). A query equal to a tool's name finds it
first; ties keep the catalogue's order; a tool sharing no word with the query is not found.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..core.defaults import TOOL_SEARCH_SHARE, TOOL_SEARCH_TOOLS, TOOL_SEARCH_TOP_K
from ..core.errors import ToolError
from ..core.record import Record
from ..core.tokens import estimate_tokens
from ..core.toolbox import Toolbox, ToolSpec, settle

SEARCH_TOOL = "search_tools"
Mode = Literal["auto", "on", "off"]

FIELD_WEIGHTS = (3, 2, 1)  # name, title, description
K1, B = 1.2, 0.75  # BM25's usual constants: how fast repeats stop counting, how much length does
PREVIEW = 160  # characters of a found tool's description in the result
STOP_WORDS = frozenset(
    "a an and any are as at be by can for from get given how i in into is it its me my of on or "
    "so that the this to tool tools use using want what when which with you your".split()
)
_HUMP = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_NAME = re.compile(r'"name":\s*"([A-Za-z0-9_-]+)"')


class SearchRule(Record):
    """When a catalogue is searched: `on`, `off`, or `auto`: when its schemas would take more
    than `share` of a known window, or, the window unknown, when it has more than `max_tools`."""

    mode: Mode = "auto"
    max_tools: int = TOOL_SEARCH_TOOLS
    share: float = TOOL_SEARCH_SHARE
    top_k: int = TOOL_SEARCH_TOP_K
    window: int | None = None  # the model's context window in tokens, when known

    def searched(self, specs: Sequence[ToolSpec]) -> bool:
        if self.mode != "auto":
            return self.mode == "on"
        if self.window is not None:
            return schema_tokens(specs) > self.share * self.window
        return len(specs) > self.max_tools

    def why(self, specs: Sequence[ToolSpec]) -> str:
        """Why the catalogue is searched (or not), as `doctor` says it."""
        if self.mode != "auto":
            return f"TOOL_SEARCH={self.mode}"
        if self.window is not None:
            share = schema_tokens(specs) / self.window
            return f"their schemas take about {share:.0%} of the {self.window}-token window (the limit is {self.share:.0%})"
        return f"the window is unknown, and the limit is {self.max_tools} tools"


def schema_tokens(specs: Sequence[ToolSpec]) -> int:
    """About how many tokens the schemas of `specs` take in a request (errs high)."""
    return estimate_tokens([spec.openai_function() for spec in specs])


def words(text: str) -> list[str]:
    """The words a search compares: lower case, split at non-alphanumerics and camelCase,
    common words dropped, a plural `s` cut."""
    found = _WORD.findall(_HUMP.sub(r"\1 \2", text).lower())
    return [_singular(word) for word in found if word not in STOP_WORDS]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def rank(specs: Sequence[ToolSpec], query: str, k: int) -> list[ToolSpec]:
    """The at most `k` tools of `specs` that match `query` best (BM25; see the module)."""
    terms = set(words(query))
    documents = []
    for spec in specs:
        counts: Counter[str] = Counter()
        for weight, text in zip(FIELD_WEIGHTS, (spec.name, spec.title, spec.description), strict=True):
            for word in words(text):
                counts[word] += weight
        documents.append(counts)
    if not documents:
        return []
    average = sum(sum(document.values()) for document in documents) / len(documents) or 1.0
    holding = {term: sum(1 for document in documents if term in document) for term in terms}
    scored = []
    for index, (spec, document) in enumerate(zip(specs, documents, strict=True)):
        length = sum(document.values())
        score = 0.0
        for term in terms:
            count = document.get(term, 0)
            if count:
                rarity = math.log(1 + (len(documents) - holding[term] + 0.5) / (holding[term] + 0.5))
                score += rarity * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))
        exact = spec.name.lower() == query.strip().lower()
        if score > 0 or exact:
            scored.append((not exact, -score, index, spec))
    scored.sort(key=lambda entry: entry[:3])
    return [entry[3] for entry in scored[:k]]


class ToolSearch:
    """A toolbox whose catalogue may be searched: `search_tools` beside the wrapped tools.

    `specs()` is the whole catalogue (and `search_tools` while it is searched): consent, /tools
    and the receipts see every tool as before. `offered(messages)` is what the model is shown."""

    def __init__(self, tools: Toolbox, rule: SearchRule | None = None) -> None:
        self.tools = tools
        self.rule = rule or SearchRule()

    def catalogue(self) -> list[ToolSpec]:
        return [spec for spec in self.tools.specs() if spec.name != SEARCH_TOOL]

    def searched(self) -> bool:
        return self.rule.searched(self.catalogue())

    def search_spec(self, count: int) -> ToolSpec:
        description = (
            f"Find tools by what they do. Your tool list holds only some of the {count} tools "
            "available; this searches all of them by name and description, and the best matches "
            f"(at most {self.rule.top_k}) join your tool list for your next step. Give a few "
            'keywords (e.g. "create github issue"), then call a found tool by its name.'
        )
        parameters = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "a few keywords: what the tool does, or its name"}
            },
            "required": ["query"],
        }
        return ToolSpec(SEARCH_TOOL, description, parameters, read_only=True)

    # -- the toolbox ----------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self.tools or (name == SEARCH_TOOL and self.searched())

    def specs(self) -> list[ToolSpec]:
        catalogue = self.catalogue()
        searched = self.rule.searched(catalogue)
        return [*catalogue, self.search_spec(len(catalogue))] if searched else catalogue

    async def refresh(self) -> bool:
        reload = getattr(self.tools, "refresh", None)
        return bool(reload is not None and await reload())

    async def settle(self) -> None:
        await settle(self.tools)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        if name != SEARCH_TOOL or name in self.tools:
            return await self.tools.call(name, arguments)
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError('search_tools needs a "query": a few keywords, e.g. "create github issue"')
        found = rank(self.catalogue(), query, self.rule.top_k)
        result: dict[str, Any] = {
            "query": query,
            "found": [
                {"name": spec.name, "description": _preview(spec.description or spec.title)} for spec in found
            ],
        }
        result["note"] = (
            "These tools are in your tool list from your next step on: call one by its name."
            if found
            else "No tool matches these words; try others (what the tool does, or part of its name)."
        )
        return json.dumps(result, ensure_ascii=False)

    # -- what the model is shown ------------------------------------------------------------
    def offered(self, messages: Sequence[Mapping[str, Any]]) -> list[ToolSpec]:
        """The tools for the next request of the conversation `messages`: all of them, or, while
        the catalogue is searched, the built-ins, `search_tools`, then each tool this
        conversation found or called, in the order it first came up."""
        catalogue = self.catalogue()
        if not self.rule.searched(catalogue):
            return catalogue
        by_name = {spec.name: spec for spec in catalogue}
        shown = [spec for spec in catalogue if spec.server is None]
        names = {spec.name for spec in shown}
        shown.append(self.search_spec(len(catalogue)))
        for name in mentioned(messages):
            if name in by_name and name not in names:
                names.add(name)
                shown.append(by_name[name])
        return shown


def mentioned(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tool names a conversation called or found with `search_tools`, in order."""
    names: list[str] = []
    searches: set[str] = set()  # ids of search_tools calls
    for message in messages:
        if message.get("role") == "assistant":
            for tool_call in message.get("tool_calls") or ():
                name = (tool_call.get("function") or {}).get("name")
                if name == SEARCH_TOOL:
                    searches.add(tool_call.get("id"))
                elif isinstance(name, str):
                    names.append(name)
        elif message.get("role") == "tool" and message.get("tool_call_id") in searches:
            names.extend(_found(message.get("content")))
    return names


def _found(content: Any) -> list[str]:
    """The names a search result gave; from its text when a page cut its JSON short."""
    if not isinstance(content, str):
        return []
    try:
        result = json.loads(content)
    except ValueError:
        return _NAME.findall(content)
    found = result.get("found") if isinstance(result, dict) else None
    if not isinstance(found, list):
        return []
    return [
        entry["name"] for entry in found if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    ]


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def find_search(tools: Any) -> ToolSearch | None:
    """The `ToolSearch` inside `tools` (a consent wrapper, an agent's tools), or None."""
    for _ in range(4):
        if isinstance(tools, ToolSearch):
            return tools
        tools = getattr(tools, "tools", None)
    return None
