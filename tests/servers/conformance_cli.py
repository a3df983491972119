"""The client under test for the MCP conformance suite: the real `venice-agent`, driven as a
person would drive it.

    conformance client --command "python conformance_cli.py" --scenario tools_call

The runner appends the test server's URL and sets MCP_CONFORMANCE_SCENARIO, and for some
scenarios MCP_CONFORMANCE_CONTEXT (JSON: client credentials, keys), which becomes the entry's
`oauth` object in an `mcp.json` as a user would write it. Then, each on a pseudo-terminal:
`venice-agent tools list --json`, and `venice-agent tools call` for each tool listed, with
arguments a person would type from the tool's schema (a skill: the first one listed; in
the no-prefetch scenario the person loads none); the person answers y to every question and
keeps each form's defaults. A sign-in's "browser" is `browser.py` (via $BROWSER),
which follows the authorisation URL back to the agent's loopback listener. Exit 0 is a pass.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the CLI helpers

from cli_support import COMMAND, PYTHON, clean_env  # noqa: E402
from venice_terminal_agent.mcp.servers_file import JWT_BEARER, OAUTH_KEYS  # noqa: E402
from venice_terminal_agent.mcp.skills import TOOLS as SKILL_TOOLS  # noqa: E402

# The URL-based client id the suite expects where its server supports client metadata documents.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
TIMEOUT = 240  # seconds for one command (a sign-in included), on a loaded machine
# The runner starts every scenario of a requirement set at once; with CONFORMANCE_SLOTS (a
# folder) set, at most SLOTS of our commands run at a time, so a small machine is not swamped.
SLOTS = 3
TOOL_FAILED = 5  # `tools call`'s status for a tool that answered with an error: still a call made


def oauth_entry(scenario: str) -> dict[str, str]:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = {key: str(value) for key, value in context.items() if key in OAUTH_KEYS}
    if scenario.startswith("auth/client-credentials"):
        oauth["grant_type"] = "client_credentials"  # a script's entry: no browser, no person
    if "valid_jwt" in context:  # a workload's entry: its identity token is the grant
        oauth |= {"grant_type": JWT_BEARER, "assertion": context["valid_jwt"]}
    return {"client_metadata_url": CLIENT_METADATA_URL, **oauth}


def example(schema: Any) -> Any:
    """What a person types for a parameter of this schema."""
    schema = schema if isinstance(schema, dict) else {}
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(kind, "example")


def arguments(tool: dict[str, Any], tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a person types: what the scenario says to call it with, else from its schema."""
    name, schema = tool["original_name"], tool.get("input_schema") or {}
    told = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}").get("toolCalls") or []
    for call in told:
        if call.get("name") == name:
            return call.get("arguments") or {}
    if name == "add_numbers":
        return {"a": 5, "b": 3}
    if name == "json_schema_echo":  # hand back the other tool's schema, as the model was given it
        focal = tools.get("json_schema_2020_12_tool")
        return {"schema": focal["input_schema"] if focal else {}}
    properties = schema.get("properties") or {}
    return {key: example(properties.get(key)) for key in schema.get("required") or []}


@contextmanager
def slot() -> Iterator[None]:
    folder = os.environ.get("CONFORMANCE_SLOTS")
    if not folder:
        yield
        return
    while True:
        for number in range(SLOTS):
            with open(Path(folder) / f"slot{number}", "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                yield
                return
        with open(Path(folder) / "slot0", "w") as lock:  # wait for the first, then look again
            fcntl.flock(lock, fcntl.LOCK_EX)


def run(folder: Path, env: dict[str, str], *args: str, stdout: Path | None = None) -> tuple[int, str]:
    """One command on a pseudo-terminal, answered as a person would; its status and what it showed."""
    with slot():
        return _run(folder, env, *args, stdout=stdout)


def _run(folder: Path, env: dict[str, str], *args: str, stdout: Path | None = None) -> tuple[int, str]:
    command = [COMMAND, *args]
    if stdout is not None:  # the document to a file, the questions to the terminal
        command = ["sh", "-c", 'exec "$@" > "$0"', str(stdout), *command]
    child = pexpect.spawn(
        command[0],
        command[1:],
        cwd=str(folder),
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 200),
    )
    seen = []
    questions = [
        pexpect.EOF,
        r"\[y/N\]",  # consent to a call, or to a URL
        r"\[y = fill in, n = decline, Enter = cancel\]",  # a server's form: fill it in
        r"  \S[^\n\x1b]*: ?\x1b\[",  # one field of it (prompt_toolkit's codes follow): Enter keeps its default
    ]
    while True:
        which = child.expect(questions)
        seen.append(child.before + (child.after if isinstance(child.after, str) else ""))
        if which == 0:
            break
        child.sendline("y" if which in (1, 2) else "")
        child.expect("\r\n")  # past the prompt's redraw with the answer, which shows it again
    child.close()
    shown = "".join(seen)
    print(shown, file=sys.stderr)
    return (child.exitstatus if child.exitstatus is not None else 128 + (child.signalstatus or 0)), shown


def main(url: str, scenario: str) -> int:
    folder = Path(tempfile.mkdtemp(prefix="conformance-cli-"))
    config = folder / "mcp.json"
    # The runner starts every scenario of a requirement set at once: on a small machine a
    # server may take a while to answer, so this entry waits longer than the default.
    entry = {"url": url, "oauth": oauth_entry(scenario), "startup_timeout": 150}
    config.write_text(json.dumps({"mcpServers": {"conformance": entry}}))
    browser = folder / "browser"
    browser.write_text(f'#!/bin/sh\nexec {PYTHON} {HERE / "browser.py"} "$1"\n')
    browser.chmod(0o755)
    # No model is asked: the base URL is never dialled.
    env = clean_env(folder, "http://127.0.0.1:9", BROWSER=str(browser), COLUMNS="200")
    listed = folder / "tools.json"
    status, _ = run(folder, env, "tools", "list", "--json", "--mcp-config", str(config), stdout=listed)
    document = json.loads(listed.read_text() or "{}")
    print(json.dumps(document, indent=2)[:4000], file=sys.stderr)
    if status != 0:
        return status
    tools = {tool["original_name"]: tool for tool in document["tools"]}
    for tool in document["tools"]:
        if scenario.endswith("-no-prefetch") and tool["name"] in SKILL_TOOLS:
            continue  # this person looks at the skills listed and loads none: listing reads nothing
        given = json.dumps(arguments(tool, tools))
        status, _ = run(folder, env, "tools", "call", tool["name"], given, "--mcp-config", str(config))
        if status not in (0, TOOL_FAILED):
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))
