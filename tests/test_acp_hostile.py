"""`venice-agent acp` against what a broken or hostile editor writes on its stdin: each row of
`ROWS` is one line sent to the real process (one process for the whole table), and each ends in
the JSON-RPC error it names (the request's own id when it has a readable one, else null), or in
no answer for a notification; after each, the agent still answers `initialize`. No line ends the
process, and none is answered "Internal error"."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_support import COMMAND, clean_env, fake_venice

PARSE, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = -32700, -32600, -32601, -32602
RESULT = 0  # answered: what ACP itself says to do with such a value
SESSION = "<session>"  # replaced by the id of a session the fixture opened


def request(method: str, params: Any = None, ident: Any = 7) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def prompt(*blocks: Any, session: Any = SESSION) -> bytes:
    return request("session/prompt", {"sessionId": session, "prompt": list(blocks)})


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def stdio_server(**fields: Any) -> dict[str, Any]:
    return {"name": "s", "command": "/bin/true", "args": [], "env": [], **fields}


# (what it is, the line, the error code expected: None for a notification, which gets no answer;
# RESULT for a line answered normally)
ROWS: list[tuple[str, bytes, int | None]] = [
    # The wire: what is not a JSON-RPC message at all.
    ("an array", b"[1,2,3]", INVALID_REQUEST),
    ("an empty array", b"[]", INVALID_REQUEST),
    ("a number", b"42", INVALID_REQUEST),
    ("a string", b'"x"', INVALID_REQUEST),
    ("null", b"null", INVALID_REQUEST),
    ("not JSON", b"hello editor", PARSE),
    ("cut JSON", b'{"jsonrpc": "2.0", "id": 1, "method": "initiali', PARSE),
    ("not UTF-8", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', PARSE),
    ("a line of 17 MiB", b'{"x": "' + b"a" * (17 * 1024 * 1024) + b'"}', INVALID_REQUEST),
    ("nested 100,000 deep", nested(100_000).encode(), PARSE),
    (
        "params nested 500 deep",
        request("initialize", {"protocolVersion": 1, "_meta": json.loads(nested(500))}),
        INVALID_REQUEST,
    ),
    ("an empty object", b"{}", INVALID_REQUEST),
    (
        "jsonrpc 1.0",
        b'{"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}',
        INVALID_REQUEST,
    ),
    ("an id that is a list", request("initialize", {"protocolVersion": 1}, ident=[1]), INVALID_REQUEST),
    ("an id that is true", request("initialize", {"protocolVersion": 1}, ident=True), INVALID_REQUEST),
    ("a method that is a number", b'{"jsonrpc": "2.0", "id": 1, "method": 5}', INVALID_REQUEST),
    ("params that are a list", request("initialize", [1]), INVALID_REQUEST),
    ("params that are a string", request("initialize", "x"), INVALID_REQUEST),
    ("a response with an object for id", b'{"jsonrpc": "2.0", "id": {}, "result": 1}', INVALID_REQUEST),
    ("a response whose error is a list", b'{"jsonrpc": "2.0", "id": 1, "error": [1]}', INVALID_REQUEST),
    ("a response with neither result nor error", b'{"jsonrpc": "2.0", "id": 1}', INVALID_REQUEST),
    ("an unknown method", request("no/such/method"), NO_METHOD),
    # initialize and authenticate
    ("initialize without params", request("initialize"), INVALID_PARAMS),
    # ACP: a version the agent cannot read is answered with the latest it speaks.
    ("initialize, protocolVersion a string", request("initialize", {"protocolVersion": "x"}), RESULT),
    ("authenticate, methodId a number", request("authenticate", {"methodId": 5}), INVALID_PARAMS),
    # session/new
    ("session/new without params", request("session/new"), INVALID_PARAMS),
    ("session/new, cwd a number", request("session/new", {"cwd": 5, "mcpServers": []}), INVALID_PARAMS),
    (
        "session/new, mcpServers a string",
        request("session/new", {"cwd": "/tmp", "mcpServers": "x"}),
        INVALID_PARAMS,
    ),
    (
        "session/new, mcpServers of numbers",
        request("session/new", {"cwd": "/tmp", "mcpServers": [5]}),
        INVALID_PARAMS,
    ),
    (
        "session/new, a server's command a number",
        request("session/new", {"cwd": "/tmp", "mcpServers": [stdio_server(command=5)]}),
        INVALID_PARAMS,
    ),
    (
        "session/new, a server's env a dict",
        request("session/new", {"cwd": "/tmp", "mcpServers": [stdio_server(env={"A": "b"})]}),
        INVALID_PARAMS,
    ),
    (
        "session/new, a server's headers a list of strings",
        request(
            "session/new",
            {
                "cwd": "/tmp",
                "mcpServers": [
                    {"type": "http", "name": "h", "url": "http://127.0.0.1:9/mcp", "headers": ["x"]}
                ],
            },
        ),
        INVALID_PARAMS,
    ),
    (
        "session/new, a cwd with a NUL byte",
        request("session/new", {"cwd": "/tmp/a\u0000b", "mcpServers": []}),
        INVALID_PARAMS,
    ),
    (
        "session/new, a relative cwd",
        request("session/new", {"cwd": "not/absolute", "mcpServers": []}),
        INVALID_PARAMS,
    ),
    # session/prompt
    ("session/prompt without params", request("session/prompt"), INVALID_PARAMS),
    ("session/prompt, sessionId a number", prompt({"type": "text", "text": "hi"}, session=5), INVALID_PARAMS),
    (
        "session/prompt, an unknown session",
        prompt({"type": "text", "text": "hi"}, session="nope"),
        INVALID_PARAMS,
    ),
    (
        "session/prompt, prompt a string",
        request("session/prompt", {"sessionId": SESSION, "prompt": "hi"}),
        INVALID_PARAMS,
    ),
    ("session/prompt, an empty prompt", prompt(), INVALID_PARAMS),
    ("session/prompt, a block of an unknown type", prompt({"type": "video", "url": "x"}), INVALID_PARAMS),
    ("session/prompt, a text block without text", prompt({"type": "text"}), INVALID_PARAMS),
    ("session/prompt, text a number", prompt({"type": "text", "text": 5}), INVALID_PARAMS),
    ("session/prompt, a block that is a string", prompt("hi"), INVALID_PARAMS),
    (
        "session/prompt, only an image (not offered)",
        prompt({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        INVALID_PARAMS,
    ),
    (
        "session/prompt, only a binary resource",
        prompt({"type": "resource", "resource": {"uri": "file:///x", "blob": "AAAA"}}),
        INVALID_PARAMS,
    ),
    (
        "session/prompt, a resource without uri",
        prompt({"type": "resource", "resource": {"text": "x"}}),
        INVALID_PARAMS,
    ),
    ("session/prompt, only blank text", prompt({"type": "text", "text": "  \n "}), INVALID_PARAMS),
    # session/load (sessions are off here) and session/cancel
    (
        "session/load, sessions off",
        request("session/load", {"cwd": "/tmp", "sessionId": "x", "mcpServers": []}),
        INVALID_PARAMS,
    ),
    (
        "session/load, sessionId a number",
        request("session/load", {"cwd": "/tmp", "sessionId": 5, "mcpServers": []}),
        INVALID_PARAMS,
    ),
    (
        "session/cancel, a notification for no session",
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}}',
        None,
    ),
    (
        "session/cancel, sessionId a number",
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}}',
        None,
    ),
    (
        "a notification with params a list",
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": [1]}',
        INVALID_REQUEST,
    ),
]


class Editor:
    """The real `venice-agent acp` with raw lines written to its stdin and its stdout read as
    JSON-RPC messages (in a thread: the answers of a row are read up to the next probe's)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.probes = 1000
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answers_until_probe(self) -> list[dict[str, Any]]:
        """Sends `initialize` and returns what came before its answer (which must come)."""
        self.probes += 1
        self.send(request("initialize", {"protocolVersion": 1}, ident=self.probes))
        seen = []
        while True:
            line = self.lines.get(timeout=60)
            assert line, f"the agent stopped (status {self.process.wait()})"
            message = json.loads(line)
            if message.get("id") == self.probes:
                assert message["result"]["agentInfo"]["name"] == "venice-agent"
                return seen
            seen.append(message)


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Editor, str]]:
    folder = tmp_path_factory.mktemp("acp-hostile")
    with fake_venice([{"text": "hi"}], folder) as fake:
        with (folder / "acp.stderr").open("wb") as log:
            process = subprocess.Popen(
                [COMMAND, "acp", "--no-mcp"],
                env=clean_env(folder, fake.base_url, VENICE_MODEL="fake-model"),
                cwd=folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
            )
            driver = Editor(process)
            driver.send(request("session/new", {"cwd": str(folder), "mcpServers": []}, ident="new"))
            (opened,) = driver.answers_until_probe()
            try:
                yield driver, opened["result"]["sessionId"]
            finally:
                assert process.stdin is not None
                process.stdin.close()
                status = process.wait(timeout=30)
                assert process.stdout is not None
                process.stdout.close()
        stderr = (folder / "acp.stderr").read_text()
        assert status == 0, stderr
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr


@pytest.mark.parametrize(("line", "code"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_a_hostile_line_gets_a_protocol_error_and_the_agent_serves_on(
    editor: tuple[Editor, str], line: bytes, code: int | None
) -> None:
    driver, session = editor
    driver.send(line.replace(SESSION.encode(), session.encode()))
    answers = driver.answers_until_probe()
    if code is None:
        assert answers == []
        return
    (answer,) = answers
    if code == RESULT:
        assert "result" in answer, answer
        return
    assert answer["error"]["code"] == code, answer
    assert answer["error"]["message"] != "Internal error"
    sent = json.loads(line) if code not in (PARSE, INVALID_REQUEST) else None
    assert answer["id"] == (sent["id"] if isinstance(sent, dict) else answer["id"])
    if code in (PARSE,):
        assert answer["id"] is None


def test_stdout_that_is_a_file_is_one_line_and_status_2(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake, (tmp_path / "out.txt").open("w") as out:
        done = subprocess.run(
            [COMMAND, "acp", "--no-mcp"],
            env=clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model"),
            input=b"{}\n",
            stdout=out,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().strip() == (
        "venice-agent: acp speaks ACP on stdin and stdout: an editor starts it with pipes"
    )
