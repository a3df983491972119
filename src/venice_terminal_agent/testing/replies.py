"""Scripted replies of the fake server, turned into SSE chunks or a whole completion (pure).

See `fake_venice` for the script format. A reply is checked when the script is loaded, so a
typo in a test's script fails at once with the reply's number, not as a puzzling run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError

REPLY_KEYS = {
    "text", "tool_calls", "same_index", "reasoning_content", "reasoning_details",
    "thought_signature", "extra", "finish_reason", "usage", "delay", "chunk_delay",
    "hang", "drop", "cut", "no_choices", "empty", "status", "error", "headers", "citations",
}  # fmt: skip
SCRIPT_KEYS = {
    "replies",
    "loop",
    "models",
    "traits",
    "headers",
    "models_error",
    "model_spec",
    "context_window",
    "entry",
    "props",
    "tee",
    "profile",
    "listing",
    "balance",
    "rate_limits",
    "output_maximum",
}
BYTES_PER_TOKEN = 4  # the fake's tokenizer: a token for every 4 bytes of messages and tools
VENICE_MODELS = Path(__file__).with_name("venice_models.json")  # real entries of Venice's /models
CALL_KEYS = {"name", "arguments", "id", "index"}

# How a server other than Venice behaves, one behaviour each (issue 22: what llama.cpp's and
# llama-cpp-python's servers did). A script's `profile` names any of them; see `fake_venice`.
PROFILES = {
    "no_usage": "never sends usage, streamed or not (llama-cpp-python ignores stream_options)",
    "output_limit": "honours the request's output limit: an answer longer than it is cut there, "
    "finish_reason length (a piece of text counts as one token)",
    "max_tokens_only": "reads the output limit from max_tokens alone (max_completion_tokens is "
    "ignored), and honours it as output_limit does",
    "no_streamed_tools": "a streamed request with tools gets HTTP 200 and an empty body, and uses "
    "no reply (llama-cpp-python: 'Automatic streaming tool choice is not supported')",
    "v1_routes": "serves /v1/models and /v1/chat/completions only (no Venice traits, no "
    'model_spec); any other path is a 404 {"detail": "Not Found"}, as FastAPI answers',
    "json_arguments": "refuses a request whose tool calls' arguments are not JSON, HTTP 500 and "
    "using no reply (llama-server: 'Failed to parse tool call arguments as JSON')",
    "no_null_content": "refuses an assistant message whose content is null or missing, HTTP 500 "
    "with its error and using no reply (llama-cpp-python, of the tool-call turns it sends itself)",
}
# Everything llama-cpp-python 0.3's server showed at once.
PROFILE_SETS = {
    "llama-cpp-python": ("no_usage", "max_tokens_only", "no_streamed_tools", "v1_routes", "no_null_content")
}

ERROR_BODIES = {
    400: "Invalid request parameters",
    401: "Authentication failed",
    402: "Insufficient USD or Diem balance to complete request",
    404: "Specified model not found",
    429: "Rate limit exceeded",
    500: "Inference failed",
    503: "The model is at capacity. Please try again later.",
}


class ScriptError(ConfigError, ValueError):
    """A script the fake server cannot play."""


def load_script(script: Any) -> dict[str, Any]:
    """A script as a dict: a JSON text, a list of replies, or a dict with `replies`."""
    if isinstance(script, str | bytes):
        try:
            script = json.loads(script)
        except json.JSONDecodeError as error:
            raise ScriptError(f"the script is not JSON: {error}") from None
    if isinstance(script, list):
        script = {"replies": script}
    if not isinstance(script, dict):
        raise ScriptError("a script is a list of replies or an object with `replies`")
    unknown = set(script) - SCRIPT_KEYS
    if unknown:
        raise ScriptError(f"unknown script keys {sorted(unknown)} (known: {sorted(SCRIPT_KEYS)})")
    script = {**script, "replies": list(script.get("replies", []))}  # ours to extend, not the caller's
    script["profile"] = profile_of(script.get("profile", ()))
    for number, reply in enumerate(script["replies"], start=1):
        check_reply(reply, number)
    return script


def profile_of(names: Any) -> frozenset[str]:
    """The behaviours a script's `profile` names (a name, or a list of them), sets expanded."""
    names = [names] if isinstance(names, str) else list(names)
    found: set[str] = set()
    for name in names:
        if name not in PROFILES and name not in PROFILE_SETS:
            known = sorted([*PROFILES, *PROFILE_SETS])
            raise ScriptError(f"unknown profile {name!r} (known: {', '.join(known)})")
        found.update(PROFILE_SETS.get(name, (name,)))
    return frozenset(found)


