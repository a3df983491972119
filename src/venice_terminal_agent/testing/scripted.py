"""The fake Venice's brain, without a wire: which reply a request gets, and what was seen.

Shared by the socket server (`fake_venice.FakeVenice`, for subprocess and terminal tests) and
the in-process transport (`mock_venice.MockVenice`, an `httpx2.MockTransport` handler): both
check requests the same way (`checks`), play the same script (`replies`) and record the same
`Seen` list, so a test moves between them by changing one line.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import checks, replies

Headers = list[tuple[str, str]]


@dataclass
class Seen:
    """One request the server received, and the status it answered (0: none yet)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0
    query: str = ""  # what followed `?` in the request's target


@dataclass
class Answer:
    """What to send back: a JSON body, or (`events`) a stream of server-sent events."""

    status: int
    headers: Headers
    body: Any = None
    events: list[bytes] | None = None
    delay: float = 0.0  # before the response starts
    chunk_delay: float = 0.0  # between events (otherwise all of them go in one write)
    hang: bool = False  # after the events the stream stays open, sending nothing more
    drop: bool = False  # after the events the connection is cut
    cut: bool = False  # after the events the response ends, without [DONE]
    done: bytes = field(default=b"data: [DONE]\n\n")


class Scripted:
    """A script being played, request by request (see `fake_venice` for the script format)."""

    def __init__(self, script: Any = (), *, record: Path | None = None) -> None:
        self.script = replies.load_script(list(script) if isinstance(script, tuple) else script)
        self.record = record
        self.requests: list[Seen] = []
        self.exhausted: str | None = None  # why the script ran out, once it has
        self.request_tokens: list[
            int
        ] = []  # each well-formed chat request's size, as `replies.count_tokens` counts
        self._next = 0
        self.tee: Any = None  # the TEE of E2EE models (`tee.FakeTee`), when the script has one
        if self.script.get("tee"):
            from .tee import FakeTee  # cryptography: only for a script that plays E2EE

            self.tee = FakeTee(self.script["tee"])

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

    def check_finished(self) -> None:
        """Raise `AssertionError` if a request came after the script ran out."""
        if self.exhausted:
            raise AssertionError(f"fake_venice: {self.exhausted}")

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[Seen, Answer]:
        """The reply to one request; the request is recorded in `requests` (and `record`)."""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        seen = Seen(method, path.split("?")[0], headers, body, query=urlsplit(path).query)
        self.requests.append(seen)
        query = dict(parse_qsl(seen.query))
        path = seen.path
        failing = self.script.get("models_error")
        if "v1_routes" in self.script["profile"] and (
            not path.startswith("/v1/") or path.endswith("/models/traits")
        ):
            answer = Answer(404, [], {"detail": "Not Found"})  # FastAPI's, as llama-cpp-python's
        elif method == "GET" and path.endswith("/tee/attestation") and self.tee is not None:
            status, report = self.tee.attestation(query.get("model", ""), query.get("nonce", ""))
            answer = Answer(status, [], report)
        elif method == "GET" and "/models" in path and failing:
            answer = Answer(failing["status"], [], replies.error_body(failing))
        elif method == "GET" and path.endswith("/models/traits"):
            data = {"data": replies.traits_of(self.script), "object": "list", "type": "text"}
            answer = Answer(200, [], data)
        elif method == "GET" and path.endswith("/models"):
            extra = [(k, str(v)) for k, v in self.script.get("headers", {}).items()]
            answer = Answer(200, extra, replies.models_body(self.script))
        elif method == "GET" and path == "/props" and "props" in self.script:  # llama-server's, at its root
            answer = Answer(200, [], self.script["props"])
        elif method == "GET" and path.endswith(("/billing/balance", "/api_keys/rate_limits")):
            answer = self._account(path)
        elif method == "POST" and path.endswith("/chat/completions"):
            answer = self._chat(body, headers.get("x-venice-tee-client-pub-key"))
        else:
            answer = Answer(404, [], {"error": f"no route {method} {path}"})
        seen.status = answer.status
        if self.record is not None:
            with self.record.open("a", encoding="utf-8") as out:
                out.write(json.dumps(_recordable(seen), default=str) + "\n")
        return seen, answer

    def _account(self, path: str) -> Answer:
        """`GET /billing/balance` or `/api_keys/rate_limits`: the script's body (an object with
        `status` is that error), or 404 when the script has none (a server that is not Venice)."""
        given = self.script.get("balance" if path.endswith("/balance") else "rate_limits")
        if given is None:
            return Answer(404, [], {"error": f"no route GET {path}"})
        if "status" in given:
            return Answer(given["status"], [], replies.error_body(given))
        return Answer(200, [], given)

    def _chat(self, body: Any, client_key: str | None = None) -> Answer:
        found = checks.problem(body) or self._unsupported_effort(body)
        if found is not None:
            return Answer(400, [], checks.details(found))
        private = self.tee is not None and client_key is not None
        if private and (unreadable := self.tee.open_messages(body["messages"])) is not None:
            return Answer(400, [], {"error": unreadable})
        size = replies.count_tokens(body)
        self.request_tokens.append(size)
        window = self.script.get("context_window")
        if window is not None and size > window:  # the server's own refusal, as OpenAI words it
            return Answer(400, [], replies.context_error(window, size))
        profile = self.script["profile"]
        if "no_null_content" in profile and (refused := replies.null_content_error(body)) is not None:
            return Answer(500, [], refused)
        if "json_arguments" in profile and (refused := replies.arguments_error(body)) is not None:
            return Answer(500, [], refused)
        if "no_streamed_tools" in profile and body.get("stream") and body.get("tools"):
            # 200 and not one byte: what llama-cpp-python sends; the script's reply waits.
            return Answer(200, [("content-type", "text/event-stream")], events=[], cut=True)
        above = replies.above_maximum(body, self.script.get("output_maximum"))
        if above is not None:  # Venice's own refusal, before any reply is used
            return Answer(400, [], {"error": above})
        reply = self._take(body)
        if reply is None:
            return Answer(500, [("x-should-retry", "false")], {"error": self.exhausted})
        number = self._next
        headers = self._headers(number) + [(k, str(v)) for k, v in reply.get("headers", {}).items()]
        delay = float(reply.get("delay", 0))
        if "status" in reply:
            return Answer(reply["status"], headers, replies.error_body(reply), delay=delay)
        if reply.get("empty"):  # HTTP 200 and not one byte, streamed or not
            return Answer(
                200, [("content-type", "text/event-stream"), *headers], events=[], cut=True, delay=delay
            )
        reply = replies.within(reply, replies.output_limit(body, profile))
        created, model = int(time.time()), body["model"]
        if window is not None and "prompt_tokens" not in reply.get("usage", {}):
            reply = {**reply, "usage": {**reply.get("usage", {}), "prompt_tokens": size}}
        if not body.get("stream"):
            whole = replies.completion(
                reply, model=model, number=number, created=created, usage="no_usage" not in profile
            )
            return Answer(200, headers, whole, delay=delay)
        usage = bool((body.get("stream_options") or {}).get("include_usage")) and "no_usage" not in profile
        parts = replies.chunks(reply, model=model, number=number, usage=usage, created=created)
        if private:
            parts = self.tee.seal_reply(parts, client_key or "", number)
        return Answer(
            200,
            [("content-type", "text/event-stream"), *headers],
            events=[b"data: " + json.dumps(part).encode() + b"\n\n" for part in parts],
            delay=delay,
            chunk_delay=float(reply.get("chunk_delay", 0)),
            hang=bool(reply.get("hang")),
            drop=bool(reply.get("drop")),
            cut="cut" in reply,
        )

    def _unsupported_effort(self, body: dict[str, Any]) -> checks.Problem | None:
        """The upstream's 400 for an effort the model does not take (Venice does not map it)."""
        effort = body.get("reasoning_effort")
        entries = replies.listing(self.script)
        if effort is None or entries is None:
            return None
        entry = next((e for e in entries if e.get("id") == body.get("model")), None)
        takes = ((entry or {}).get("model_spec", {}).get("capabilities") or {}).get("reasoningEffortOptions")
        if entry is not None and effort not in (takes or ()):
            return (
                "reasoning_effort",
                f"reasoning_effort '{effort}' is not supported by model {body['model']}",
            )
        return None

    def _take(self, body: dict[str, Any]) -> dict[str, Any] | None:
        script = self.script["replies"]
        if self.script.get("loop") == "question" and script:  # this question's round, whatever came before
            self._next += 1
            reply = script[-1] if not body.get("tools") else script[min(_rounds(body), len(script) - 1)]
            return _with_question(reply, body)
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


