"""Shared pieces of the terminal tests: the fake Venice server as a process, MCP configs, env.

Everything runs on 127.0.0.1; no test dials out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
PYTHON = sys.executable
COMMAND = str(Path(PYTHON).parent / "venice-agent")
PAID_SERVER = TESTS / "cli_paid_server.py"
TIME_SERVER = TESTS / "servers" / "time_server.py"


class FakeServer:
    """`python -m venice_terminal_agent.testing.fake_venice` with every request recorded."""

    def __init__(self, process: subprocess.Popen[str], base_url: str, record: Path) -> None:
        self.process, self.base_url, self.record = process, base_url, record

    def requests(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [
            seen["body"] for seen in self.requests() if seen.get("path", "").endswith("/chat/completions")
        ]


@contextmanager
def fake_venice(script: Any, folder: Path) -> Iterator[FakeServer]:
    record = folder / "requests.jsonl"
    process = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "venice_terminal_agent.testing.fake_venice",
            json.dumps(script),
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
        yield FakeServer(process, base_url, record)
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()  # its pipes are ours to close (a ResourceWarning otherwise)
        process.stderr.close()


def mcp_config(folder: Path, *, time_server: bool = True, paid_server: bool = True) -> Path:
    servers: dict[str, Any] = {}
    if time_server:
        servers["time"] = {
            "command": PYTHON,
            "args": [str(TIME_SERVER), "--local-timezone", "UTC"],  # mcp-server-time, for less CPU
            "trusted": True,  # its read-only hints count: get_current_time runs without asking
        }
    if paid_server:
        servers["shop"] = {"command": PYTHON, "args": [str(PAID_SERVER)]}
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def read_address(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    for line in process.stderr:
        if "venice-agent mcp: http://" in line:
            return line.split()[2]
    raise AssertionError("the server never said where it listens")


@contextmanager
def http_front(folder: Path, base_url: str, *args: str, **env: str) -> Iterator[str]:
    """The real `venice-agent mcp --http` on a free loopback port, with the MCP servers of
    `mcp_config` (unless `args` say --no-mcp); yields its /mcp address."""
    servers = [] if "--no-mcp" in args else ["--mcp-config", str(mcp_config(folder))]
    process = subprocess.Popen(
        [COMMAND, "mcp", "--http", "--port", "0", *servers, *args],
        env={**clean_env(folder, base_url, VENICE_MODEL="fake-model"), **env},
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield read_address(process)
    finally:
        process.terminate()
        process.wait(timeout=20)
        assert process.stderr is not None
        process.stderr.close()


def clean_env(folder: Path, base_url: str, **extra: str) -> dict[str, str]:
    """An environment with only what the command needs: no real keys, no user config or data."""
    # PYTHONPATH is kept: benchmarks/mutants.py puts its planted copy of the package there, and
    # the command a test starts must run that copy too; so does a mutation run (conftest.py),
    # which also names the active mutant, and the file where a child says what it reached.
    names = ("PATH", "HOME", "LANG", "SYSTEMROOT", "PYTHONPATH", "MUTANT_UNDER_TEST", "VENICE_MUTMUT_HITS")
    keep = {name: os.environ[name] for name in names if name in os.environ}
    env = {
        **keep,
        "VENICE_API_KEY": "test-key",
        "VENICE_BASE_URL": base_url,
        "XDG_CONFIG_HOME": str(folder / "config"),
        "XDG_DATA_HOME": str(folder / "data"),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",  # nobody answers cursor-position requests in the test terminal
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


def in_read_only_folder(folder: Path, command: list[str]) -> list[str]:
    """`command` run where `folder` is mounted read-only (a user and mount namespace of its own),
    so even root cannot write in it; on a machine without namespaces the test cannot run."""
    return _in_namespace('mount --bind -o ro "$1" "$1"', folder, command)


def in_full_folder(folder: Path, command: list[str]) -> list[str]:
    """`command` run where `folder` is a tiny disk that is full (a tmpfs of its own, filled),
    its `venice-agent` folder made before it filled; as `in_read_only_folder`."""
    fill = 'mount -t tmpfs -o size=16k tmpfs "$1" && mkdir "$1/venice-agent" && (cat /dev/zero > "$1/fill" 2>/dev/null; true)'
    return _in_namespace(fill, folder, command)


def _in_namespace(setup: str, folder: Path, command: list[str]) -> list[str]:
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            f"unshare -rm cannot make a mount namespace here: {probe.stderr.decode().strip()}"
        )
    script = f'{setup} && shift && exec "$@"'
    return ["unshare", "-rm", "sh", "-c", script, "sh", str(folder), *command]


def run_probe(
    probe: str, *, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -c probe` in a fresh interpreter, no stdin; fails the test if it fails."""
    return subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def modules_after_running(
    *argv: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    at_first_spawn: bool = False,
    full: bool = False,
) -> set[str]:
    """The top-level modules loaded when the command ends (or when it first starts a process);
    with `full`, every module by its whole dotted name."""
    top = "m" if full else "m.split('.')[0]"
    probe = (
        "import sys\n"
        "spawned = []\n"
        "def hook(event, args):\n"
        "    if event == 'subprocess.Popen' and not spawned:\n"
        f"        spawned.append(sorted({{{top} for m in sys.modules}} | {{'spawned ' + str(args[1])}}))\n"
        "sys.addaudithook(hook)\n"
        f"sys.argv = {['venice-agent', *argv]!r}\n"
        "from venice_terminal_agent.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"found = spawned[0] if {at_first_spawn} else sorted({{{top} for m in sys.modules}})\n"
        "import json\n"  # only now: whether the command loaded json is part of what is seen
        "print(json.dumps(found))"
    )
    done = run_probe(probe, env=env, cwd=cwd)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def run_cli(
    folder: Path,
    base_url: str,
    *args: str,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 90,
    **env: str | None,
) -> subprocess.CompletedProcess[str]:
    """The real command in `folder` (its config and data folders too; run in `cwd` when given),
    on the fake model `base_url` (model fake-model), no terminal: stdin is `stdin` or nothing.
    `env` adds to the environment; a variable given as None is left out (VENICE_MODEL=None:
    the model comes from elsewhere). `timeout`: seconds before the test fails (a real model is slower)."""
    variables = clean_env(folder, base_url, **{"VENICE_MODEL": "fake-model", **env})  # type: ignore[arg-type]
    return subprocess.run(
        [COMMAND, *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=cwd or folder,
        env={name: value for name, value in variables.items() if value is not None},
        start_new_session=True,
        timeout=timeout,
        check=False,
    )
