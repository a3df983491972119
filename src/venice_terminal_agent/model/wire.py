"""The OpenAI-compatible HTTP API on httpx2: a JSON request, an answer or a stream of events.

Why not the openai SDK: importing it was the largest single cost of a one-shot question
(issue 21). Measured on the shared 2-CPU machine (2026-12-01, load average 5–7):
`python -c "import openai"` takes 0.98 s of CPU with warm bytecode (1.6 s compiling), 5 s of
wall time under that load, against 0.14 s (0.22 s) for `import httpx2`, which the SDK itself
runs on. Of the SDK this client used only the HTTP request, the error for a non-2xx answer,
and the server-sent-event reader: its types (`openai.types`, graders, evals) were imported
for a chunk we turned back into a dict at once. What remains is this module, which does
what the SDK did on that path, in the same way:

- the request: `POST {base_url}/chat/completions` with the JSON body (no nulls, as built by
  the client), `Authorization: Bearer KEY`, the client's timeouts on every request (also on a
  given `http_client`), redirects followed; the SDK's own retries were off (`max_retries=0`,
  ours are in `retry.py`), and so are they here;
- an answer that is not 2xx is read whole and raised as `StatusError` (the SDK's
  `APIStatusError`), for `errors.describe` to read Venice's body from;
- the stream: the SDK's SSE decoding (lines split on CR, LF or CRLF; `data:` lines joined;
  an event ends at a blank line, so an unterminated last event is dropped), `[DONE]` ends it
  (the rest of an HTTP/1.1 body drained for 0.1 s so the connection can be reused), and an
  event whose JSON carries `error` raises `StreamError` (the SDK's `APIError`);
- failures of the HTTP library itself (timeouts, refused connections, a peer that closed)
  go up as httpx2 raised them; `errors.describe` words them as it worded the SDK's wrappers.

The openai SDK is no longer a dependency of the package; the tests still use it
(tests/test_fake_venice.py) to check the fake server against the real client.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from typing import Any

import httpx2

from .. import __version__
from ..core import observe

DRAIN_TIMEOUT = 0.1  # seconds the rest of a body after [DONE] may take to read (as the SDK)
_LINE_END = re.compile(rb"\r\n|\r|\n")


class StatusError(Exception):
    """The server answered with a status that is not 2xx; `response` has been read."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class StreamError(Exception):
    """An event inside the stream carried an `error` (its value is `body`)."""

    def __init__(self, body: object) -> None:
        message = body.get("message") if isinstance(body, Mapping) else None
        super().__init__(
            message if isinstance(message, str) and message else "An error occurred during streaming"
        )
        self.body = body