def _with_question(reply: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """`reply` with `$question` in its text and its tool calls' arguments replaced by the text of
    the question it answers (the last user message): many questions, one script, each call its own."""
    question = next((m.get("content") for m in reversed(body["messages"]) if m.get("role") == "user"), None)
    if not isinstance(question, str) or "$question" not in json.dumps(reply):
        return reply

    def put(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("$question", question)
        if isinstance(value, dict):
            return {key: put(item) for key, item in value.items()}
        if isinstance(value, list):
            return [put(item) for item in value]
        return value

    return {**reply, **{key: put(reply[key]) for key in ("text", "tool_calls") if key in reply}}


def _rounds(body: dict[str, Any]) -> int:
    """How many model turns this question has had: the assistant messages after its last user one."""
    turns = 0
    for message in reversed(body["messages"]):
        if message.get("role") == "user":
            break
        turns += message.get("role") == "assistant"
    return turns


def root_path(script: dict[str, Any]) -> str:
    """Where the API lives on the server: Venice's /api/v1, or /v1 for a local server's routes."""
    return "/v1" if "v1_routes" in script["profile"] else "/api/v1"


def _recordable(seen: Seen) -> dict[str, Any]:
    """A request as written to the record file: the API key itself is never written down."""
    headers = dict(seen.headers)
    if "authorization" in headers:
        headers["authorization"] = f"<{len(headers['authorization'])} characters, not recorded>"
    return {**seen.__dict__, "headers": headers}
