"""A reply streamed as server-sent events, cancelled when the client goes away.

Starlette's `StreamingResponse` notices a disconnect only when it next writes, and a run may
wait minutes on a tool without writing; so this response listens for `http.disconnect`
itself and cancels the run at once, as Ctrl+C does in the terminal (the loop then ends
`cancelled` and the bot settles what was spent).

The status line is sent with the first event: a run refused before anything happened (the
store down, a timeout) still gets a real error status instead of a 200 stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import Receive, Scope, Send

Item = tuple[str, dict[str, Any]]
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),  # proxies: pass each event on at once
]


def sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class Refused(Exception):
    """A request answered with an error status and one line, before anything runs."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def reply_json(reply: Any) -> dict[str, Any]:
    return {
        "text": reply.text,
        "status": reply.status,
        "left": reply.left,
        "repeated": reply.repeated,
        "retry_after": reply.retry_after,
        "receipt": None if reply.receipt is None else reply.receipt.to_dict(),
    }


class EventStream:
    """An ASGI response: `run(sink)` is the reply; `convert(event)` names the events to send."""

    def __init__(
        self, run: Callable[[Callable[[Any], None]], Awaitable[Any]], convert: Callable[[Any], Item | None]
    ) -> None:
        self.run = run
        self.convert = convert

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        queue: asyncio.Queue[Item] = asyncio.Queue()

        def sink(event: Any) -> None:
            item = self.convert(event)
            if item is not None:
                queue.put_nowait(item)

        run: asyncio.Future[Any] = asyncio.ensure_future(self.run(sink))
        gone = asyncio.create_task(_disconnected(receive))
        started = False
        try:
            while True:
                items: list[Item] = []
                if queue.empty() and not run.done():
                    waiting = asyncio.create_task(queue.get())
                    await asyncio.wait({waiting, run, gone}, return_when=asyncio.FIRST_COMPLETED)
                    if waiting.done():
                        items.append(waiting.result())
                    else:
                        waiting.cancel()
                if gone.done():
                    return  # `finally` cancels the run
                while not queue.empty():
                    items.append(queue.get_nowait())
                if not items and run.done():
                    break
                for item in items:
                    started = started or await _start(send)
                    await send(_body(sse(*item)))
            try:
                reply = run.result()
            except Exception as problem:
                status, message = _refusal(problem, Refused)
                if not started:
                    await _plain(send, status, message)
                    return
                await send(_body(sse("error", {"status": status, "error": message})))
            else:
                started = started or await _start(send)
                await send(_body(sse("reply", reply_json(reply))))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
            if not run.done():
                run.cancel()
            with contextlib.suppress(BaseException):
                await run  # the bot records the cancelled run before this returns


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _start(send: Send) -> bool:
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    return True


def _body(data: bytes) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def _plain(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _refusal(problem: Exception, refused: type) -> tuple[int, str]:
    from ...store.schema import StoreError

    if isinstance(problem, refused):
        return problem.status, problem.message  # type: ignore[attr-defined]
    if isinstance(problem, StoreError):
        return 503, " ".join(f"the store is unavailable: {problem}".split())
    raise problem
