"""The HTTP API around one `Bot` (Starlette): JSON or server-sent events, tokens, limits.

    POST /v1/chats/{chat}/messages   {"text": …} → {"text", "status", "left", "receipt", …}
                                     (Accept: text/event-stream → the run's events, then the reply)
    GET  /v1/chats/{chat}            the chat's recent exchanges and what is left of its budget
    GET  /healthz                    200 while the store, the MCP servers and the model server
                                     answer; else 503 and one line naming what is down
    GET  /                           the chat page

Who may ask, checked before anything else runs (`edge.EdgeRules`): every request names a Host the
server listens as (`Hosts`; a page whose DNS name was rebound to 127.0.0.1 sends its own name),
and a request that changes anything (POST) comes from no browser origin or from the server's
own, with a JSON body (`Content-Type: application/json`: a browser cannot send that across
origins without a CORS preflight, which is refused). Nothing that is refused here (a foreign
host or origin, no token, another user's chat, a body over 32 KB, malformed or too deeply
nested JSON, an unknown route) reaches the store's ledger or the model: refusals cost no call.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Awaitable, Callable, Mapping
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ...core import observe
from ...core.events import Event, TextDelta, TextDiscarded, ToolFinished, ToolStarted
from ...core.observe import CARRIED
from ...core.receipt import read_json
from ...store.schema import StoreError
from ..http_edge import EdgeRules, Hosts, one_line
from .sse import EventStream, Refused, reply_json

MAX_BODY = 32 * 1024
MAX_CHAT_NAME = 200
HEALTH_TIMEOUT = 3.0  # seconds each part may take to answer /healthz
BODY_TIMEOUT = 10.0  # seconds for a body to arrive once its head did (a stalled upload holds a task)


def error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class Replies:
    """The replies running now, so that a server that is stopping can cancel them: each then
    ends `cancelled`, settled at the calls that ran, and its client still gets its reply."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[Any]] = set()
        self.stopping = False

    def cancel(self) -> None:
        self.stopping = True
        for task in self.running:
            task.cancel()


def build_app(
    bot: Any,
    *,
    hosts: Hosts,
    users: Mapping[str, str] | None = None,
    run_timeout: float = 300.0,
    health: Callable[[], Awaitable[list[str]]] | None = None,
    replies: Replies | None = None,
) -> Starlette:
    """`bot`: an opened `Bot`; `hosts`: the Host names it answers to; `users`: token → user
    name (None: no tokens, loopback only); `run_timeout`: seconds one reply may take before
    it is cancelled (and its reservation settled); `health`: one line per other part the bot
    needs that is down now (MCP servers, the model server), each asked within HEALTH_TIMEOUT;
    `replies`: where the running replies are kept (for `Replies.cancel`)."""
    running = replies if replies is not None else Replies()

    def user_of(request: Request) -> str | None:
        if users is None:
            return None
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token:
            for known, user in users.items():  # compare every token in constant time
                if hmac.compare_digest(known.encode(), token.strip().encode()):
                    return user
        raise Refused(401, "a valid 'Authorization: Bearer TOKEN' header is needed")

    async def chat_of(request: Request, user: str | None, *, claim: bool) -> str:
        chat = request.path_params["chat"]
        if not chat.strip() or len(chat) > MAX_CHAT_NAME:
            raise Refused(400, f"a chat name is 1 to {MAX_CHAT_NAME} characters")
        if user is not None:
            store = bot.store
            mine = (
                await store.claim_chat(chat, user, now=time.time())
                if claim
                else await store.owner(chat) == user
            )
            if not mine:  # another user's chat is not shown to exist
                raise Refused(404, f"no chat {chat!r}")
        return chat

    async def post_message(request: Request) -> Response:
        user = user_of(request)
        text = await _message_text(request)
        chat = await chat_of(request, user, claim=True)
        trace = {key: request.headers[key] for key in CARRIED if key in request.headers}  # the caller's
        if "text/event-stream" in request.headers.get("accept", ""):
            stream = EventStream(
                lambda events: _respond(bot, text, chat, events, run_timeout, running, trace), _event_json
            )
            return stream  # type: ignore[return-value]  # an ASGI app: Starlette answers with it
        return JSONResponse(reply_json(await _respond(bot, text, chat, None, run_timeout, running, trace)))

    async def get_chat(request: Request) -> Response:
        user = user_of(request)
        chat = await chat_of(request, user, claim=False)
        exchanges = await bot.history(chat)
        left = await bot.calls_left(chat)
        return JSONResponse(
            {
                "chat": chat,
                "exchanges": exchanges,
                "calls_left": left,
                "calls_per_window": bot.calls_per_window,
                "window": bot.window,
            }
        )

    async def store_down() -> list[str]:
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT):
                await bot.store.ping()
        except StoreError as problem:
            return [f"the store is unavailable: {problem}"]
        except TimeoutError:
            return [f"the store did not answer within {HEALTH_TIMEOUT:g} s"]
        return []

    async def healthz(request: Request) -> Response:
        """200 while the store, the MCP servers and the model server all answer; else 503
        with every part that is down, in one line (a load balancer stops sending then)."""
        nothing: Callable[[], Awaitable[list[str]]] = _nothing
        store, others = await asyncio.gather(store_down(), (health or nothing)())
        if store or others:
            return error(503, one_line("; ".join([*store, *others])), {"Retry-After": "5"})
        return JSONResponse({"ok": True})

    async def page(request: Request) -> Response:
        html = files(__package__).joinpath("page.html").read_text(encoding="utf-8")
        return HTMLResponse(html, headers={"Content-Security-Policy": "default-src 'self' 'unsafe-inline'"})

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        headers = {401: {"WWW-Authenticate": "Bearer"}, 408: {"Connection": "close"}}.get(exc.status)
        return error(exc.status, exc.message, headers)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return error(404, f"no such route: {request.method} {request.url.path}")
        return error(exc.status_code, str(exc.detail))

    async def store_refused(request: Request, exc: Exception) -> Response:
        return error(503, one_line(f"the store is unavailable: {exc}"), {"Retry-After": "5"})

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/v1/chats/{chat}/messages", post_message, methods=["POST"]),
        Route("/v1/chats/{chat}", get_chat, methods=["GET"]),
    ]
    handlers = {Refused: refused, HTTPException: http_error, StoreError: store_refused}
    return Starlette(
        routes=routes,
        exception_handlers=handlers,  # type: ignore[arg-type]
        middleware=[Middleware(EdgeRules, hosts=hosts)],  # type: ignore[arg-type]
    )


