"""`session/load`'s replay: a saved conversation shown to an editor as it was shown live.

It reads a stored record where the live side (`editor_agent.py`) maps a running question's
events; both show a tool call the same way (`tool_kind`, `RESULT_PREVIEW`), kept here, where
`editor_agent` imports them, so a replayed call looks as it did live.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message_text,
)

from ..text import call_text, preview

RESULT_PREVIEW = 400  # characters of a tool's result shown in the editor; the model gets it all


def tool_kind(spec: Any) -> str:
    """ACP's kind of a tool: what an editor shows beside it."""
    if spec is None:
        return "other"
    if spec.name in ("read_file", "list_files", "page"):
        return "read"
    return "fetch" if spec.server is not None and spec.read_only else "other"


def replay(record: list[dict[str, Any]], spec_of: Callable[[str], Any]) -> list[Any]:
    """The `session/update`s that show a stored conversation to an editor (`session/load`),
    oldest first, as they were shown live: each question a user message chunk, each answer an
    agent message chunk (after its reasoning as a thought chunk), each tool call one `tool_call` with its final status and short result.
    The system prompt and compaction markers are ours, not the conversation's: not shown."""
    results = {m.get("tool_call_id"): m.get("content") for m in record if m.get("role") == "tool"}
    updates: list[Any] = []
    for message in record:
        role, content = message.get("role"), message.get("content")
        if role == "user":
            text = _text(content)
            if text:
                updates.append(update_user_message_text(text))
        elif role == "assistant":
            thought = message.get("reasoning_content")
            if isinstance(thought, str) and thought:
                updates.append(update_agent_thought_text(thought))
            text = _text(content)
            if text:
                updates.append(update_agent_message_text(text))
            for tool_call in message.get("tool_calls") or []:
                updates.append(_replayed_call(tool_call, results, spec_of))
    return updates


def _replayed_call(tool_call: dict[str, Any], results: dict[Any, Any], spec_of: Callable[[str], Any]) -> Any:
    function = tool_call.get("function") or {}
    name = str(function.get("name") or "(unnamed)")
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError:
        arguments = function.get("arguments")
    result = results.get(tool_call.get("id"))
    error = _error_of(result)
    if result is None:
        error = "this call did not run"
    shown = error if error is not None else preview(result, RESULT_PREVIEW)
    return start_tool_call(
        f"saved-{tool_call.get('id')}",  # apart from this process's own `call-N` ids
        f"→ {call_text(name, arguments)}",
        kind=tool_kind(spec_of(name)),  # type: ignore[arg-type]
        status="failed" if error is not None else "completed",
        content=[tool_content(text_block(shown))],
        raw_input=arguments,
        raw_output=error if error is not None else result,
    )


def _error_of(result: Any) -> str | None:
    """The error a stored tool message holds: the loop writes a failed or declined call as
    `{"error": why}` (`planner.tool_content`)."""
    try:
        parsed = json.loads(result) if isinstance(result, str) else None
    except ValueError:
        return None
    if isinstance(parsed, dict) and set(parsed) == {"error"}:
        return str(parsed["error"])
    return None


def _text(content: Any) -> str:
    """A stored message's text: a string, or the text parts of a list (attachments are not replayed)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""
