"""The model's context window, counted like calls and money: before each request (pure).

- `Gauge` estimates a request's input tokens from the bytes sent (messages + tools), on the
  high side (a token is counted for every `BYTES_PER_TOKEN` bytes, fewer than any tokenizer
  packs into one), and corrects itself with the server's `prompt_tokens`: the request that was
  measured counts as measured, only what was added since is estimated.
- The wordings people read: `34% of 128k`, the compaction line, the `context_full` refusal.
- Where a compaction may cut a conversation (`split`): only before a user turn, so an
  assistant turn's tool calls and the tool messages answering them always stay together.
- A conversation's record (what a session keeps): every message as it was, and a marker
  (`{"role": "compaction", …}`) where older rounds were summarised; `replay` gives back the
  conversation the model sees.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from .defaults import COMPACT_AT, KEEP_TURNS, PAGE_SHARE
from .record import Record

BYTES_PER_TOKEN = 3  # English is about 4 bytes a token, JSON and code fewer: 3 errs on the high side


def request_bytes(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
    """The bytes of what a request sends to the model: its messages and its tools' schemas."""
    return len(json.dumps([*messages, *tools], ensure_ascii=False, default=str).encode("utf-8"))


class Gauge(Record, frozen=False):
    """One conversation's window and the estimate of its next request.

    `window` None: unknown (nothing is refused or compacted, the server is the judge)."""

    window: int | None = None
    compact_at: float = COMPACT_AT  # share of the window the next request may reach before compacting
    measured_bytes: int = 0  # the last request the server measured…
    measured_tokens: int = 0  # …and its prompt_tokens

    def estimate(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
        return self.estimate_bytes(request_bytes(messages, tools))

    def estimate_bytes(self, size: int) -> int:
        rate = 1 / BYTES_PER_TOKEN
        if self.measured_bytes and self.measured_tokens:
            rate = max(rate, self.measured_tokens / self.measured_bytes)  # denser text than assumed
            if size >= self.measured_bytes:  # the measured request plus what came after it
                return self.measured_tokens + math.ceil((size - self.measured_bytes) * rate)
        return math.ceil(size * rate)

    def measured(self, size: int, prompt_tokens: Any) -> None:
        """The server said a request of `size` bytes took `prompt_tokens`."""
        if isinstance(prompt_tokens, int) and not isinstance(prompt_tokens, bool) and prompt_tokens > 0:
            self.measured_bytes, self.measured_tokens = size, prompt_tokens

    def over_threshold(self, needed: int) -> bool:
        return self.window is not None and needed > self.window * self.compact_at

    def fits(self, needed: int) -> bool:
        return self.window is None or needed <= self.window

    def room_for_summary(self, needed: int) -> bool:
        """A summary request leaves the rest of the window for the summary itself."""
        return self.window is None or needed <= self.window * self.compact_at


def choose_window(
    listed: int | None, source: str | None, setting: int | None
) -> tuple[int | None, str | None]:
    """The window counted against and where it comes from: the server's (its model list, its
    `/props`), else the setting; a setting under the server's uses less of it."""
    if listed and (not setting or listed <= setting):
        return listed, source
    if setting:
        return setting, "CONTEXT_TOKENS"
    return None, None


def short(count: int) -> str:
    """A count as people read it, the one way every output says token counts: 850, 1.2k, 4k,
    61k, 128k, 1M, 1.5M."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}".removesuffix(".0") + "k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}".removesuffix(".0") + "M"


def used(tokens: int, window: int | None) -> str:
    """`34% of 128k`, or `12k of an unknown window`."""
    if window is None:
        return f"{short(tokens)} tokens of an unknown window"
    return f"{round(100 * tokens / window)}% of {short(window)}"


def window_line(window: int | None, source: str | None = None) -> str:
    """The banner's and doctor's line: `128k tokens (from the model list)`, or unknown said."""
    if window is None:
        return "unknown (the server does not say; set CONTEXT_TOKENS or --context-tokens)"
    return f"{short(window)} tokens" + (f" ({source})" if source else "")


def full_refusal(needed: int, window: int, why: str = "") -> str:
    return (
        f"the next request needs about {short(needed)} tokens and the model's window is "
        f"{short(window)}{why}; /compact, /clear, or a model with a larger window"
    )


def compacted_line(rounds: int, before: int, after: int) -> str:
    """`compacted 14 earlier rounds (61k tokens) into a 1.2k summary`."""
    noun = "round" if rounds == 1 else "rounds"
    return f"compacted {rounds} earlier {noun} ({short(before)} tokens) into a {short(after)} summary"


def page_limit(window: int | None, page_chars: int) -> int:
    """The page size for a window: a page never takes more than `PAGE_SHARE` of it (at the
    gauge's bytes per token, a character at least a byte), and never under 100 characters."""
    if window is None:
        return page_chars
    return max(100, min(page_chars, int(window * PAGE_SHARE * BYTES_PER_TOKEN)))


def split(messages: Sequence[dict[str, Any]], keep_turns: int = KEEP_TURNS) -> int | None:
    """Where the part to compact ends: the index of the first message kept whole, the start of
    the `keep_turns`-th user turn from the end. None when there is nothing before it to
    compact (besides the system messages at the head)."""
    return next(iter(cuts(messages, keep_turns)), None)


def cuts(messages: Sequence[dict[str, Any]], keep_turns: int = KEEP_TURNS) -> list[int]:
    """Every place a compaction may end, the latest first: the starts of user turns after the
    head, keeping at least `keep_turns` of them whole."""
    head = leading_system(messages)
    starts = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    if len(starts) < keep_turns:
        return []
    limit = starts[-keep_turns] if keep_turns else len(messages)
    return sorted((i for i in [*starts, len(messages)] if head < i <= limit), reverse=True)


def leading_system(messages: Sequence[dict[str, Any]]) -> int:
    """How many messages at the head are system messages (the prompt, the servers' instructions)."""
    count = 0
    while count < len(messages) and messages[count].get("role") in ("system", "developer"):
        count += 1
    return count


class Compaction(Record, frozen=False):
    """What the compactions of one question did, for the receipt."""

    rounds: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    times: list[int] = field(default_factory=list)

    def add(self, rounds: int, before: int, after: int) -> None:
        if not self.times:
            self.tokens_before = before
        self.rounds += rounds
        self.tokens_after = after
        self.times.append(rounds)

    def to_dict(self) -> dict[str, int] | None:
        if not self.times:
            return None
        return {"rounds": self.rounds, "tokens_before": self.tokens_before, "tokens_after": self.tokens_after}


MARKER = "compaction"  # the role of a record's compaction marker (never sent to a model)


def marker(
    start: int, end: int, summary: dict[str, Any], rounds: int, before: int, after: int
) -> dict[str, Any]:
    """The record's note that messages `start:end` of the conversation became `summary`."""
    return {
        "role": MARKER,
        "replaced": [start, end],
        "summary": summary,
        "rounds": rounds,
        "tokens_before": before,
        "tokens_after": after,
    }


def replay(record: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation a record stands for. A compaction only ever replaces a range at the
    head, so a marker written after the messages that followed it still points at the same
    messages."""
    view: list[dict[str, Any]] = []
    for entry in record:
        if entry.get("role") != MARKER:
            view.append(entry)
            continue
        start, end = entry["replaced"]
        view[start:end] = [entry["summary"]]
    return view
