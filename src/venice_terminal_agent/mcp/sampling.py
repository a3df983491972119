"""A server's `sampling/createMessage`, as the `mcp.Client` sampling callback.

The request becomes a `sampling.SamplingRequest` (the server's system prompt, then its
messages, as chat messages) and goes to the session's `SamplingDesk`, which decides and asks
the model (`sampling.py`); the answer goes back as text. Refusals reach the server as an MCP
error with code -1, the code the specification's example gives a request the user rejected, and
a message that says why.

Requests may carry the server's tools (the `sampling.tools` capability is declared): they go to
the model as functions, the server's earlier tool uses and results as the assistant's tool calls
and `tool` messages; calls the model proposes go back, each approved by the person, as
`tool_use` blocks. Content other than text (images, audio) is refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..core.receipt import canonical_json
from .sampling_model import Refused, SamplingDesk, SamplingRequest

REFUSED = -1


def request_from(server: str, params: Any) -> SamplingRequest:
    """The server's request as chat messages; `Refused` for what cannot be served."""
    messages: list[dict[str, Any]] = []
    if params.system_prompt:
        messages.append({"role": "system", "content": params.system_prompt})
    for message in params.messages:
        messages.extend(chat_messages(message))
    none = getattr(params.tool_choice, "mode", None) == "none"
    tools = () if none else tuple(function(tool) for tool in params.tools or ())
    return SamplingRequest(server, tuple(messages), int(params.max_tokens), params.temperature, tools)


def chat_messages(message: Any) -> list[dict[str, Any]]:
    """One sampling message as chat messages: tool results first (each a `tool` message, right
    after the assistant turn that called them), then the text."""
    texts, calls, results = [], [], []
    for block in message.content_as_list:
        kind = getattr(block, "type", type(block).__name__)
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use":
            arguments = canonical_json(block.input)
            calls.append(
                {"id": block.id, "type": "function", "function": {"name": block.name, "arguments": arguments}}
            )
        elif kind == "tool_result":
            content = "\n".join(text_of(part) for part in block.content)
            if block.is_error:
                content = canonical_json({"error": content})
            results.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": content})
        else:
            raise Refused(f"venice-agent samples text only; the request holds {kind} content")
    text = "\n".join(texts)
    if message.role == "assistant":
        return [{"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}]
    return [*results, *([{"role": "user", "content": text}] if texts or not results else [])]


def text_of(block: Any) -> str:
    if getattr(block, "type", None) != "text":
        raise Refused(f"venice-agent samples text only; a tool result holds {block.type} content")
    return str(block.text)


def function(tool: Any) -> dict[str, Any]:
    entry = {"name": tool.name, "parameters": dict(tool.input_schema or {"type": "object"})}
    if tool.description:
        entry["description"] = tool.description
    return {"type": "function", "function": entry}


def capabilities() -> Any:
    """What our sampling declares: tools too."""
    from mcp.types import SamplingCapability, SamplingToolsCapability

    return SamplingCapability(tools=SamplingToolsCapability())


def sampling(server: str, desk: SamplingDesk) -> Callable[..., Awaitable[Any]]:
    async def answer(context: Any, params: Any) -> Any:
        from mcp.types import (
            CreateMessageResult,
            CreateMessageResultWithTools,
            ErrorData,
            TextContent,
            ToolUseContent,
        )

        try:
            request = request_from(server, params)
            sampled = await desk.sample(request)
        except Refused as refusal:
            return ErrorData(code=REFUSED, message=refusal.reason)
        text = TextContent(type="text", text=sampled.text)
        if not request.tools:
            return CreateMessageResult(
                role="assistant", content=text, model=sampled.model, stop_reason=sampled.stop_reason
            )
        blocks: list[Any] = [text] if sampled.text or not sampled.calls else []
        blocks += [
            ToolUseContent(type="tool_use", id=call.id or "", name=call.tool, input=call.arguments)
            for call in sampled.calls
        ]
        return CreateMessageResultWithTools(
            role="assistant",
            content=blocks,
            model=sampled.model,
            stop_reason=sampled.stop_reason,
        )

    return answer
