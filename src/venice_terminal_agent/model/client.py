"""The model client: streaming chat completions and retries (model discovery: `discovery.py`).

The HTTP side is `wire.py`, a small OpenAI-compatible client on httpx2 (it says why the
openai SDK is not used: its import was the largest cost of a one-shot question).

Any OpenAI-compatible server works (Venice by default; OpenAI, Ollama, vLLM, llama.cpp).
Requests carry only fields that have a value (Venice rejects nulls); `tools` and
`tool_choice` go only with tools. Venice's own system prompt is turned off with
`venice_parameters`, which every server but OpenAI's ignores or accepts.

Retries (`retry.py`): few, with backoff, `Retry-After` honoured, failures counted across
requests; text an attempt already showed is withdrawn (`TextDiscarded`) before the next.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core.defaults import VENICE_BASE_URL
from ..core.errors import ModelError
from ..core.events import EventSink, Notice, TextDelta, TextDiscarded, ThinkingDelta, ignore
from ..core.scrub import redact
from .discovery import DISCOVERY_TIMEOUT, ModelDiscovery
from .errors import EmptyReply, describe, foreign_errors
from .models import venice_headers
from .retry import FailureWindow, RetryPolicy, next_wait
from .stream import Assembler, Completion

if TYPE_CHECKING:
    import httpx2  # loaded when a client is made

    from .private import E2EE  # cryptography: only for a model used encrypted

CONNECT_TIMEOUT = 10.0  # seconds to open a connection to the model server
READ_TIMEOUT = 120.0  # seconds of silence allowed between two chunks of an answer
# Said once, on the terminal and on the receipt of the question it happened in (its `notes`).
UNSTREAMED_TOOLS = (
    "this model server sends nothing back for a streamed request with tools, so requests with "
    "tools go without streaming from now on (their answers appear whole)"
)


def complete_or_raise(turn: Completion) -> Completion:
    """`turn`, when the stream said it was over; a retryable `ModelError` when it just stopped.

    A reply ends with a finish reason. A stream that ends without one (no `[DONE]` either, or
    `choices: []` all the way) was cut off: taking it as an answer would print a truncated one
    ("PARTIAL answ"), or nothing, as if the model had finished."""
    if turn.finish_reason is None:
        if turn.text or turn.tool_calls:
            why = "the stream ended without a finish reason"
        else:
            why = "the stream ended before any of it arrived (no choices, no finish reason)"
        raise ModelError(f"the model's reply was cut off: {why}", retryable=True)
    return turn


class VeniceClient:
    # `prompt_cache_key` goes with a conversation's requests: Venice and OpenAI route on it to
    # where the prefix is cached; vLLM and llama.cpp ignore a field they do not know.
    takes_cache_key = True

    def __init__(
        self,
        api_key: str,
        base_url: str = VENICE_BASE_URL,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = READ_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        discovery_timeout: float = DISCOVERY_TIMEOUT,
        venice_parameters: bool | None = None,
        secrets: Iterable[str] = (),
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """`http_client`: an `httpx2.AsyncClient` to send requests with (a new one if None);
        tests give one on `testing.MockVenice`'s transport to run without a socket."""
        import httpx2

        from .wire import OpenAIHttp

        # A server may repeat a secret in its error ("the API key sk-… is invalid"): every
        # error this client raises is masked with its key and these (the Apify token, ${VAR}s).
        self.secrets = (api_key, *secrets)
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.failures = FailureWindow(self.retry.window, self.retry.clock)
        host = urlsplit(self.base_url).hostname or ""
        # OpenAI's own API refuses unknown fields, and `max_tokens` on its reasoning models;
        # everybody else ignores or wants them.
        self.openai = "openai.com" in host
        self.venice_parameters = venice_parameters if venice_parameters is not None else not self.openai
        # A server that sent nothing for a streamed request with tools (llama-cpp-python): the
        # session's later requests with tools go unstreamed at once.
        self.unstreamed_tools = False
        # A dead host fails fast (connect); a slow model may think, but not fall silent (read).
        limits = httpx2.Timeout(timeout, connect=connect_timeout)
        self._openai = OpenAIHttp(api_key, self.base_url, limits, http_client)
        self.answered = False  # a chat request has succeeded
        # The first chat request was refused 402: the money is the user's setup to fix (exit
        # 2), as a key refused is (`key_rejected`, 13), whether or not discovery said so.
        self.payment_refused = False
        self.headers: dict[str, str] = {}  # Venice's balance and deprecation headers, latest seen
        # Which model, and what it is (`GET /models`, once), over the same connection.
        self.discovery = ModelDiscovery(
            self._openai, self.base_url, self.headers, self._masked, discovery_timeout
        )

    async def __aenter__(self) -> VeniceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._openai.close()

    def request(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        temperature: float | None = None,
        max_completion_tokens: int | None = None,
        prompt_cache_key: str | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The body of a streamed chat request, with no null field in it."""
        body: dict[str, Any] = {
            "model": model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = list(tools)
            body["tool_choice"] = "auto"
        if temperature is not None:
            body["temperature"] = temperature
        if max_completion_tokens is not None:
            body["max_completion_tokens"] = max_completion_tokens
            if not self.openai:
                # The older name, the only one llama-cpp-python reads; Venice takes both.
                body["max_tokens"] = max_completion_tokens
        if prompt_cache_key is not None:
            body["prompt_cache_key"] = prompt_cache_key
        if response_format is not None:
            body["response_format"] = response_format
        return body

    async def complete(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        events: EventSink | None = None,
        max_completion_tokens: int | None = None,
        prompt_cache_key: str | None = None,
        response_format: dict[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        private: E2EE | None = None,
    ) -> Completion:
        """One assistant turn, streamed: text goes out as `TextDelta` events while it arrives.

        `options`: more request fields (`reasoning_effort`), and `venice_parameters` entries
        merged with ours (`enable_web_search`, `disable_thinking`), sent only to a server that
        takes `venice_parameters` (the checks before the request refuse them elsewhere).
        `private`: the model is used end-to-end encrypted (`private.E2EE`, one per model used so): attested before the first request, every message sealed, every chunk opened.
        Raises `ModelError` once retries are spent (or the failure is not worth retrying);
        `PrivateError` at once when the model is used encrypted and that fails."""
        body = self.request(
            model, messages, tools, temperature, max_completion_tokens, prompt_cache_key, response_format
        )
        given = dict(options or {})
        venice = {"include_venice_system_prompt": False, **given.pop("venice_parameters", {})}
        body.update(given)
        extra = {"venice_parameters": venice} if self.venice_parameters else None
        if private is not None:
            # Private, or not at all: attested first, then only sealed messages go out.
            if tools:
                raise private.fail("tools were offered, and E2EE does not allow them")
            await self._attest(private)
            body = {**body, "messages": private.seal(list(messages))}
            extra = {"venice_parameters": {**venice, "enable_e2ee": True}}
        payload = {**body, **(extra or {})}  # what is sent
        emit = events or ignore
        attempt = 0
        while True:
            attempt += 1
            shown = [False]
            try:
                completion = await self._attempt(payload, emit, shown, private)
                self.answered = True
                return completion
            except ModelError as error:  # only failed requests, translated in `_stream`
                problem = self._masked(error)
                if problem.status == 402 and not self.answered:
                    self.payment_refused = True
                wait = next_wait(self.retry, problem, attempt, self.failures.add())
                if shown[0]:
                    emit(TextDiscarded())
            await self.retry.sleep(wait)

    async def _attempt(
        self, payload: dict[str, Any], emit: EventSink, shown: list[bool], private: E2EE | None
    ) -> Completion:
        """One try of the request: streamed, or whole when this server cannot stream tool calls
        (never the case of an encrypted one: E2EE allows no tools). `shown`: whether the person
        saw part of its reply (a retry withdraws it)."""
        tools = bool(payload.get("tools"))
        if not (tools and self.unstreamed_tools):
            try:
                return await self._stream(payload, emit, shown, private)
            except EmptyReply:
                if not tools:
                    raise
            # Nothing at all came back for a streamed request with tools: the same request
            # again, not streamed (llama-cpp-python cannot stream "auto" tool choice, and says
            # so only in its own log), and so every later one with tools.
            self.unstreamed_tools = True
            emit(Notice(UNSTREAMED_TOOLS))  # said once; the planner keeps it for the receipt
        return await self._whole(payload, emit, shown)

    async def _whole(self, payload: dict[str, Any], emit: EventSink, shown: list[bool]) -> Completion:
        """The request without `stream`: the whole completion, read as one chunk of a stream."""
        foreign = foreign_errors()
        whole = {k: v for k, v in payload.items() if k not in ("stream", "stream_options")}
        try:
            response = await self._openai.post("/chat/completions", whole)
            answer = response.json()
        except foreign as error:
            raise describe(error, self.base_url) from error
        if not isinstance(answer, dict):
            raise ModelError("the model server's reply could not be read: it is not a JSON object")
        choices = [
            {
                "index": c.get("index", 0),
                "delta": c.get("message") or {},
                "finish_reason": c.get("finish_reason"),
            }
            for c in answer.get("choices") or ()
            if isinstance(c, dict)
        ]
        assembler = Assembler()
        _said(assembler, assembler.feed({**answer, "choices": choices}), emit, shown)
        _ended(assembler, emit)
        turn = self._finished(assembler, response)
        turn.streamed = False
        if turn.message.get("content") is None:
            # The one server this path is for (llama-cpp-python) sends a tool-call turn with
            # `content: null` and refuses it back (500: "Input should be a valid string"; and
            # without it, its chat template fails): the turn goes back with no text, "".
            turn.message["content"] = ""
        return turn

    async def _stream(
        self, payload: dict[str, Any], emit: EventSink, shown: list[bool], private: E2EE | None
    ) -> Completion:
        from .wire import events

        # The boundary: what a failed request raises becomes a `ModelError` here; what our own
        # code (the assembler, an event sink) raises is a bug and goes up as it is.
        foreign = foreign_errors()
        try:
            response = await self._openai.stream(
                "/chat/completions", payload, private.headers() if private else None
            )
        except foreign as error:
            raise describe(error, self.base_url) from error
        assembler = Assembler()
        chunks = events(response)
        received = 0
        try:
            while True:
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except foreign as error:
                    raise describe(error, self.base_url) from error
                received += 1
                text = assembler.feed(private.open(chunk) if private is not None else chunk)
                _said(assembler, text, emit, shown)
            _ended(assembler, emit)
        finally:
            await chunks.aclose()
            await response.aclose()
        if not received:
            raise EmptyReply()  # told apart from a reply cut off: nothing was sent at all
        return self._finished(assembler, response)

    def _finished(self, assembler: Assembler, response: httpx2.Response) -> Completion:
        turn = complete_or_raise(assembler.finish())
        turn.headers = venice_headers(response.headers)
        self.headers.update(turn.headers)
        return turn

    async def _attest(self, private: E2EE) -> None:
        """Fetch and check the model's attestation once per session (`PrivateError` if it
        cannot be fetched or does not pass): the key every message is sealed for."""
        if private.attested:
            return
        path, nonce = private.attestation_path()
        try:
            response = await self._openai.get(path)
            report = response.json()
        except ValueError:
            raise private.fail("its attestation is not JSON") from None
        except foreign_errors() as error:
            problem = self._masked(describe(error, self.base_url))
            raise private.fail(f"its attestation cannot be fetched ({problem.message})") from None
        private.accept(response.content, report, nonce)

    def _masked(self, problem: ModelError) -> ModelError:
        problem.message = redact(problem.message, self.secrets) or ""
        problem.args = (problem.message,)
        return problem

    async def read(self, path: str) -> Any:
        """The JSON of `GET path` (e.g. `billing/balance`), or None when the server has no such
        route (404/405) or answers no JSON; a `ModelError` (masked) for any other failure."""
        try:
            response = await self._openai.get(path)
            self.headers.update(venice_headers(response.headers))
            return response.json()
        except ValueError:
            return None
        except foreign_errors() as error:
            problem = self._masked(describe(error, self.base_url))
            if problem.status in (404, 405):
                return None
            raise problem from None


def _said(assembler: Assembler, text: str, emit: EventSink, shown: list[bool]) -> None:
    """Emit what one piece of the reply gave: its thinking, then its text (either marks the
    reply as shown, so a retry knows the person saw part of it)."""
    if assembler.thinking:
        shown[0] = True
        emit(ThinkingDelta(assembler.thinking))
    if text:
        shown[0] = True
        emit(TextDelta(text))


def _ended(assembler: Assembler, emit: EventSink) -> None:
    """Emit what the assembler held back until the end (half a character, a thinking block
    still open)."""
    tail = assembler.end()
    if assembler.thinking:
        emit(ThinkingDelta(assembler.thinking))
    if tail:
        emit(TextDelta(tail))
