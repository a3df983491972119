"""Model API failures translated at the boundary into one readable error.

Venice's error bodies are not OpenAI's (`{"error": "…", "details": {…}}` instead of
`{"error": {"message": …}}`): the body is read from the response whole. Each failure of a
request (`wire.py`, httpx2 under it) becomes a `ModelError` with one line for people, and
what a retry needs to know (retryable, Retry-After).
"""

from __future__ import annotations

import email.utils
import json
import re
import ssl
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ContextFullError, ModelError, OutputMaximumError, PaymentError
from ..core.errors import NoModelError as NoModelError  # its old home: still imports from here
from ..core.wording import VENICE_API_SETTINGS, payment_refusal

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
TOP_UP = VENICE_API_SETTINGS
PAYMENT_CODES = (
    "INSUFFICIENT_BALANCE",
    "API_KEY_USD_SPEND_LIMIT_EXCEEDED",
    "API_KEY_DIEM_SPEND_LIMIT_EXCEEDED",
)
MAX_LINE = 400
# How servers say a request is longer than the window: OpenAI's and Venice's code, OpenAI's
# and vLLM's "maximum context length is N tokens", llama.cpp's "exceeds the available context
# size" (and its error type), Venice's TOO_MANY_TOKENS.
CONTEXT_FULL = re.compile(
    r"context_length_exceeded|maximum context length|exceeds? the available context size"
    r"|exceed_context_size_error|context_exceeded|TOO_MANY_TOKENS|prompt is too long",
    re.IGNORECASE,
)

# Venice's 400 for an output limit above the model's own, naming that maximum last:
# "max_completion_tokens (8192) exceeds the maximum allowed for model 'llama-3.3-70b' (4096)".
OUTPUT_MAXIMUM = re.compile(
    r"max_(?:completion_)?tokens\W+\(?\d+\)?\s+exceeds the maximum allowed for model\b.*?\((\d+)\)",
    re.IGNORECASE,
)


# The last segment of an API root: /v1, /api/v1, /v1beta, /openai/v2 ...
VERSIONED = re.compile(r"/v\d+[a-z0-9]*/?$")


class EmptyReply(ModelError):
    """HTTP 200 and not one event: the server sent nothing at all (not a reply cut off).
    llama-cpp-python answers a streamed request with tools so."""

    def __init__(self) -> None:
        super().__init__(EMPTY_REPLY, retryable=True)


EMPTY_REPLY = "the model server sent an empty reply: HTTP 200 with nothing in it, not one event"


def v1_hint(base_url: str) -> str:
    """After a 404: the /v1 a base URL with no version in its path probably lacks ("" if none)."""
    if not base_url or VERSIONED.search(urlsplit(base_url).path):
        return ""
    return (
        f"; OpenAI-compatible servers serve their API under /v1: try {base_url.rstrip('/')}/v1 "
        "as the base URL (--base-url or VENICE_BASE_URL)"
    )


def from_response(
    status: int,
    headers: Mapping[str, str],
    body: object,
    clock: Callable[[], float] = time.time,
    *,
    request: str = "",
    base_url: str = "",
) -> ModelError:
    """The error for an HTTP answer `status` with `body` (parsed JSON, or text); `request` is
    `POST https://…/chat/completions`, said on a 404 with the /v1 the base URL may lack."""
    try:
        name = f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        name = str(status)
    detail = body_message(body) or "no details given"
    if status == 404 and request:  # the URL asked, and the /v1 it may lack
        line = f"{request} answered {name}: {detail}{v1_hint(base_url)}"
    elif status == 401:
        line = f"the model server rejected the API key ({name}: {detail}); check VENICE_API_KEY"
    elif status == 402:
        return _payment(headers, body, detail)
    elif status == 429:
        line = f"rate limited by the model server ({name}: {detail})"
    else:
        line = f"the model server answered {name}: {detail}"
    request_id = headers.get("cf-ray") or headers.get("x-request-id")
    if request_id:
        line += f" [request {request_id}]"
    retryable = status in RETRYABLE_STATUS and headers.get("x-should-retry") != "false"
    said = json.dumps(body) if not isinstance(body, str) else body
    if status in (400, 413, 422) and CONTEXT_FULL.search(said):
        return ContextFullError(one_line(line), status=status)
    if status in (400, 422) and (found := OUTPUT_MAXIMUM.search(detail)) and int(found[1]) > 0:
        return OutputMaximumError(one_line(line), maximum=int(found[1]), status=status)
    return ModelError(
        one_line(line), status=status, retryable=retryable, retry_after=retry_after(headers, status, clock)
    )


