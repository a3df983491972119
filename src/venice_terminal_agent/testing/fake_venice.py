"""A fake OpenAI/Venice server on 127.0.0.1: real HTTP, real SSE, a scripted conversation.

In tests::

    async with FakeVenice([{"tool_calls": [{"name": "echo", "arguments": {"x": 1}}]},
                           {"text": "done"}]) as fake:
        client = AsyncOpenAI(api_key="k", base_url=fake.base_url)
        ...
        fake.chat_requests   # every chat request body it saw, malformed ones included

As a command (prints its base URL on stdout, then serves until SIGINT/SIGTERM; port 0, the
default, picks a free one; `--record FILE` appends every request it sees as a JSON line)::

    python -m venice_terminal_agent.testing.fake_venice script.json --port 0
    python -m venice_terminal_agent.testing.fake_venice '[{"text": "hello"}]'

Script: a list of replies, or an object
  replies   one reply per POST /chat/completions, in order
  loop      true: start over when the replies run out (benchmarks, demos)
  models    model ids served by GET /models (default ["fake-model"])
  traits    the `data` of GET /models/traits (default: default and function_calling_default
            name the first model; {} makes discovery find nothing)
  headers   extra headers on every chat response and on GET /models
  models_error  {"status", "error"?}: GET /models and /models/traits answer this error
  model_spec  fields merged into every model's `model_spec` in GET /models, e.g.
            {"pricing": {"input": {"usd": 0.5}, "output": {"usd": 2}}, "maxCompletionTokens": 4096}
Reply (all keys optional):
  text               the visible answer, streamed a word at a time (or a list of pieces)
  tool_calls         [{"name", "arguments" (object, or a raw string), "id"?, "index"?}]
  same_index         true: all tool calls streamed with index 0, as Venice may do
  reasoning_content  streamed before the text; reasoning_details, thought_signature and
  extra ({field: value}) go in the first delta and must come back in the next request
  finish_reason, usage ({"prompt_tokens", "completion_tokens"}, and any other field, sent as is:
                     "prompt_tokens_details", "cost": {"usd": …})
  delay, chunk_delay seconds before the response starts / between chunks (benchmarks only)
  hang               true: after the chunks the stream stays open, sending nothing more
  drop               true: after the chunks the connection is cut mid-stream
  cut                N: only the first N chunks are sent, then the response ends cleanly:
                     no finish reason, no [DONE] (a stream that stopped too soon)
  no_choices         true: every chunk comes with `choices: []` (the reply holds nothing)
  status, error      an error reply: the HTTP status and the body (a string becomes
                     Venice's {"error": string}; default: Venice's wording for the status)
  headers            response headers, e.g. {"Retry-After": "2"} or x-ratelimit-*

Every chat response carries Venice's rate-limit headers. A request whose conversation is
malformed (see `checks`) gets HTTP 400 with Venice's validation body and uses no reply. When
the script runs out the request gets a 500 that says so, and leaving the `async with` block
raises `AssertionError`; the command prints it on stderr and exits with status 1.

Stack: asyncio streams with h11 (the HTTP/1.1 parser uvicorn itself uses, installed with mcp).
Uvicorn's `Server` polls its stop flag every 100 ms and takes over SIGINT, which would add
0.2 s to every test and fight the terminal tests' Ctrl+C; this starts and stops at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h11

from . import checks, replies

HOST = "127.0.0.1"
Headers = list[tuple[str, str]]


@dataclass
class Seen:
    """One request the server received, and the status it answered (0: none yet)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0


