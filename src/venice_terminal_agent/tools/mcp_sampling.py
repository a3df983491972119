"""A server's `sampling/createMessage`, as the `mcp.Client` sampling callback.

The request becomes a `sampling.SamplingRequest` (the server's system prompt, then its
messages, as chat messages) and goes to the session's `SamplingDesk`, which decides and asks
the model (`sampling.py`); the answer goes back as text. Refusals reach the server as an MCP
error with code -1, the code the specification's example gives a request the user rejected, and
a message that says why.

What is not served, with a clear error: requests that carry tools (the server would have our
model call its tools, each of which would need the person's yes; the `sampling.tools`
capability is not declared, so servers that follow the specification never send them), and
content other than text (images, audio).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..sampling import Refused, SamplingDesk, SamplingRequest

REFUSED = -1
WITH_TOOLS = (
    "venice-agent does not serve sampling requests that carry tools "
    "(each call would need the user's approval, which it cannot ask for here)"
)


def request_from(server: str, params: Any) -> SamplingRequest:
    """The server's request as chat messages; `Refused` for what cannot be served."""
    if getattr(params, "tools", None) or getattr(params, "tool_choice", None):
        raise Refused(WITH_TOOLS)
    messages: list[dict[str, Any]] = []
    if params.system_prompt:
        messages.append({"role": "system", "content": params.system_prompt})
    for message in params.messages:
        texts = []
        for block in message.content_as_list:
            if getattr(block, "type", None) != "text":
                kind = getattr(block, "type", type(block).__name__)
                raise Refused(f"venice-agent samples text only; the request holds {kind} content")
            texts.append(block.text)
        messages.append({"role": message.role, "content": "\n".join(texts)})
    return SamplingRequest(server, tuple(messages), int(params.max_tokens), params.temperature)


def sampling(server: str, desk: SamplingDesk) -> Callable[..., Awaitable[Any]]:
    async def answer(context: Any, params: Any) -> Any:
        from mcp.types import CreateMessageResult, ErrorData, TextContent

        try:
            sampled = await desk.sample(request_from(server, params))
        except Refused as refusal:
            return ErrorData(code=REFUSED, message=refusal.reason)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=sampled.text),
            model=sampled.model,
            stop_reason=sampled.stop_reason,
        )

    return answer