async def _message_text(request: Request) -> str:
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json":  # a form or text/plain: what a cross-site page can send
        raise Refused(415, "the body must be sent as 'Content-Type: application/json'")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise Refused(413, f"the request body is over {MAX_BODY // 1024} KB")
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_TIMEOUT):
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY:
                    raise Refused(413, f"the request body is over {MAX_BODY // 1024} KB")
    except TimeoutError:
        raise Refused(408, f"the request body did not arrive within {BODY_TIMEOUT:g} s") from None
    try:
        data = read_json(bytes(body))
    except UnicodeDecodeError:
        raise Refused(400, "the body is not UTF-8 text") from None
    except ValueError as problem:  # bad syntax, or nested too deeply
        raise Refused(400, f"the body is not JSON: {problem}") from None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise Refused(400, 'the body must be a JSON object with a "text" string')
    if not data["text"].strip():
        raise Refused(400, '"text" is empty')
    return data["text"]


async def _respond(
    bot: Any, text: str, chat: str, events: Any, run_timeout: float, replies: Replies, trace: Any = None
) -> Any:
    """The bot's reply; its run joins the caller's trace when tracing is on (`trace`: its
    `traceparent` header and siblings)."""
    task = asyncio.current_task()
    assert task is not None
    replies.running.add(task)
    try:
        async with asyncio.timeout(run_timeout):
            with observe.continued(trace or {}):
                return await bot.respond(text, chat, events=events)
    except TimeoutError:
        raise Refused(504, f"the reply took longer than {run_timeout:g} s and was stopped") from None
    except asyncio.CancelledError:
        if not replies.stopping:
            raise
        task.uncancel()  # cancelled before its run began (the bot settled it): said, not dropped
        raise Refused(503, "the server is stopping: this reply was cancelled") from None
    finally:
        replies.running.discard(task)


def _event_json(event: Event) -> tuple[str, dict[str, Any]] | None:
    """One run event as (SSE event name, data), or None for events the page does not show."""
    if isinstance(event, TextDelta):
        return "text", {"text": event.text}
    if isinstance(event, TextDiscarded):
        return "discard", {}
    if isinstance(event, ToolStarted):
        return "tool_started", {"tool": event.call.tool, "arguments": event.call.arguments}
    if isinstance(event, ToolFinished):
        return "tool_finished", {"tool": event.call.tool, "error": event.error}
    return None


async def _nothing() -> list[str]:
    return []


__all__ = [
    "HEALTH_TIMEOUT",
    "MAX_BODY",
    "Refused",
    "Replies",
    "build_app",
    "reply_json",
]