class FakeVenice:
    """The server; `async with` starts it on a free port (see the module docstring)."""

    def __init__(self, script: Any = (), *, port: int = 0, record: Path | None = None) -> None:
        self.script = replies.load_script(list(script) if isinstance(script, tuple) else script)
        self.port = port
        self.record = record
        self.requests: list[Seen] = []
        self.exhausted: str | None = None  # why the script ran out, once it has
        self._next = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/api/v1"

    @property
    def chat_requests(self) -> list[Any]:
        return [seen.body for seen in self.requests if seen.path.endswith("/chat/completions")]

    @property
    def remaining(self) -> int:
        return len(self.script["replies"]) - self._next

    def add(self, *more: dict[str, Any]) -> None:
        """Append replies to the script (checked like the script's own)."""
        for reply in more:
            replies.check_reply(reply, len(self.script["replies"]) + 1)
            self.script["replies"].append(reply)

    async def start(self) -> FakeVenice:
        self._server = await asyncio.start_server(self._connection, HOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> FakeVenice:
        return await self.start()

    async def __aexit__(self, kind: object, error: object, trace: object) -> None:
        await self.stop()
        if kind is None and self.exhausted:
            raise AssertionError(f"fake_venice: {self.exhausted}")

    # HTTP -----------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while (request := await _read(conn, reader)) is not None:
                await self._respond(conn, reader, writer, *request)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError):
            pass
        except asyncio.CancelledError:
            pass  # the server is stopping; ending quietly keeps asyncio from logging it
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _respond(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
        request: h11.Request, raw: bytes,
    ) -> None:  # fmt: skip
        method, path = request.method.decode(), request.target.decode().split("?")[0]
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        seen = Seen(method, path, headers, body)
        self.requests.append(seen)
        try:
            failing = self.script.get("models_error")
            if method == "GET" and "/models" in path and failing:
                seen.status = await _send_json(conn, writer, failing["status"], replies.error_body(failing))
            elif method == "GET" and path.endswith("/models/traits"):
                data = {"data": replies.traits_of(self.script), "object": "list", "type": "text"}
                seen.status = await _send_json(conn, writer, 200, data)
            elif method == "GET" and path.endswith("/models"):
                extra = [(k, str(v)) for k, v in self.script.get("headers", {}).items()]
                seen.status = await _send_json(conn, writer, 200, replies.models_body(self.script), extra)
            elif method == "POST" and path.endswith("/chat/completions"):
                await self._chat(conn, reader, writer, seen)
            else:
                seen.status = await _send_json(conn, writer, 404, {"error": f"no route {method} {path}"})
        finally:
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(_recordable(seen), default=str) + "\n")

    async def _chat(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Seen
    ) -> None:
        seen.status = await self._play(conn, reader, writer, seen.body)

    async def _play(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Any
    ) -> int:
        found = checks.problem(body)
        if found is not None:
            return await _send_json(conn, writer, 400, checks.details(found))
        reply = self._take()
        if reply is None:
            return await _send_json(
                conn, writer, 500, {"error": self.exhausted}, [("x-should-retry", "false")]
            )
        number = self._next
        headers = self._headers(number) + [(k, str(v)) for k, v in reply.get("headers", {}).items()]
        await asyncio.sleep(reply.get("delay", 0))
        if "status" in reply:
            return await _send_json(conn, writer, reply["status"], replies.error_body(reply), headers)
        created, model = int(time.time()), body["model"]
        if not body.get("stream"):
            whole = replies.completion(reply, model=model, number=number, created=created)
            return await _send_json(conn, writer, 200, whole, headers)
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        parts = replies.chunks(reply, model=model, number=number, usage=usage, created=created)
        writer.write(
            conn.send(
                h11.Response(status_code=200, headers=[("content-type", "text/event-stream"), *headers])
            )
        )
        events = [b"data: " + json.dumps(part).encode() + b"\n\n" for part in parts]
        if not reply.get("chunk_delay"):
            events = [b"".join(events)]  # no pause between chunks: one write, as a busy server would
        for i, event in enumerate(events):
            if i:
                await asyncio.sleep(reply["chunk_delay"])
            writer.write(conn.send(h11.Data(data=event)))
            await writer.drain()
        if reply.get("hang"):
            await reader.read()  # until the client goes away (or the server stops)
            return 200  # the response is unfinished, so the connection closes
        if reply.get("drop"):
            writer.transport.abort()
            return 200
        if "cut" in reply:
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            return 200
        writer.write(conn.send(h11.Data(data=b"data: [DONE]\n\n")) + conn.send(h11.EndOfMessage()))
        await writer.drain()
        return 200

    def _take(self) -> dict[str, Any] | None:
        script = self.script["replies"]
        if self._next >= len(script) and self.script.get("loop") and script:
            self._next = 0
        if self._next >= len(script):
            self.exhausted = f"chat request {len(self.chat_requests)} came after the script's {len(script)} replies ran out"
            return None
        self._next += 1
        return script[self._next - 1]

    def _headers(self, number: int) -> Headers:
        now = int(time.time())
        venice = {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": str(max(0, 500 - number)),
            "x-ratelimit-reset-requests": str(now + 60),
            "x-ratelimit-limit-tokens": "1000000",
            "x-ratelimit-remaining-tokens": "999000",
            "x-ratelimit-reset-tokens": "60",
            "x-ratelimit-type": "api_key",
            "cf-ray": f"fake-{number}",
            "x-venice-version": "fake",
        }
        return [*venice.items(), *((k, str(v)) for k, v in self.script.get("headers", {}).items())]


def _recordable(seen: Seen) -> dict[str, Any]:
    """A request as written to the record file: the API key itself is never written down."""
    headers = dict(seen.headers)
    if "authorization" in headers:
        headers["authorization"] = f"<{len(headers['authorization'])} characters, not recorded>"
    return {**seen.__dict__, "headers": headers}


async def _read(conn: h11.Connection, reader: asyncio.StreamReader) -> tuple[h11.Request, bytes] | None:
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            return None


async def _send_json(
    conn: h11.Connection, writer: asyncio.StreamWriter, status: int, data: Any, headers: Headers | None = None
) -> int:
    payload = json.dumps(data).encode()
    head = [("content-type", "application/json"), ("content-length", str(len(payload))), *(headers or [])]
    writer.write(
        conn.send(h11.Response(status_code=status, headers=head))
        + conn.send(h11.Data(data=payload))
        + conn.send(h11.EndOfMessage())
    )
    await writer.drain()
    return status


# The command ----------------------------------------------------------------------------


def _script_arg(text: str) -> Any:
    if text.lstrip()[:1] in ("[", "{"):
        return text
    return Path(text).read_text(encoding="utf-8")


async def _serve(arguments: argparse.Namespace) -> int:
    fake = FakeVenice(_script_arg(arguments.script), port=arguments.port, record=arguments.record)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await fake.start()
    print(fake.base_url, flush=True)
    await stop.wait()
    await fake.stop()
    if fake.exhausted:
        print(f"fake_venice: {fake.exhausted}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m venice_terminal_agent.testing.fake_venice",
        description="A fake OpenAI/Venice server on 127.0.0.1 playing a scripted conversation.",
    )
    parser.add_argument("script", help="a script file, or the script itself as JSON")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    parser.add_argument("--record", type=Path, help="append every request seen to this file (JSON lines)")
    arguments = parser.parse_args(argv)
    try:
        return asyncio.run(_serve(arguments))
    except (OSError, replies.ScriptError) as error:
        print(f"fake_venice: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
