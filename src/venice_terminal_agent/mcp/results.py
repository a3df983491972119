"""MCP tool results turned into text a model can use, and MCP errors into readable reasons.

Servers disagree on how they fail: some answer `is_error` results, some JSON-RPC errors
(`-32602` for an unknown tool or bad arguments). Both end as a `ToolError` with one readable
message, which the loop hands to the model as `{"error": ...}`. Pure: reads result objects
by attribute (`mcp.types` shapes) and imports nothing of MCP.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any

from ..core.errors import ToolError
from ..core.scrub import redact as redact  # the one masking helper, where the MCP modules look for it

# JSON-RPC / MCP error codes (mcp.types constants, repeated here to keep this module light).
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
REQUEST_TIMEOUT = -32001
CONNECTION_CLOSED = -32000
URL_ELICITATION_REQUIRED = -32042

_PREFIX = re.compile(r"^MCP error -?\d+:\s*")


def result_text(result: Any) -> str:
    """The result as text: structured content as JSON when given, else the text blocks.

    Images, audio, resource links and embedded resources are described in one line each
    (a model cannot read base64, but it should know they were there), wherever they are:
    binary data inside structured content is such a line too, never text for a model or a page.
    Raises `ToolError` when the server marked the result as an error.
    """
    blocks = list(getattr(result, "content", None) or [])
    structured = getattr(result, "structured_content", None)
    if getattr(result, "is_error", False):
        message = "\n".join(block_text(block) for block in blocks).strip()
        raise ToolError(_PREFIX.sub("", message) or "the tool failed without saying why")
    parts: list[str] = []
    if structured is not None:
        parts.append(json.dumps(without_binary(structured), ensure_ascii=False, default=str))
        blocks = [block for block in blocks if getattr(block, "type", None) != "text"]
    parts.extend(block_text(block) for block in blocks)
    return "\n".join(parts) if parts else "(the tool returned nothing)"


def block_text(block: Any) -> str:
    """One content block (a tool result's, a prompt message's) as text; binary described."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "unknown type"
        return binary_line(kind, mime, getattr(block, "data", "") or "")
    if kind == "resource_link":
        return _describe("resource link", block, getattr(block, "description", None))
    if kind == "resource":
        return contents_text(getattr(block, "resource", None), "embedded resource")
    return f"[a {kind or 'content'} block this agent does not read]"


def contents_text(resource: Any, what: str = "resource") -> str:
    """One resource's contents (`TextResourceContents` or `BlobResourceContents`): a line
    naming it, then its text; a blob is that line with its size, never its bytes."""
    text = getattr(resource, "text", None)
    head = _describe(what, resource, None)
    if isinstance(text, str):
        return f"{head}\n{text}"
    blob = getattr(resource, "blob", "") or ""
    return f"{head[:-1]}, about {len(blob) * 3 // 4} bytes of binary data, not shown]"


def resource_text(result: Any) -> str:
    """A `resources/read` result as text, each of its contents as `contents_text` says."""
    contents = list(getattr(result, "contents", None) or [])
    return "\n".join(contents_text(item) for item in contents) or "(the resource is empty)"


_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(?:;[^,;]*)*;base64,(.*)", re.DOTALL)
MIN_BINARY = 256  # shorter strings are left alone: ids and hashes look like base64 too


