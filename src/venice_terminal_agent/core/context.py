"""The model's context window, counted like calls and money: before each request (pure).

- `Gauge` estimates a request's input tokens from the bytes sent (messages + tools), on the
  high side (a token is counted for every `BYTES_PER_TOKEN` bytes, fewer than any tokenizer
  packs into one), and corrects itself with the server's `prompt_tokens`: the request that was
  measured counts as measured, only what was added since is estimated.
- The wordings people read: `34% of 128k`, the compaction line, the `context_full` refusal.
- Where a compaction may cut a conversation (`cuts`): only before a user turn, so an
  assistant turn's tool calls and the tool messages answering them always stay together.
- A conversation's record (what a session keeps): every message as it was, and a marker
  (`{"role": "compaction", …}`) where older rounds were summarised; `replay` gives back the
  conversation the model sees.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from .defaults import COMPACT_AT, KEEP_TURNS, PAGE_SHARE
from .record import Record
from .tokens import image_parts, image_tokens

BYTES_PER_TOKEN = 3  # English is about 4 bytes a token, JSON and code fewer: 3 errs on the high side


def request_bytes(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
    """The bytes of what a request sends to the model: its messages and its tools' schemas,
    each image counted as the bytes of the tokens it is estimated at (`tokens.image_tokens`),
    not as its data URL."""
    return sent_bytes(messages, tools, lambda url: image_tokens(url) * BYTES_PER_TOKEN)


def sent_bytes(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], image: Callable[[str], int]
) -> int:
    """The UTF-8 bytes of a request's messages and tools as JSON, each image's
    URL replaced by `image(url)`."""
    size = len(json.dumps([*messages, *tools], ensure_ascii=False, default=str).encode("utf-8"))
    return size + sum(image(url) - len(url) for url in image_parts(messages))


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

    def measured(self, size: int, prompt_tokens: object) -> None:
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


def full_refusal(needed: int, window: int, why: str) -> str:
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


def cuts(messages: Sequence[dict[str, Any]]) -> list[int]:
    """Every place a compaction may end, the latest first: the starts of user turns after the
    head (the system messages), keeping the last `KEEP_TURNS` user turns whole. Empty when
    there is nothing before them to compact."""
    head = leading_system(messages)
    starts = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    if len(starts) < KEEP_TURNS:
        return []
    return sorted((i for i in starts if head < i <= starts[-KEEP_TURNS]), reverse=True)


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


ROLES = ("system", "developer", "user", "assistant", "tool")


def record_problem(record: Sequence[Any]) -> tuple[int, str] | None:
    """Where (the entry's index) and why `record` is not a conversation a session can keep:
    each entry a message of the OpenAI shape or a compaction marker whose range is in the
    conversation so far, and the conversation it stands for well-formed (each assistant
    turn's calls answered by one tool message each, in order, and no tool message else).
    None when it is one: it can be shown, exported, replayed and sent."""
    view: list[tuple[int, dict[str, Any]]] = []  # the conversation, each with its record index
    for index, entry in enumerate(record):
        problem = _entry_problem(entry, len(view))
        if problem is not None:
            return index, problem
        if entry["role"] == MARKER:
            start, end = entry["replaced"]
            view[start:end] = [(index, entry["summary"])]
        else:
            view.append((index, entry))
    return _pairing_problem(view)


def _entry_problem(entry: object, length: int) -> str | None:
    if not isinstance(entry, dict):
        return f"a message is a JSON object, not {type(entry).__name__}"
    role = entry.get("role")
    if role == MARKER:
        replaced = entry.get("replaced")
        if not (
            isinstance(replaced, list)
            and len(replaced) == 2
            and all(_count(side) for side in replaced)
            and replaced[0] <= replaced[1] <= length
        ):
            return f"a compaction's 'replaced' is [start, end] of the {length} messages before it"
        if not all(_count(entry.get(name)) for name in ("rounds", "tokens_before", "tokens_after")):
            return "a compaction's 'rounds', 'tokens_before' and 'tokens_after' are counts"
        summary = entry.get("summary")
        if not isinstance(summary, dict) or summary.get("role") not in ROLES or summary.get("tool_calls"):
            return "a compaction's 'summary' is a message without tool calls"
        return _message_problem(summary)
    if role not in ROLES:
        return f"the role {role!r} is not one of {', '.join(ROLES)} or {MARKER}"
    return _message_problem(entry)


def _message_problem(message: dict[str, Any]) -> str | None:
    role, content = message["role"], message.get("content")
    if not (isinstance(content, str) or (content is None and role == "assistant") or _parts(content)):
        return f"a {role} message's content is text or a list of parts"
    calls = message.get("tool_calls")
    if calls is not None and (role != "assistant" or not isinstance(calls, list)):
        return "only an assistant message has tool_calls, a list"
    for call in calls or ():
        function = call.get("function") if isinstance(call, dict) else None
        if not (
            isinstance(call, dict)
            and isinstance(call.get("id"), str)
            and isinstance(function, dict)
            and isinstance(function.get("name"), str)
        ):
            return "a tool call has an 'id' and a 'function' with a 'name'"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "a tool message names the call it answers ('tool_call_id')"
    return None


def _pairing_problem(view: Sequence[tuple[int, dict[str, Any]]]) -> tuple[int, str] | None:
    pending: list[str] = []
    asked = 0  # the record index of the assistant turn whose calls are pending
    for index, message in view:
        if message["role"] == "tool":
            if not pending or message["tool_call_id"] != pending[0]:
                return index, f"a tool result ({message['tool_call_id']!r}) without its call just before it"
            pending.pop(0)
            continue
        if pending:
            return asked, f"the tool call {pending[0]!r} has no result after it"
        calls = message.get("tool_calls") or []
        pending, asked = [call["id"] for call in calls], index
    if pending:
        return asked, f"the tool call {pending[0]!r} has no result after it"
    return None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _parts(content: object) -> bool:
    return isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("type"), str) for part in content
    )