def output_limit(body: dict[str, Any], profile: frozenset[str]) -> int | None:
    """The output limit the server honours for this request, under `profile` (None: none)."""
    if "max_tokens_only" in profile:
        fields: tuple[str, ...] = ("max_tokens",)
    elif "output_limit" in profile:
        fields = ("max_completion_tokens", "max_tokens")
    else:
        return None
    limit = next((body[f] for f in fields if isinstance(body.get(f), int) and body[f] > 0), None)
    return limit


def within(reply: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """`reply` as a server honouring `limit` sends it: text past the limit cut, finish `length`."""
    pieces = _pieces(reply.get("text", ""))
    if limit is None or len(pieces) <= limit:
        return reply
    return {
        **reply,
        "text": pieces[:limit],
        "finish_reason": "length",
        "usage": {"completion_tokens": limit, **reply.get("usage", {})},
    }


def above_maximum(body: dict[str, Any], maximum: Any) -> str | None:
    """Venice's words for a request whose output limit is above the model's maximum (the
    script's `output_maximum`: N, or {model: N}), or None when it is not."""
    if isinstance(maximum, dict):
        maximum = maximum.get(body.get("model"))
    if not isinstance(maximum, int):
        return None
    for field in ("max_completion_tokens", "max_tokens"):
        asked = body.get(field)
        if isinstance(asked, int) and asked > maximum:
            return (
                f"{field} ({asked}) exceeds the maximum allowed for model '{body.get('model')}' ({maximum})"
            )
    return None


def check_reply(reply: Any, number: int) -> None:
    if not isinstance(reply, dict):
        raise ScriptError(f"reply {number} is not an object")
    unknown = set(reply) - REPLY_KEYS
    if unknown:
        raise ScriptError(f"reply {number}: unknown keys {sorted(unknown)} (known: {sorted(REPLY_KEYS)})")
    for call in reply.get("tool_calls", []):
        if not isinstance(call, dict) or "name" not in call or set(call) - CALL_KEYS:
            raise ScriptError(f"reply {number}: a tool call is {{name, arguments, id?, index?}}")


def count_tokens(body: dict[str, Any]) -> int:
    """A request's input tokens as the fake counts them: its messages and tools, compact JSON."""
    sent = [*body.get("messages", []), *body.get("tools", [])]
    size = len(json.dumps(sent, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return -(-size // BYTES_PER_TOKEN)


def context_error(window: int, size: int) -> dict[str, Any]:
    """The 400 body of a request longer than the window: OpenAI's wording, which Venice passes on."""
    return {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, you requested "
                f"{size} tokens ({size} in the messages, 0 in the completion). Please reduce the "
                "length of the messages or completion."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def arguments_error(body: dict[str, Any]) -> dict[str, Any] | None:
    """llama-server's 500 for a request whose tool calls' arguments are not JSON, or None."""
    for message in body.get("messages") or []:
        for call in message.get("tool_calls") or []:
            try:
                json.loads((call.get("function") or {}).get("arguments") or "")
            except ValueError as error:
                problem = f"Failed to parse tool call arguments as JSON: {error}"
                return {"error": {"code": 500, "message": problem, "type": "server_error"}}
    return None


def null_content_error(body: dict[str, Any]) -> dict[str, Any] | None:
    """llama-cpp-python's 500 for a request with an assistant message whose content is null
    (its pydantic model takes a string) or missing (its chat template reads it), or None."""
    messages = body.get("messages") or []
    found = next((m for m in messages if m.get("role") == "assistant" and m.get("content") is None), None)
    if found is None:
        return None
    if "content" not in found:
        message = "'dict object' has no attribute 'content'"
    else:
        where = (
            "body",
            "messages",
            messages.index(found),
            "ChatCompletionRequestAssistantMessage",
            "content",
        )
        problem = {
            "type": "string_type",
            "loc": where,
            "msg": "Input should be a valid string",
            "input": None,
        }
        message = f"1 validation error:\n  {problem}"
    return {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}


def error_body(reply: dict[str, Any]) -> Any:
    body = reply.get("error", ERROR_BODIES.get(reply["status"], "Unknown error"))
    return {"error": body} if isinstance(body, str) else body


def _pieces(text: str | list[str]) -> list[str]:
    return list(text) if isinstance(text, list) else re.findall(r"\S+\s*|\s+", text)


def _calls(reply: dict[str, Any], number: int) -> list[dict[str, Any]]:
    calls = []
    for i, call in enumerate(reply.get("tool_calls", [])):
        arguments = call.get("arguments", {})
        calls.append(
            {
                "index": 0 if reply.get("same_index") else call.get("index", i),
                "id": call.get("id", f"call_{number}_{i}"),
                "name": call["name"],
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            }
        )
    return calls


def _extras(reply: dict[str, Any]) -> dict[str, Any]:
    extras = {key: reply[key] for key in ("reasoning_details", "thought_signature") if key in reply}
    return {**extras, **reply.get("extra", {})}


def _usage(reply: dict[str, Any]) -> dict[str, int]:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, **reply.get("usage", {})}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _finish(reply: dict[str, Any]) -> str:
    return reply.get("finish_reason", "tool_calls" if reply.get("tool_calls") else "stop")


def chunks(
    reply: dict[str, Any], *, model: str, number: int, usage: bool, created: int
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects that stream `reply`, in order."""
    head = {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", **_extras(reply)})]
    if "citations" in reply:  # Venice: web search results in the first chunk
        out[0]["venice_parameters"] = {"enable_web_search": "on", "web_search_citations": reply["citations"]}
    out += [chunk({"reasoning_content": p}) for p in _pieces(reply.get("reasoning_content", ""))]
    out += [chunk({"content": p}) for p in _pieces(reply.get("text", ""))]
    for call in _calls(reply, number):
        first = {"index": call["index"], "id": call["id"], "type": "function"}
        out.append(chunk({"tool_calls": [{**first, "function": {"name": call["name"], "arguments": ""}}]}))
        half = len(call["arguments"]) // 2  # two pieces, so assembly is really exercised
        for piece in (call["arguments"][:half], call["arguments"][half:]):
            out.append(chunk({"tool_calls": [{"index": call["index"], "function": {"arguments": piece}}]}))
    out.append(chunk({}, _finish(reply)))
    if reply.get("no_choices"):
        out = [{**part, "choices": []} for part in out]
    if usage:
        out.append({**head, "choices": [], "usage": _usage(reply)})
    return out[: reply["cut"]] if "cut" in reply else out


def completion(
    reply: dict[str, Any], *, model: str, number: int, created: int, usage: bool = True
) -> dict[str, Any]:
    """The whole `chat.completion` for a request made without `stream`."""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(_pieces(reply.get("text", "")))}
    if "reasoning_content" in reply:
        message["reasoning_content"] = reply["reasoning_content"]
    message.update(_extras(reply))
    calls = _calls(reply, number)
    if calls:
        message["content"] = message["content"] or None
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ]
    extra = (
        {"venice_parameters": {"web_search_citations": reply["citations"]}} if "citations" in reply else {}
    )
    whole = {
        **extra,
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
    }
    return {**whole, "usage": _usage(reply)} if usage else whole


def listing(script: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The script's whole `/models` entries: its own list, or "venice" for the bundled sample of
    Venice's (eight text models as Venice listed them, 2026-08-22); None when it names ids only."""
    given = script.get("listing")
    if given is None:
        return None
    entries = json.loads(VENICE_MODELS.read_text(encoding="utf-8")) if given == "venice" else given
    extra = script.get("model_spec", {})
    return [{**entry, "model_spec": {**entry.get("model_spec", {}), **extra}} for entry in entries]


def models_body(script: dict[str, Any]) -> dict[str, Any]:
    entries = listing(script)
    if entries is not None:
        return {"object": "list", "type": "text", "data": entries}
    if "v1_routes" in script["profile"]:  # a plain OpenAI listing, as local servers give
        data = [
            {"id": model, "object": "model", "owned_by": "me", "created": 0}
            for model in script.get("models", ["fake-model"])
        ]
        return {"object": "list", "data": data}
    traits = traits_of(script)
    data = [
        {
            "id": model,
            "object": "model",
            "owned_by": "venice.ai",
            "type": "text",
            "created": 0,
            "model_spec": {
                "name": model,
                "traits": [trait for trait, target in traits.items() if target == model],
                "capabilities": {"supportsFunctionCalling": True, "supportsReasoning": False},
                **script.get("model_spec", {}),
            },
        }
        for model in script.get("models", ["fake-model"])
    ]
    # Another server's listing: `entry` fields on each model ({"model_spec": null} drops Venice's).
    data = [
        {key: value for key, value in {**m, **script.get("entry", {})}.items() if value is not None}
        for m in data
    ]
    return {"object": "list", "type": "text", "data": data}


def traits_of(script: dict[str, Any]) -> dict[str, str]:
    if "traits" in script:
        return dict(script["traits"])
    entries = listing(script)
    if entries is not None:
        return {
            trait: entry["id"]
            for entry in reversed(entries)
            for trait in entry["model_spec"].get("traits", [])
        }
    first = script.get("models", ["fake-model"])[:1]
    return {"default": first[0], "function_calling_default": first[0]} if first else {}
