"""What the real API rejects with HTTP 400: a malformed conversation or request (pure).

`problem(body)` returns `(field path, reason)` for the first thing wrong, or None. The rules
are the ones Venice (and OpenAI behind it) enforce and agents most often break:
- every assistant `tool_calls` entry is answered by exactly one `tool` message, and every
  `tool` message answers a call of the assistant turn just before it;
- no field is null, except `content` on an assistant turn that carries tool calls;
- tool names match `^[a-zA-Z0-9_-]{1,64}$`; `tool_choice` only comes with `tools`;
- `prompt_cache_key`, when sent, is a non-empty string.
"""

from __future__ import annotations

import re
from typing import Any

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ROLES = {"system", "developer", "user", "assistant", "tool"}

Problem = tuple[str, str]


def problem(body: Any) -> Problem | None:
    if not isinstance(body, dict):
        return ("body", "the request body must be a JSON object")
    for check in (_required, _nulls, _tools, _cache_key, _messages, _venice):
        found = check(body)
        if found is not None:
            return found
    return None


EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
WEB_SEARCH = ("off", "on", "auto")


def _venice(body: dict[str, Any]) -> Problem | None:
    """Venice's own fields, as its schema types them."""
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in EFFORTS:
        return (
            "reasoning_effort",
            f"Invalid enum value. Expected {' | '.join(EFFORTS)}, received '{effort}'",
        )
    venice = body.get("venice_parameters")
    if venice is None:
        return None
    if not isinstance(venice, dict):
        return ("venice_parameters", "Expected object")
    search = venice.get("enable_web_search")
    if search is not None and search not in WEB_SEARCH:
        return ("venice_parameters.enable_web_search", f"Invalid enum value, received '{search}'")
    for flag in (
        "disable_thinking",
        "strip_thinking_response",
        "enable_web_citations",
        "include_venice_system_prompt",
    ):
        if flag in venice and not isinstance(venice[flag], bool):
            return (f"venice_parameters.{flag}", "Expected boolean")
    return None


def _required(body: dict[str, Any]) -> Problem | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return ("model", "Field is required")
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return ("messages", "Field is required (a non-empty list)")
    return None


def _nulls(value: Any, path: str = "", allowed: bool = False) -> Problem | None:
    """The first null field; `content: null` is allowed only beside `tool_calls`."""
    if value is None and not allowed:
        return (path or "body", "Expected a value, received null")
    if isinstance(value, dict):
        tool_turn = value.get("role") == "assistant" and bool(value.get("tool_calls"))
        for key, item in value.items():
            found = _nulls(item, f"{path}.{key}" if path else key, tool_turn and key == "content")
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _nulls(item, f"{path}.{i}")
            if found is not None:
                return found
    return None


def _cache_key(body: dict[str, Any]) -> Problem | None:
    """`prompt_cache_key` (Venice and OpenAI take it): a non-empty string when given."""
    key = body.get("prompt_cache_key")
    if "prompt_cache_key" in body and (not isinstance(key, str) or not key or len(key) > 255):
        return ("prompt_cache_key", "Expected a non-empty string of at most 255 characters")
    return None


def _tools(body: dict[str, Any]) -> Problem | None:
    tools = body.get("tools")
    if tools is None:
        if "tool_choice" in body:
            return ("tool_choice", "tool_choice is only allowed when tools are given")
        return None
    if not isinstance(tools, list):
        return ("tools", "Expected an array")
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type") != "function":
            return (f"tools.{i}", "Expected {type: 'function', function: {...}}")
        if not TOOL_NAME.match(str(function.get("name", ""))):
            return (f"tools.{i}.function.name", f"Invalid tool name {function.get('name')!r}")
    return None


def _messages(body: dict[str, Any]) -> Problem | None:
    pending: list[str] = []  # ids of the last assistant turn still waiting for their answer
    pending_at = 0
    for i, message in enumerate(body["messages"]):
        where = f"messages.{i}"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return (
                f"{where}.role",
                f"Invalid role {message.get('role') if isinstance(message, dict) else None!r}",
            )
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return (
                    f"{where}.tool_call_id",
                    f"tool message answers no pending tool call (id {call_id!r})",
                )
            pending.remove(call_id)
            continue
        if pending:
            return _unanswered(pending_at, pending)
        if role == "assistant" and message.get("tool_calls"):
            pending, found = _calls(message["tool_calls"], where)
            if found is not None:
                return found
            pending_at = i
    return _unanswered(pending_at, pending) if pending else None


def _calls(calls: Any, where: str) -> tuple[list[str], Problem | None]:
    if not isinstance(calls, list):
        return [], (f"{where}.tool_calls", "Expected an array")
    ids: list[str] = []
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls.{j}"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            return [], (at, "a tool call needs an id and a function")
        if not TOOL_NAME.match(str(function.get("name", ""))):
            return [], (f"{at}.function.name", f"Invalid tool name {function.get('name')!r}")
        if not isinstance(function.get("arguments"), str):
            return [], (f"{at}.function.arguments", "Expected a string")
        if call["id"] in ids:
            return [], (f"{at}.id", f"duplicate tool call id {call['id']!r}")
        ids.append(call["id"])
    return ids, None


def _unanswered(at: int, pending: list[str]) -> Problem:
    return (
        f"messages.{at}.tool_calls",
        f"tool call ids {pending} have no tool message answering them",
    )


def details(found: Problem) -> dict[str, Any]:
    """Venice's validation error body for a problem (zod-style `details`)."""
    path, reason = found
    return {"error": "Invalid request parameters", "details": {"_errors": [], path: {"_errors": [reason]}}}
