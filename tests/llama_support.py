"""Real model servers for the real-server tests, with SmolLM2-135M-Instruct: llama.cpp's
`llama-server`, and llama-cpp-python's own server (`python -m llama_cpp.server`).

All of them come from `tests/llama/install` (pinned; built and cached once per machine, linked
into the git-ignored `.tools/llama`; llama-cpp-python in an environment of its own there, never
the project's); the tests never build them. Without them the tests are skipped, saying how to
install them, and in CI (`CI=true`) they fail, as a missing Redis or Chromium does.

llama-server is started with the tool template (tests/llama/tool-template.jinja: Qwen2.5's tool
format and one example exchange, which is what makes a 135M model call tools), greedy sampling
(`--temp 0`, so the same question gets the same answer) and a context window of `N_CTX` tokens;
llama-cpp-python with its `chatml-function-calling` chat format (SmolLM2 speaks ChatML; the
format is the one of that server's that offers tools to any ChatML model) and the same window.
Each on a free loopback port, once per test module, and stopped at its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from servers.net import free_port

TESTS = Path(__file__).resolve().parent
TOOLS = TESTS.parent / ".tools" / "llama"
SERVER = TOOLS / "llama-server"
PYTHON_SERVER = TOOLS / "llama-cpp-python" / "bin" / "python"  # its environment's Python
MODEL = TOOLS / "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = TESTS / "llama" / "tool-template.jinja"
MODEL_NAME = "SmolLM2-135M-Instruct"  # the name llama-server lists in GET /v1/models (--alias)
N_CTX = 4096  # the agent's own system prompt and tools are about 1,300 tokens of it
READY_WITHIN = 120  # seconds: loading a 98 MB model takes about one on an idle machine
READY = "listening on http://"  # printed once the model is loaded
PYTHON_READY = "Uvicorn running on http://"  # llama-cpp-python's, printed once the model is loaded


@dataclass
class LlamaServer:
    base_url: str  # with /v1, as VENICE_BASE_URL takes it
    process: subprocess.Popen[str]
    output: list[str]  # everything it printed so far (its log), for failure messages

    def get(self, path: str) -> Any:
        """GET `path` of the server's own API (`/props`, `/health`), as JSON."""
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + path, timeout=30) as answer:
            return json.loads(answer.read())

    def log(self) -> str:
        return "".join(self.output[-40:])


def missing_message(server: Path = SERVER, name: str = "llama-server") -> str | None:
    if server.exists() and MODEL.exists():
        return None
    return (
        f"{name} and SmolLM2 are not installed in .tools/llama: run "
        "tests/llama/install (once per machine: builds llama.cpp, 10 to 40 minutes on 2 cores, "
        "and llama-cpp-python as much again)"
    )


@contextmanager
def started_llama_server(template: Path | None = TEMPLATE) -> Iterator[LlamaServer]:
    """llama-server on a free loopback port until the block ends; `template=None`: the model's
    own chat template (SmolLM2's ChatML, which has no place for tools)."""
    port = free_port()
    chosen = ["--chat-template-file", str(template)] if template is not None else []
    command = [
        str(SERVER), "--model", str(MODEL), "--alias", MODEL_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--jinja", *chosen,
        "--ctx-size", str(N_CTX), "--parallel", "1",
        "--threads", "1",  # two spin-wait on a busy machine: 7 s a token at load 15, against 0.3 s
        "--temp", "0", "--seed", "1", "--no-webui",
    ]  # fmt: skip
    with started(command, port, READY, "llama-server") as server:
        yield server


@contextmanager
def started_llama_cpp_python_server() -> Iterator[LlamaServer]:
    """llama-cpp-python's server on a free loopback port until the block ends. It takes no
    sampling settings of its own: the tests ask with `VENICE_TEMPERATURE=0`."""
    port = free_port()
    command = [
        str(PYTHON_SERVER), "-m", "llama_cpp.server", "--model", str(MODEL), "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--chat_format", "chatml-function-calling",
        "--n_ctx", str(N_CTX), "--n_threads", "1", "--n_threads_batch", "1", "--seed", "1",
    ]  # fmt: skip
    with started(command, port, PYTHON_READY, "llama-cpp-python's server") as server:
        yield server


@contextmanager
def started(command: list[str], port: int, ready_line: str, name: str) -> Iterator[LlamaServer]:
    """`command`, the server `name` on `port`, until the block ends; ready once it prints `ready_line`."""
    message = missing_message(Path(command[0]), name)
    if message is not None:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(message)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True
    )
    output: list[str] = []
    ready = threading.Event()

    def drain() -> None:  # a full pipe must never block the server; its log is kept for messages
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if ready_line in line:
                ready.set()
        ready.set()  # it exited: the wait below ends and says so

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        ready.wait(READY_WITHIN)
        assert process.poll() is None and ready.is_set(), f"{name} did not start: {''.join(output)}"
        yield LlamaServer(f"http://127.0.0.1:{port}/v1", process, output)
    finally:
        process.terminate()
        process.wait(timeout=30)
        reader.join(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="module")
def llama_server() -> Iterator[LlamaServer]:
    """One server for the tier's module: every test asks with the same tools, so the prompt's
    first ~750 tokens (the agent's system prompt, the tools, the examples) are evaluated once
    and then come from the server's prompt cache. Stopped when the module ends, so no later
    test in the same worker finds it among its process's children (tests/test_mcp_stdio.py)."""
    with started_llama_server() as server:
        yield server


@pytest.fixture(scope="module")
def llama_cpp_python_server() -> Iterator[LlamaServer]:
    """One llama-cpp-python server for the module, as `llama_server` is."""
    with started_llama_cpp_python_server() as server:
        yield server
