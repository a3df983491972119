"""Streamed chat-completion chunks assembled into one assistant message (pure).

Why not the openai SDK's stream helper: Venice may stream parallel tool calls under one
`index`, and the helper then merges them into a single call whose id, name and arguments
are all of them run together. Here a delta bringing a new `id` starts a new call; a delta
without an id continues the latest call of its index.

The message is kept as received, so it can go back to the model unchanged: `content: null`
on a tool-call turn, and every field we do not know (`reasoning_content`,
`reasoning_details`, `thought_signature`, ...) merged across deltas. Nulls are never added.
Text cut inside a character comes out whole: half of a surrogate pair at the end of a piece
waits for the next piece, and a half that stays alone becomes U+FFFD (see `scrub`).
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any

from ..core.record import Record
from ..core.scrub import is_high_surrogate, well_formed, well_formed_all

LABELS = frozenset({"type", "id", "index", "format"})  # repeated in each piece, never joined


class Completion(Record, frozen=False):
    """One finished model turn."""

    message: dict[str, Any]
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # Venice's x-venice-* (balance, deprecation)
    streamed: bool = True  # False: asked again without streaming, it came whole
    thought: str = ""  # a `<think>` block the content began with, taken out of it
    citations: list[dict[str, Any]] = field(default_factory=list)  # Venice's web_search_citations

    @property
    def thinking(self) -> str:
        """The turn's thinking: `reasoning_content` (as streamed), and any `<think>` block."""
        given = self.message.get("reasoning_content")
        return "".join(part for part in (given if isinstance(given, str) else "", self.thought) if part)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = self.message.get("tool_calls", [])
        return calls

    @property
    def text(self) -> str:
        return self.message.get("content") or ""


class Assembler:
    """Feed it chunk dicts in order; `finish()` gives the `Completion`."""

    def __init__(self) -> None:
        self._text: list[str] | None = None  # None until a `content` delta arrives
        self._half = ""  # a surrogate pair's first half, held back until its second arrives
        self._extras: dict[str, Any] = {}
        self._calls: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._by_index: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.cost: dict[str, Any] | None = None
        self.model: str | None = None
        self.thinking = ""  # thinking text the last `feed` brought (for the screen)
        self.citations: list[dict[str, Any]] = []
        self._think = ThinkSplitter()

    def feed(self, chunk: dict[str, Any]) -> str:
        """Take one chunk; return the visible text it adds ("" if none)."""
        self.model = chunk.get("model") or self.model
        if isinstance(chunk.get("usage"), dict):
            # Kept whole: cached and reasoning token details, and any cost object, go on the receipt.
            self.usage = dict(chunk["usage"])
        if isinstance(chunk.get("cost"), dict):  # Venice may send the cost beside the usage
            self.cost = chunk["cost"]
        venice = chunk.get("venice_parameters")  # web search results come in the first chunk
        if isinstance(venice, dict) and isinstance(venice.get("web_search_citations"), list):
            self.citations = [c for c in venice["web_search_citations"] if isinstance(c, dict)]
        self.thinking = ""
        text = ""
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # we ask for one choice
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            text += self._delta(choice.get("delta") or {})
        return text

    def _delta(self, delta: dict[str, Any]) -> str:
        text = ""
        for key, value in delta.items():
            if value is None or key == "role":
                continue
            if key == "content":
                self._text = self._text if self._text is not None else []
                value, self._half = self._half + value, ""
                if value and is_high_surrogate(value[-1]):
                    value, self._half = value[:-1], value[-1]
                value = well_formed(value)
                thought, value = self._think.feed(value)
                self.thinking += thought
                self._text.append(value)
                text += value
            elif key == "tool_calls":
                for part in value:
                    self._tool_delta(part)
            else:
                if key == "reasoning_content" and isinstance(value, str):
                    self.thinking += well_formed(value)
                self._extras[key] = merge(self._extras.get(key), value)
        return text

    def _tool_delta(self, part: dict[str, Any]) -> None:
        call_id = part.get("id")
        index = part.get("index", 0)
        function = part.get("function") or {}
        current = self._by_id.get(call_id) if call_id else self._by_index.get(index)
        if current is None or (not call_id and _starts_another(current, function)):
            current = {"id": call_id or f"call_{len(self._calls) + 1}", "type": "function"}
            current["function"] = {"name": "", "arguments": ""}
            self._calls.append(current)
            self._by_id[current["id"]] = current
        self._by_index[index] = current
        for key, value in part.items():
            if key == "type" and value is not None:
                current["type"] = value
            elif key == "function":
                name = function.get("name")
                if name and name != current["function"]["name"]:  # some servers repeat the name
                    current["function"]["name"] += name
                rest = {k: v for k, v in function.items() if k != "name"}
                current["function"] = merge(current["function"], rest)
            elif key not in ("index", "id") and value is not None:
                current[key] = merge(current.get(key), value)  # e.g. a provider's signature

    def end(self) -> str:
        """The stream is over: a half still held back stays alone, so it comes out as U+FFFD.
        Returns that text for the screen ("" if none); `finish` calls it too."""
        tail, self._half = well_formed(self._half), ""
        thought, tail = self._think.feed(tail, end=True)
        self.thinking = thought
        if tail and self._text is not None:
            self._text.append(tail)
        return tail

    def finish(self) -> Completion:
        self.end()
        message: dict[str, Any] = {"role": "assistant"}
        if self._text is not None:
            message["content"] = "".join(self._text)
        elif self._calls:
            message["content"] = None  # what the API sends on a tool-call turn; kept as is
        else:
            message["content"] = ""
        message.update(well_formed_all(self._extras))
        if self._calls:
            message["tool_calls"] = well_formed_all(self._calls)
        usage = self.usage if self.cost is None else {"cost": self.cost, **self.usage}
        turn = Completion(message, self.finish_reason, usage, self.model)
        turn.thought, turn.citations = self._think.thought, self.citations
        return turn


OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Takes a `<think>…</think>` block the content begins with (after blanks) out of the
    visible text, however the stream cuts the tags: `feed(piece)` gives (thinking, visible).
    Content that does not begin so passes untouched (a `<think>` later on is the answer's)."""

    def __init__(self) -> None:
        self.state = "start"  # start: undecided; inside: in the block; after: all visible
        self._held = ""  # text kept back until it can be told apart
        self.thought = ""

    def feed(self, piece: str, *, end: bool = False) -> tuple[str, str]:
        held = self._held + piece
        self._held = ""
        if self.state == "start":
            lead = held.lstrip()
            if lead.startswith(OPEN):
                self.state, held = "inside", lead[len(OPEN) :]
            elif OPEN.startswith(lead) and not end:
                self._held = held  # "<thi": wait for more
                return "", ""
            else:
                self.state = "after"
                return "", held
        if self.state == "inside":
            if CLOSE in held:
                thought, rest = held.split(CLOSE, 1)
                self.state = "after"
                self.thought += thought
                return thought, rest.lstrip("\n")
            keep = next((n for n in range(len(CLOSE) - 1, 0, -1) if held.endswith(CLOSE[:n])), 0)
            if end:
                keep = 0
            thought, self._held = held[: len(held) - keep], held[len(held) - keep :]
            self.thought += thought
            return thought, ""
        return "", held


def _starts_another(current: dict[str, Any], function: dict[str, Any]) -> bool:
    """No id, but a name while the current call already has a name and whole JSON arguments."""
    if not function.get("name") or not current["function"].get("name"):
        return False
    try:
        json.loads(current["function"].get("arguments") or "")
    except ValueError:
        return False
    return True


def merge(old: object, new: object) -> Any:
    """Join a field's pieces: text concatenates (labels such as `type` do not), objects merge,
    list items with the same `index` merge (how `reasoning_details` stream), the rest is replaced."""
    if old is None:
        return _copy(new)
    if isinstance(old, str) and isinstance(new, str):
        return old + new
    if isinstance(old, dict) and isinstance(new, dict):
        joined = dict(old)
        for key, value in new.items():
            if value is not None:
                joined[key] = _copy(value) if key in LABELS else merge(joined.get(key), value)
        return joined
    if isinstance(old, list) and isinstance(new, list):
        items = list(old)
        for item in new:
            same = [i for i, o in enumerate(items) if _same_entry(o, item)]
            if same:
                items[same[-1]] = merge(items[same[-1]], item)
            else:
                items.append(_copy(item))
        return items
    return _copy(new)


def _same_entry(old: object, new: object) -> bool:
    return (
        isinstance(old, dict)
        and isinstance(new, dict)
        and "index" in new
        and old.get("index") == new["index"]
    )


def _copy(value: object) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
