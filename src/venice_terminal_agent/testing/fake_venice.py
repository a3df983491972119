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
  loop      true: start over when the replies run out (benchmarks); "question": start over
            at each question, the reply for its Nth model turn the Nth (the last one for any
            turn after, and for a request without tools), whatever came before (demos);
            `$question` in a reply's text or tool call arguments is the question's own text
  models    model ids served by GET /models (default ["fake-model"])
  traits    the `data` of GET /models/traits (default: default and function_calling_default
            name the first model; {} makes discovery find nothing)
  headers   extra headers on every chat response and on GET /models
  models_error  {"status", "error"?}: GET /models and /models/traits answer this error
  model_spec  fields merged into every model's `model_spec` in GET /models, e.g.
            {"pricing": {"input": {"usd": 0.5}, "output": {"usd": 2}}, "maxCompletionTokens": 4096}
  entry     fields merged into every model of GET /models, as another server lists them:
            {"max_model_len": 8192, "model_spec": null} (vLLM), {"owned_by": "llamacpp", …}
  props     the body of GET /props at the server's root (llama-server's), e.g.
            {"default_generation_settings": {"n_ctx": 4096}}
  context_window  N: a chat request of more than N tokens (a token for every 4 bytes of its
            messages and tools, compact JSON) gets OpenAI's 400 `context_length_exceeded`, the
            wording Venice passes on, and uses no reply; with it, a reply's usage says the
            request's real `prompt_tokens`. `fake.request_tokens` holds every request's size.
  output_maximum  N, or {model: N}: the model's hidden output maximum (Venice lists none): a
            chat request whose max_completion_tokens (or max_tokens) is above it gets Venice's
            400 "max_completion_tokens (8192) exceeds the maximum allowed for model 'm' (N)"
            and uses no reply
  tee       true, or {"fault": …}: GET /tee/attestation and end-to-end encrypted chats with
            real cryptography (`testing.tee`, which lists the faults)
  profile   how the server differs from Venice: a name or a list of names (`replies.PROFILES`),
            e.g. "no_usage", "output_limit", "max_tokens_only", "no_streamed_tools",
            "v1_routes" (its base URL then ends in /v1), "no_null_content", "json_arguments", or
            "llama-cpp-python" for all of them but output_limit, as that server behaved
            (issues 22 and 35)
  listing   whole GET /models entries instead of `models`: a list, or "venice" for the
            bundled sample of Venice's own (testing/venice_models.json: eight text models as
            Venice listed them); their `model_spec.traits` are /models/traits' defaults
  balance, rate_limits  the bodies of GET /billing/balance and GET /api_keys/rate_limits
            ({"status": 401, ...} answers that error); without them both answer 404
Reply (all keys optional):
  text               the visible answer, streamed a word at a time (or a list of pieces)
  tool_calls         [{"name", "arguments" (object, or a raw string), "id"?, "index"?}]
  same_index         true: all tool calls streamed with index 0, as Venice may do
  reasoning_content  streamed before the text; reasoning_details, thought_signature and
  extra ({field: value}) go in the first delta and must come back in the next request
  citations          web search results ({title, url, date?, content?}) in the first chunk's
                     `venice_parameters.web_search_citations`, as Venice sends them
  finish_reason, usage ({"prompt_tokens", "completion_tokens"}, and any other field, sent as is:
                     "prompt_tokens_details", "cost": {"usd": …})
  delay, chunk_delay seconds before the response starts / between chunks (benchmarks only)
  hang               true: after the chunks the stream stays open, sending nothing more
  drop               true: after the chunks the connection is cut mid-stream
  cut                N: only the first N chunks are sent, then the response ends cleanly:
                     no finish reason, no [DONE] (a stream that stopped too soon)
  no_choices         true: every chunk comes with `choices: []` (the reply holds nothing)
  empty              true: HTTP 200 with an empty body, not one event (the server sent nothing)
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
from pathlib import Path
from typing import Any

import h11

from . import replies
from .scripted import Answer, Scripted, Seen, root_path

HOST = "127.0.0.1"
__all__ = ["HOST", "FakeVenice", "Seen", "main"]


class FakeVenice(Scripted):
    """The server; `async with` starts it on a free port (see the module docstring)."""

    def __init__(self, script: Any = (), *, port: int = 0, record: Path | None = None) -> None:
        super().__init__(script, record=record)
        self.port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}" + root_path(self.script)

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
        if kind is None:
            self.check_finished()

    # HTTP -----------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while (request := await _read(conn, reader)) is not None:
                head, raw = request
                headers = {k.decode().lower(): v.decode() for k, v in head.headers}
                _, answer = self.answer(head.method.decode(), head.target.decode(), headers, raw)
                await _send(conn, reader, writer, answer)
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


async def _send(
    conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: Answer
) -> None:
    await asyncio.sleep(answer.delay)
    if answer.events is None:
        payload = json.dumps(answer.body).encode()
        head = [("content-type", "application/json"), ("content-length", str(len(payload))), *answer.headers]
        writer.write(
            conn.send(h11.Response(status_code=answer.status, headers=head))
            + conn.send(h11.Data(data=payload))
            + conn.send(h11.EndOfMessage())
        )
        await writer.drain()
        return
    writer.write(conn.send(h11.Response(status_code=answer.status, headers=answer.headers)))
    events = answer.events
    if not answer.chunk_delay:
        events = [b"".join(events)]  # no pause between chunks: one write, as a busy server would
    for i, event in enumerate(events):
        if i:
            await asyncio.sleep(answer.chunk_delay)
        writer.write(conn.send(h11.Data(data=event)))
        await writer.drain()
    if answer.hang:
        await reader.read()  # until the client goes away (or the server stops)
        return  # the response is unfinished, so the connection closes
    if answer.drop:
        writer.transport.abort()
        return
    if answer.cut:  # the response ends cleanly, but without a finish reason or [DONE]
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        return
    writer.write(conn.send(h11.Data(data=answer.done)) + conn.send(h11.EndOfMessage()))
    await writer.drain()


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
