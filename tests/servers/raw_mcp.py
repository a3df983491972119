"""A raw JSON-RPC stdio MCP server that misbehaves on purpose (no SDK: it writes exact bytes).

    python raw_mcp.py [--noise] [--ignore-eof] [--ignore-term] [--child] [--record FILE]

Tools:
- `echo {text}`: the text back;
- `cut`: text ending in half of an emoji, escaped as JavaScript's `JSON.stringify` writes it;
- `weather`: declares an output schema (`temp` a number) and breaks it (`"hot"`);
- `bare`: declares an output schema and sends no structured content;
- `big {size}`: `size` bytes of text in one result;
- `media`: a 300 KB PNG as server-filesystem's `read_media_file` sends it: an image block, and
  the same block again inside structured content;
- `env`: the names of its environment variables;
- `grow` / `shrink`: adds a tool `extra` / removes `echo`, and says its tool list changed;
- `crash`: exits in the middle of the call.
`--noise` writes a line that is not JSON-RPC before every answer; `--ignore-eof` keeps running
after stdin closes; `--ignore-term` also ignores SIGTERM; `--child` starts a grandchild that
sleeps, to check the whole process group is ended. `--record FILE` writes what happened to the
server, one word a line: `child PID`, `eof` (stdin closed), `term` or `term-ignored` (SIGTERM).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys

ARGS = set(sys.argv[1:])
RECORD = sys.argv[sys.argv.index("--record") + 1] if "--record" in ARGS else None
SCHEMA = {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}
TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "cut", "inputSchema": {"type": "object"}},
    {"name": "weather", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA},
    {"name": "bare", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA},
    {"name": "big", "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}},
    {"name": "media", "inputSchema": {"type": "object"}},
    {"name": "env", "inputSchema": {"type": "object"}},
    {"name": "grow", "inputSchema": {"type": "object"}},
    {"name": "shrink", "inputSchema": {"type": "object"}},
    {"name": "crash", "inputSchema": {"type": "object"}},
]


def send(message: dict) -> None:
    if "--noise" in ARGS:
        sys.stdout.buffer.write(b"debug: this line is not JSON-RPC\n")
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


def call(name: str, arguments: dict) -> dict | str:
    if name == "echo":
        return text(arguments.get("text", ""))
    if name == "cut":
        return "CUT"  # written by hand below: json.dumps would never write a lone surrogate
    if name == "weather":
        return {**text('{"temp": "hot"}'), "structuredContent": {"temp": "hot"}}
    if name == "bare":
        return text("no structure here")
    if name == "big":
        return text("x" * int(arguments.get("size", 1000)))
    if name == "media":
        image = {
            "type": "image",
            "data": base64.b64encode(b"\x89PNG" + bytes(300_000 - 4)).decode(),
            "mimeType": "image/png",
        }
        return {"content": [image], "structuredContent": {"content": [image], "path": "/photos/cat.png"}}
    if name in ("grow", "shrink"):
        if name == "grow":
            TOOLS.append({"name": "extra", "inputSchema": {"type": "object"}})
        else:
            TOOLS[:] = [tool for tool in TOOLS if tool["name"] != "echo"]
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text(f"{name} done")
    if name == "extra":
        return text("extra ran")
    if name == "env":
        return text(" ".join(sorted(os.environ)))
    if name == "crash":
        print("raw server: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    raise KeyError(name)


def answer(request: dict) -> None:
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = call(request["params"]["name"], request["params"].get("arguments") or {})
        if result == "CUT":
            if "--noise" in ARGS:
                sys.stdout.buffer.write(b"debug: this line is not JSON-RPC\n")
            line = '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"smile \\ud83d"}]}}\n'
            sys.stdout.buffer.write((line % json.dumps(ident)).encode())
            sys.stdout.buffer.flush()
            return
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no {method}"}})
        return
    send({"jsonrpc": "2.0", "id": ident, "result": result})


def note(*words: object) -> None:
    if RECORD is not None:
        with open(RECORD, "a") as record:
            record.write(" ".join(map(str, words)) + "\n")


def on_term(*_: object) -> None:
    if "--ignore-term" in ARGS:
        note("term-ignored")
        return
    note("term")
    os._exit(0)


def main() -> None:
    signal.signal(signal.SIGTERM, on_term)
    if "--child" in ARGS:
        # a grandchild that lives until a signal ends it (what the process-group kill must reach)
        child = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
        note("child", child.pid)
    for line in sys.stdin.buffer:
        if line.strip():
            answer(json.loads(line))
    note("eof")
    if "--ignore-eof" in ARGS:
        while True:  # a server that outlives its stdin: only a signal (or SIGKILL) moves it
            signal.pause()


if __name__ == "__main__":
    main()