def payment_code(body: object) -> str | None:
    """Venice's code of a 402 (`{"error": "…", "code": "INSUFFICIENT_BALANCE"}`, or OpenAI's
    nesting), else the code its words name; None when neither says."""
    if isinstance(body, dict):
        for where in (body, body.get("error")):
            code = where.get("code") if isinstance(where, dict) else None
            if isinstance(code, str) and code.upper() in PAYMENT_CODES:
                return code.upper()
    words = json.dumps(body).upper() if not isinstance(body, str) else body.upper()
    named = next((code for code in PAYMENT_CODES if code in words), None)
    if named is not None:
        return named
    if "SPEND LIMIT" in words and ("DIEM" in words) != ("USD" in words):
        return "API_KEY_DIEM_SPEND_LIMIT_EXCEEDED" if "DIEM" in words else "API_KEY_USD_SPEND_LIMIT_EXCEEDED"
    if "INSUFFICIENT" in words and "BALANCE" in words:  # "Insufficient USD or Diem balance …"
        return "INSUFFICIENT_BALANCE"
    return None


def _payment(headers: Mapping[str, str], body: object, detail: str) -> PaymentError:
    code = payment_code(body)
    line = payment_refusal(code, detail)
    request_id = headers.get("cf-ray") or headers.get("x-request-id")
    if request_id:
        line += f" [request {request_id}]"
    return PaymentError(one_line(line), code=code)


def body_message(body: object) -> str:
    """Venice's `{"error": "…", "details": …}`, OpenAI's `{"error": {"message": …}}`, or text."""
    if isinstance(body, str):
        return body.strip()
    if not isinstance(body, dict):
        return ""
    error = body.get("error")
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("type") or json.dumps(error))
        code = error.get("code")
        return f"{message} ({code})" if code and str(code) not in message else message
    detail = body.get("detail")  # FastAPI's {"detail": "Not Found"} (llama-cpp-python, vLLM)
    message = str(error or body.get("message") or (detail if isinstance(detail, str) else json.dumps(body)))
    problems = list(_zod_problems(body.get("details")))
    if problems:
        message += " (" + "; ".join(problems) + ")"
    elif body.get("code") and str(body["code"]) not in message:
        message += f" ({body['code']})"
    return message


def _zod_problems(details: object, path: str = "") -> Iterator[str]:
    """`{"_errors": [...], "field": {"_errors": ["Field is required"]}}` as "field: ..." lines."""
    if isinstance(details, dict):
        for reason in details.get("_errors") or ():
            yield f"{path}: {reason}" if path else str(reason)
        for key, value in details.items():
            if key != "_errors":
                yield from _zod_problems(value, f"{path}.{key}" if path else key)
    elif isinstance(details, str) and details:
        yield f"{path}: {details}" if path else details


def retry_after(
    headers: Mapping[str, str], status: int, clock: Callable[[], float] = time.time
) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, `retry-after` (seconds or a date),
    else on a 429 Venice's `x-ratelimit-reset-requests` (a Unix time)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                pass
    value = headers.get("retry-after")
    if value:
        when = email.utils.parsedate_tz(value)
        if when is not None:
            return max(0.0, email.utils.mktime_tz(when) - clock())
    reset = headers.get("x-ratelimit-reset-requests")
    if status == 429 and reset:
        try:
            return max(0.0, float(reset) - clock())
        except ValueError:
            pass
    return None


def foreign_errors() -> tuple[type[BaseException], ...]:
    """What a failed request raises (`wire.py` and httpx2 under it): `describe` translates
    these, and only these. Anything else raised while we handle a reply is our own bug and must
    crash (exit 1), not pass for a `model_error`."""
    import httpx2

    from .wire import StatusError, StreamError

    # ValueError: an event that is not JSON (the server's fault, not ours).
    return (StatusError, StreamError, httpx2.HTTPError, httpx2.StreamError, *_unmapped(), ValueError)


def _unmapped() -> tuple[type[BaseException], ...]:
    """Network failures httpx2 may let through unwrapped (the openai SDK caught them too): TLS
    errors, and anyio's EndOfStream when anyio is in use (not imported for this)."""
    anyio = sys.modules.get("anyio")
    return (ssl.SSLError, *((anyio.EndOfStream,) if anyio is not None else ()))


def describe(error: BaseException, base_url: str = "", clock: Callable[[], float] = time.time) -> ModelError:
    """A failure of a model request (one of `foreign_errors()`) as a `ModelError`."""
    import httpx2

    from .wire import StatusError, StreamError

    if isinstance(error, ModelError):
        return error
    if isinstance(error, StatusError):
        response = error.response
        try:
            body: Any = response.json()
        except (ValueError, httpx2.ResponseNotRead):
            body = response.text if response.is_closed else ""
        try:
            asked = f"{response.request.method} {response.request.url}"
        except RuntimeError:  # a response built by hand, with no request
            asked = ""
        return from_response(
            response.status_code, response.headers, body, clock, request=asked, base_url=base_url
        )
    if isinstance(error, httpx2.TimeoutException):
        return ModelError(f"the model server at {base_url} did not answer in time", retryable=True)
    if isinstance(error, (httpx2.RequestError, *_unmapped())):
        return ModelError(one_line(f"cannot reach the model server at {base_url}: {error}"), retryable=True)
    if isinstance(error, StreamError):  # an error event inside the stream
        return ModelError(
            one_line(f"the model server reported an error: {body_message(error.body) or error}")
        )
    return ModelError(
        one_line(f"the model server's reply could not be read: {type(error).__name__}: {error}")
    )


def one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"