class OpenAIHttp:
    """One OpenAI-compatible server: `await get(path)`, `await stream(path, body)`, `close()`."""

    def __init__(
        self,
        api_key: str,
        base_url: str,
        timeout: httpx2.Timeout,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/") + "/"
        self.timeout = timeout
        self._http = http_client or _Client(timeout=timeout, follow_redirects=True)
        self._headers = {
            "Accept": "application/json",
            "User-Agent": f"venice-agent/{__version__}",
            **({"Authorization": f"Bearer {api_key}"} if api_key else {}),
        }

    async def close(self) -> None:
        await self._http.aclose()

    async def get(self, path: str) -> httpx2.Response:
        """The answer to `GET path`, read; `StatusError` when it is not 2xx."""
        return await self._send("GET", path, None, stream=False)

    async def stream(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> httpx2.Response:
        """`POST path` with `body` (and extra `headers`), its answer still streaming (read it
        with `events`)."""
        return await self._send("POST", path, _json(body), stream=True, extra=headers)

    async def post(self, path: str, body: Mapping[str, Any]) -> httpx2.Response:
        """`POST path` with `body`, its answer read whole (a request made without `stream`)."""
        return await self._send("POST", path, _json(body), stream=False)

    async def _send(
        self,
        method: str,
        path: str,
        content: bytes | None,
        *,
        stream: bool,
        extra: Mapping[str, str] | None = None,
    ) -> httpx2.Response:
        headers = self._headers if content is None else {**self._headers, "Content-Type": "application/json"}
        url = path if "://" in path else self.base_url + path.lstrip("/")
        # The trace this request belongs to (`traceparent`), when tracing is on.
        headers = {**headers, **observe.outgoing(url), **(extra or {})}
        request = self._http.build_request(
            method,
            url,
            content=content,
            headers=headers,
            timeout=self.timeout,
        )
        response = await self._http.send(request, stream=stream)
        if not response.is_success:
            if not response.is_closed:
                await response.aread()
            raise StatusError(response)
        return response


def _json(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class _Client(httpx2.AsyncClient):
    """httpx2's client with `TlsWhenNeeded` as its default transport (a `transport=` argument
    would also turn off the proxies of the environment: this keeps them)."""

    def _init_transport(self, *args: Any, **options: Any) -> httpx2.AsyncBaseTransport:
        given = options.get("transport")
        return given if given is not None else TlsWhenNeeded()


class TlsWhenNeeded(httpx2.AsyncBaseTransport):
    """httpx2's own transport, made for `https://` on the first request that needs it.

    httpx2 builds its TLS context (the CA certificates loaded) with the client: 0.03–0.1 s of
    CPU measured here, paid before the first request even on a plain `http://` server (a local
    model, the fake server). Requests to `http://` go through a transport that never uses TLS
    (`verify=False` only spares loading certificates it has no use for: it carries no TLS);
    every `https://` request, a redirect included, goes through the verifying one."""

    def __init__(self) -> None:
        self._by_scheme: dict[bool, httpx2.AsyncHTTPTransport] = {}

    def _for(self, tls: bool) -> httpx2.AsyncHTTPTransport:
        if tls not in self._by_scheme:
            self._by_scheme[tls] = httpx2.AsyncHTTPTransport(verify=True if tls else False)
        return self._by_scheme[tls]

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._for(request.url.scheme != "http").handle_async_request(request)

    async def aclose(self) -> None:
        for transport in self._by_scheme.values():
            await transport.aclose()


async def events(response: httpx2.Response) -> AsyncGenerator[dict[str, Any]]:
    """The JSON objects of a streamed answer, in order, until `[DONE]` or the end of the body."""
    decoder = _Events()
    chunks = response.aiter_bytes()
    async for chunk in chunks:
        for data in decoder.feed(chunk):
            if data.startswith("[DONE]"):
                if response.http_version == "HTTP/1.1":
                    await _drain(chunks)
                return
            event = json.loads(data)  # not JSON: a ValueError, the server's fault (errors.py)
            if isinstance(event, Mapping) and event.get("error"):
                raise StreamError(event["error"])
            if not isinstance(event, dict):
                raise ValueError(f"an event of the stream is not a JSON object: {data[:80]!r}")
            yield event
    # A last line with no line end after it is never the blank line that ends an event: dropped.


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]` (briefly): an HTTP/1.1 connection read to the end of its body
    goes back to the pool and serves the next question (no new connection, no TLS handshake)."""
    try:
        async with asyncio.timeout(DRAIN_TIMEOUT):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx2.RequestError, httpx2.StreamError):
        pass  # cleanup must not turn a finished answer into a failed request (the caller closes)


class _Events:
    """Server-sent events decoded as the SDK did (the HTML standard's event stream): lines end
    at CR, LF or CRLF (a CRLF split across two chunks counts once), `:` starts a comment, the
    `data:` lines of an event are joined with LF, and a blank line ends the event; `event`,
    `id` and `retry` are read past (a chat stream has no use for them)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skip_lf = False
        self._data: list[str] = []
        self._started = False  # a field was seen since the last blank line

    def feed(self, chunk: bytes) -> Iterator[str]:
        start = 0
        for match in _LINE_END.finditer(chunk):
            end = match.start()
            if self._skip_lf and end == start and chunk[end] == 10:
                self._skip_lf = False
                start = end + 1
                continue
            self._skip_lf = False
            self._buffer.extend(memoryview(chunk)[start:end])
            line = bytes(self._buffer).decode("utf-8")
            self._buffer.clear()
            self._skip_lf = chunk[end] == 13
            start = end + 1
            data = self._line(line)
            if data is not None:
                yield data
        if start < len(chunk):
            self._skip_lf = False
            self._buffer.extend(memoryview(chunk)[start:])

    def _line(self, line: str) -> str | None:
        if not line:
            if not self._started:
                return None
            data, self._data, self._started = "\n".join(self._data), [], False
            return data
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            self._data.append(value)
            self._started = True
        elif field in ("event", "id", "retry"):
            self._started = True
        return None
