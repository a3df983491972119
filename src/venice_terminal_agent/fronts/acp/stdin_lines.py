"""What reaches the ACP SDK from the editor: one JSON-RPC message a line, each line checked first.

The SDK reads stdin itself and trusts the shape of what it parses: a line that is a JSON array,
a number or a string, or a response whose `error` is not an object, ends its receive loop and the
process with it; a line that is not JSON is dropped with no answer; a line is read whole, however
long. `editor_streams` puts this module between stdin and the SDK: each line that is not a
JSON-RPC message the SDK can take is answered with the protocol's own error (`check`: Parse error
-32700, Invalid Request -32600; the id is the request's when it can be read, else null), and the
agent reads on. What passes is a JSON object with a well-typed `jsonrpc`, `id`, `method`,
`params` (or `result` / `error`), at most `MAX_LINE` bytes long and `MAX_DEPTH` levels deep; the
SDK then checks each method's parameters against the schema (Invalid params -32602).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

MAX_LINE = 16 * 1024 * 1024  # bytes in one message: a large file embedded in a prompt fits
MAX_DEPTH = 100  # levels of nesting: ACP's own messages need about ten
CHUNK = 1024 * 1024  # what stdin is read in when a line is longer
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
KINDS = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request", INVALID_PARAMS: "Invalid params"}


def _error(code: int, reason: str, ident: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": f"{KINDS[code]}: {reason}"}}


def _servers_problem(params: dict[str, Any]) -> str | None:
    """What is wrong with a session's `mcpServers` entries of a kind we know. The SDK drops an
    entry it cannot read without a word (ACP's rule for kinds added later), so an editor's server
    with a typo would silently be missing: refused here instead, naming the entry."""
    from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer
    from pydantic import ValidationError

    servers = params.get("mcpServers", [])
    if not isinstance(servers, list):
        return "mcpServers is a list"
    kinds: dict[Any, Any] = {
        None: McpServerStdio,
        "stdio": McpServerStdio,
        "http": HttpMcpServer,
        "sse": SseMcpServer,
    }
    for number, server in enumerate(servers):
        if not isinstance(server, dict):
            return f"mcpServers[{number}] is an object"
        kind = kinds.get(server.get("type"))
        if kind is None:
            continue  # a kind of server this version does not know: the SDK leaves it out
        try:
            kind.model_validate(server)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            return f"mcpServers[{number}].{where}: {first['msg']}"
    return None


def _depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (without recursion: it may be deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((inner, level + 1) for inner in item)
    return deepest


def _is_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check(line: bytes) -> dict[str, Any] | None:
    """None when `line` is a message the SDK can take; else the error response to answer it with."""
    try:
        message = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return _error(PARSE_ERROR, "the line is not UTF-8")
    except RecursionError:
        return _error(PARSE_ERROR, f"the message nests more than {MAX_DEPTH} levels deep")
    except ValueError:
        return _error(PARSE_ERROR, "the line is not JSON")
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "a message is a JSON object (batches are not taken)")
    ident = message.get("id")
    if not _is_id(ident):
        return _error(INVALID_REQUEST, "the id is a string, a whole number or null")
    if _depth(message) > MAX_DEPTH:
        return _error(INVALID_REQUEST, f"the message nests more than {MAX_DEPTH} levels deep", ident)
    if message.get("jsonrpc") != "2.0":
        return _error(INVALID_REQUEST, 'jsonrpc must be "2.0"', ident)
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(INVALID_REQUEST, "the method is a string", ident)
        params = message.get("params", {})
        if not isinstance(params, dict):
            return _error(INVALID_REQUEST, "the params are an object", ident)
        if message["method"] in ("session/new", "session/load") and (problem := _servers_problem(params)):
            return _error(INVALID_PARAMS, problem, ident)
        return None
    # A response to one of our requests (a permission asked).
    if ident is None or not ("result" in message or isinstance(message.get("error"), dict)):
        return _error(INVALID_REQUEST, "a message has a method, or an id with a result or an error object")
    return None


async def read_line(source: asyncio.StreamReader) -> tuple[bytes | None, bool]:
    """The next line (None at the end of input), and whether it was within `MAX_LINE`: a longer
    one is read to its end but only its start is kept."""
    kept: list[bytes] = []
    size = 0
    while True:
        ended = True
        try:
            piece = await source.readuntil(b"\n")
        except asyncio.LimitOverrunError as over:
            piece, ended = await source.readexactly(over.consumed), False
        except asyncio.IncompleteReadError as end:
            piece = end.partial
            if not piece and size == 0:
                return None, True
        size += len(piece)
        if size <= MAX_LINE:
            kept.append(piece)
        if ended:
            return b"".join(kept), size <= MAX_LINE


async def pump(source: asyncio.StreamReader, out: asyncio.StreamWriter, sink: asyncio.StreamReader) -> None:
    """Lines from `source` into `sink` (the SDK's reader), each bad one answered on `out`."""
    try:
        while True:
            line, within = await read_line(source)
            if line is None:
                return
            if not line.strip():
                continue
            answer = (
                check(line) if within else _error(INVALID_REQUEST, f"a message is at most {MAX_LINE} bytes")
            )
            if answer is None:
                sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
                continue
            out.write((json.dumps(answer, separators=(",", ":")) + "\n").encode())
            await out.drain()
    finally:
        sink.feed_eof()


class OneLine(logging.Formatter):
    """The SDK's own log lines (a notification it could not handle) as one line on stderr each,
    without a traceback: the editor's log shows what happened, not where in the SDK."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f": {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        return "venice-agent: " + " ".join(text.split())[:500]


async def editor_streams() -> tuple[asyncio.StreamWriter, asyncio.StreamReader, asyncio.Task[None]]:
    """stdout, the checked stdin (`pump` feeds it, in the task returned) for `acp.run_agent`."""
    from acp.stdio import stdio_streams

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.getLogger().handlers[:] = [handler]
    source, out = await stdio_streams(limit=CHUNK)
    sink = asyncio.StreamReader(limit=2 * MAX_LINE)
    return out, sink, asyncio.ensure_future(pump(source, out, sink))
