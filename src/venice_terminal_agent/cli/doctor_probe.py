"""`doctor --probe`: two tiny requests that show what the model server really does with tools.

A server can list models and answer text while the agent's questions cannot work on it: one
that cannot stream tool calls answers a streamed request with tools with an empty body
(llama-cpp-python), a chat template can drop the tools silently, usage may never come, and
the output limit may be ignored. The probe asks, streamed as every question is:

1. the same short question with one small tool and room for a call: did a tool call stream,
   did usage come, and (with usage) did the tools reach the model: its prompt has to grow by
   about the size of the tool over the second request's;
2. the question again without tools and an output limit of one token: was it honoured.

Each finding is a check (name, ok, detail, advice); a server that is fine passes them all. Nothing is kept.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.errors import ModelError


def finding(name: str, ok: bool, detail: str, advice: str | None = None) -> tuple[str, bool, str, str | None]:
    """One check, as `doctor_cmd.Check` takes it (that module imports this one)."""
    return (name, ok, detail, advice)


PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}
QUESTION = [{"role": "user", "content": "What is the weather in Paris? Use the get_weather tool."}]
ROOM = 64  # output tokens for the call: a name and a short JSON object
# The tool's JSON is about 230 bytes; a template that keeps it adds well over this many tokens.
TOOLS_SEEN = 15


async def probe(base_url: str, key: str, model: str) -> list[tuple[str, bool, str, str | None]]:
    """The probe's checks (see the module), from two real requests to `base_url`."""
    import httpx2

    from ..model.wire import OpenAIHttp, StatusError

    http = OpenAIHttp(key, base_url, httpx2.Timeout(60.0, connect=10.0))
    try:
        with_tools = await _ask(http, model, tools=[PROBE_TOOL], limit=ROOM)
        limited = await _ask(http, model, limit=1)
    except StatusError as error:
        status = error.response.status_code
        said = error.response.text[:200]
        return [
            finding(
                "probe", False, f"the server answered {status}: {said}", "check VENICE_BASE_URL and --model"
            )
        ]
    except (httpx2.HTTPError, ValueError, ModelError) as error:
        return [finding("probe", False, f"the probe failed: {error}", "check VENICE_BASE_URL")]
    finally:
        await http.close()
    return [
        _tool_calls(with_tools),
        _usage(with_tools, limited),
        _tools_reached(with_tools, limited),
        _limit(limited),
    ]


async def _ask(http: Any, model: str, *, limit: int, tools: list[Any] | None = None) -> dict[str, Any]:
    """One streamed request; what came back: events, tool-call names, text, usage, finish."""
    from ..model.wire import events

    body: dict[str, Any] = {
        "model": model,
        "messages": QUESTION,
        "stream": True,
        "stream_options": {"include_usage": True},
        # Both names: llama-cpp-python reads only max_tokens, Venice and OpenAI the other.
        "max_tokens": limit,
        "max_completion_tokens": limit,
        **({"tools": tools} if tools else {}),
    }
    seen: dict[str, Any] = {"events": 0, "calls": [], "text": "", "usage": None, "finish": None}
    response = await http.stream("chat/completions", body)
    try:
        async for event in events(response):
            seen["events"] += 1
            if event.get("usage"):
                seen["usage"] = event["usage"]
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                seen["text"] += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    name = (call.get("function") or {}).get("name")
                    if name:
                        seen["calls"].append(name)
                seen["finish"] = choice.get("finish_reason") or seen["finish"]
    finally:
        await response.aclose()
    return seen


def _tool_calls(seen: dict[str, Any]) -> tuple[str, bool, str, str | None]:
    if seen["calls"]:
        return finding("tool calls", True, f"streamed ({', '.join(seen['calls'])})")
    if not seen["events"]:
        return finding(
            "tool calls",
            False,
            "a streamed request with tools got an empty reply",
            "this server cannot stream tool calls (llama-cpp-python cannot); use one that can, e.g. llama.cpp's llama-server --jinja",
        )
    said = json.dumps(seen["text"][:60], ensure_ascii=False)
    return finding(
        "tool calls",
        False,
        f"the model answered in text instead of calling the tool: {said}",
        "the model or its chat template may not call tools (llama-server: --jinja)",
    )


def _usage(seen: dict[str, Any], limited: dict[str, Any]) -> tuple[str, bool, str, str | None]:
    if seen["usage"] and limited["usage"]:
        return finding("usage", True, "streamed (token counts and costs are measured)")
    return finding(
        "usage",
        False,
        "the server streams no token counts",
        "token counts and costs will be unknown on this server",
    )


def _tools_reached(seen: dict[str, Any], limited: dict[str, Any]) -> tuple[str, bool, str, str | None]:
    with_tools = (seen["usage"] or {}).get("prompt_tokens")
    without = (limited["usage"] or {}).get("prompt_tokens")
    if not isinstance(with_tools, int) or not isinstance(without, int):
        return finding("tools sent", True, "not measured (no token counts)")
    grew = with_tools - without
    if grew >= TOOLS_SEEN:
        return finding("tools sent", True, f"reach the model (the prompt grew {grew} tokens with one tool)")
    return finding(
        "tools sent",
        False,
        f"the prompt was {with_tools} tokens with a tool and {without} without: the tools did not reach the model",
        "the chat template drops the tools; use one that renders them (llama-server: --jinja)",
    )


def _limit(limited: dict[str, Any]) -> tuple[str, bool, str, str | None]:
    used = (limited["usage"] or {}).get("completion_tokens")
    if isinstance(used, int):
        if used <= 1:
            return finding("output limit", True, f"honoured (asked for 1 token, got {used})")
        return finding(
            "output limit",
            False,
            f"ignored (asked for 1 token, got {used})",
            "MAX_COMPLETION_TOKENS will not hold on this server",
        )
    if limited["finish"] == "length":
        return finding("output limit", True, "honoured (the reply stopped at the limit)")
    return finding(
        "output limit",
        False,
        "not honoured as far as can be seen (no stop at 1 token)",
        "MAX_COMPLETION_TOKENS may not hold",
    )
