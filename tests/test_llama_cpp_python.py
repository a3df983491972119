"""The agent's real CLI against llama-cpp-python's own server (`python -m llama_cpp.server`, 0.3.36,
its `chatml-function-calling` format) with SmolLM2-135M-Instruct, mcp-server-time as the tool.

The tier `pytest -m llama`, beside tests/test_llama_server.py (tests/llama_support.py starts the
server once per module; without `tests/llama/install` the tests are skipped, in CI they fail).
What this server does that llama-server does not, checked on the real thing: a streamed request
with tools that the model answers with a call comes back empty (HTTP 200, not one event), so the
agent asks again without streaming; a streamed answer carries no token counts; a tool-call turn
it sent itself is refused back with `content: null`; a prompt over the window is its 400.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import mcp_config, run_cli
from llama_support import MODEL_NAME, N_CTX, LlamaServer, llama_cpp_python_server
from venice_terminal_agent.model.client import UNSTREAMED_TOOLS

pytestmark = [pytest.mark.llama, pytest.mark.slow]
__all__ = ["llama_cpp_python_server"]  # the fixture, used by name


def ask(server: LlamaServer, folder: Path, *args: str):  # type: ignore[no-untyped-def]
    """The real command with mcp-server-time and `page` as its tools (the same every time, so
    the server reuses the prompt's long first part), greedy sampling; tool search off."""
    config = mcp_config(folder, paid_server=False)
    return run_cli(
        folder, server.base_url, "--mcp-config", str(config), "--no-files", *args,
        VENICE_MODEL=MODEL_NAME, VENICE_TEMPERATURE="0", TOOL_SEARCH="off", timeout=900,
    )  # fmt: skip


def test_a_call_asked_for_again_unstreamed_runs_and_the_receipt_says_streaming_went_off(
    llama_cpp_python_server: LlamaServer, tmp_path: Path
) -> None:
    done = ask(llama_cpp_python_server, tmp_path, "--json", "What time is it in Tokyo?")
    assert done.returncode != 1, done.stderr
    receipt = json.loads(done.stdout)
    first = receipt["steps"][0]  # the call the unstreamed request brought back, run
    assert first["tool"] == "get_current_time" and first["error"] is None
    assert json.loads(first["result"])["timezone"] == first["arguments"]["timezone"]
    assert receipt["proposed"][0]["outcome"] == "ran"
    assert receipt["notes"] == [UNSTREAMED_TOOLS] and receipt["unstreamed_requests"] >= 1  # the field
    assert done.stderr.count(UNSTREAMED_TOOLS) == 1  # and the line
    assert "→ get_current_time" in done.stderr
    assert "Internal Server Error" not in done.stderr  # its own tool-call turn was taken back


def test_a_streamed_answer_without_token_counts_counts_nothing_as_measured(
    llama_cpp_python_server: LlamaServer, tmp_path: Path
) -> None:
    done = ask(llama_cpp_python_server, tmp_path, "--json", "Hello!")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["stopped_because"] == "answered" and receipt["steps"] == []
    assert receipt["usage"] == {} and receipt["unmeasured_requests"] == 1  # it streamed, with no usage
    assert receipt["cached_tokens"] is None and receipt["cost_usd"] is None  # unknown, never 0


def test_a_question_longer_than_the_window_is_context_full_and_its_cost_unknown(
    llama_cpp_python_server: LlamaServer, tmp_path: Path
) -> None:
    # The agent does not know this server's window: the server's own 400 says it (asked again
    # unstreamed: streamed, its refusal is an empty 200 too).
    done = ask(llama_cpp_python_server, tmp_path, "word " * N_CTX)
    assert done.returncode == 10, done.stderr
    assert f"maximum context length is {N_CTX} tokens" in done.stderr
    line = done.stdout.splitlines()[-1]
    assert line.startswith("stopped: context_full") and line.endswith(" · cost unknown"), line
    assert "$" not in line