def without_binary(value: Any) -> Any:
    """Structured content with each piece of base64 replaced by one line describing it:
    content-block shapes (`data` with `type`/`mimeType`), resource `blob`s, `data:` URIs and
    any long string that is nothing but base64."""
    if isinstance(value, dict):
        data, blob = value.get("data"), value.get("blob")
        mime = value.get("mimeType") or value.get("mime_type")
        where = value.get("uri") or value.get("name")
        if isinstance(data, str) and (value.get("type") in ("image", "audio") or _is_base64(data)):
            return binary_line(str(value.get("type") or "binary data"), mime, data, where)
        if isinstance(blob, str):
            return binary_line("blob", mime, blob, where)
        return {key: without_binary(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_binary(item) for item in value]
    if isinstance(value, str) and len(value) >= MIN_BINARY:
        found = _DATA_URI.fullmatch(value)
        if found:
            return binary_line("data", found.group(1), found.group(2))
        if _is_base64(value):
            return binary_line("binary data", None, value)
    return value


def _is_base64(text: str) -> bool:
    return len(text) >= MIN_BINARY and _BASE64.fullmatch(text.replace("\n", "")) is not None


def binary_line(kind: str, mime: Any, data: str, where: Any = None) -> str:
    """`[image image/png, about 300000 bytes, <file:///a.png>, not shown]`"""
    words = f"{kind} {mime}" if mime else kind
    place = f", <{where}>" if where else ""
    return f"[{words}, about {len(data) * 3 // 4} bytes{place}, not shown]"


def _describe(what: str, item: Any, description: str | None) -> str:
    uri = getattr(item, "uri", None)
    name = getattr(item, "name", None)
    mime = getattr(item, "mime_type", None)
    words = [what]
    if name:
        words.append(str(name))
    if uri:
        words.append(f"<{uri}>")
    if mime:
        words.append(f"({mime})")
    line = " ".join(words)
    if description:
        line += f": {' '.join(str(description).split())}"
    return f"[{line}]"


def error_reason(error: Any, *, server: str, tool: str, timeout: float | None) -> str:
    """A readable reason for an MCP error (`code`, `message`, `data`) raised by a call to `tool`
    on `server`."""
    code, data = error.code, getattr(error, "data", None)
    text = _PREFIX.sub("", error.message or "").strip()
    if code == URL_ELICITATION_REQUIRED and (links := _elicitation_urls(data)):
        # The server needs the person in a browser first; without its URLs nobody could go on.
        said = text.rstrip(".") or f"{server} needs a step in the browser before {tool} can run"
        return f"{said}: open {' and '.join(links)}, then try again"
    if code == REQUEST_TIMEOUT and "timed out" in text.lower():
        limit = f" within {timeout:g} s" if timeout is not None else ""
        return f"{server} did not answer the call to {tool}{limit} (the per-call timeout, MCP_CALL_TIMEOUT); it may still be running there"
    if code == CONNECTION_CLOSED:
        return f"{server} closed the connection during the call to {tool} (the server stopped or crashed)"
    if code == METHOD_NOT_FOUND:
        return f"{server} does not support calling tools: {text}"
    return text or f"{server} refused the call to {tool} (error {code})"


def _elicitation_urls(data: Any) -> list[str]:
    """The URLs of a URL-elicitation-required error's `data.elicitations`."""
    elicitations = data.get("elicitations") if isinstance(data, dict) else None
    urls = [item.get("url") for item in elicitations or [] if isinstance(item, dict)]
    return [" ".join(url.split()) for url in urls if isinstance(url, str) and url.strip()]


_HTTP_MEANING = {
    401: "the server wants a token or a sign-in; check the token or headers in the MCP config",
    403: "the server wants a token or a sign-in (or this one may not use it); check the token or headers",
    404: "nothing is there; check the URL's path (MCP servers often serve at /mcp)",
    405: "that address does not take MCP requests; check the URL's path",
}


def http_status_reason(where: str, status: int) -> str:
    """What an HTTP error status at start-up means, in one line."""
    from http import HTTPStatus

    try:
        phrase = f" {HTTPStatus(status).phrase}"
    except ValueError:
        phrase = ""
    meaning = _HTTP_MEANING.get(status) or (
        "the server failed; try again later or ask its operator"
        if status >= 500 and status != 501
        else "check that the URL is the server's Streamable HTTP endpoint"
    )
    return f"{where} answered HTTP {status}{phrase}: {meaning}"


def leaf_error(error: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        inner = [e for e in error.exceptions if not isinstance(e, asyncio.CancelledError)]
        error = (inner or list(error.exceptions))[0]
    return error


def describe_error(error: BaseException) -> str:
    """One line for an exception: an MCP error's message, else the exception's text or type."""
    if getattr(error, "code", None) == CONNECTION_CLOSED:
        return "the server exited or closed the connection"
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    return " ".join(str(message).split())


def error_text(error: BaseException) -> str:
    """`describe_error` without the `MCP error -32602:` some servers put in their messages."""
    return _PREFIX.sub("", describe_error(error))


SDK_STAND_INS = {"Server returned an error response", "Not Found", "Session terminated"}


def schema_error(error: BaseException) -> bool:
    """The SDK's output-schema check failed (it raises a bare RuntimeError for that)."""
    text = str(error)
    return (
        "output schema" in text or "structured content" in text or text.startswith("Invalid schema for tool")
    )


def stderr_tail(stream: Any, lines: int = 3, width: int = 300) -> str:
    """The last non-empty lines a child wrote to stderr, joined on one line."""
    if stream is None or getattr(stream, "closed", True):
        return ""
    try:
        stream.flush()
        stream.seek(0)
        text = stream.read()
        stream.seek(0, os.SEEK_END)
    except (OSError, ValueError):
        return ""
    kept = [" ".join(line.split())[:width] for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:])
