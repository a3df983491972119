"""The agent's real CLI against a real model server: llama.cpp's llama-server with SmolLM2-135M-Instruct.

The tier `pytest -m llama` (tests/llama_support.py starts the server once per session; without
`tests/llama/install` the tests are skipped, in CI they fail). What the fake model server can
only imitate is checked here on the real thing: a plain answer, an answer cut at the output
limit while it streams, a tool call through a real MCP server (mcp-server-time), doctor, and a
prompt longer than the server's context window.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_support import mcp_config, run_cli
from llama_support import MODEL_NAME, N_CTX, LlamaServer, llama_server
from venice_terminal_agent.model.planner import CUT_CALL

pytestmark = [pytest.mark.llama, pytest.mark.slow]
__all__ = ["llama_server"]  # the fixture, used by name


def ask(server: LlamaServer, folder: Path, *args: str, **env: str | None):  # type: ignore[no-untyped-def]
    return run_cli(folder, server.base_url, *args, VENICE_MODEL=MODEL_NAME, **env)


def receipt_of(done) -> dict:  # type: ignore[no-untyped-def]
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def ask_with_tools(
    server: LlamaServer, folder: Path, *args: str, stdin: str | None = None, **env: str | None
):  # type: ignore[no-untyped-def]
    """The real command with mcp-server-time and `page` as its tools, whatever the question: the
    same tools every time, so the server's prompt cache holds the prompt's long first part. Tool
    search is off: with a 4k window even five schemas would be searched, and these tests are
    about the tools themselves. `stdin`: questions for the REPL, one a line."""
    config = mcp_config(folder, paid_server=False)
    return run_cli(
        folder, server.base_url, "--mcp-config", str(config), "--no-files", *args, stdin=stdin,
        VENICE_MODEL=MODEL_NAME, timeout=600, **{"TOOL_SEARCH": "off", **env},
    )  # fmt: skip


def doctor(server: LlamaServer, folder: Path, *args: str):  # type: ignore[no-untyped-def]
    config = mcp_config(folder, paid_server=False)
    return run_cli(
        folder, server.base_url, "doctor", "--mcp-config", str(config), *args,
        VENICE_MODEL=MODEL_NAME, timeout=600,
    )  # fmt: skip


def errors_logged(server: LlamaServer) -> int:
    return sum("send_error" in line for line in server.output)


def test_a_plain_question_is_answered_with_the_servers_own_token_counts(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    done = ask_with_tools(llama_server, tmp_path, "--json", "What is the capital of France?")
    assert done.returncode == 0, done.stderr
    receipt = receipt_of(done)
    assert receipt["stopped_because"] == "answered" and receipt["partial"] is False
    assert "Paris" in receipt["answer"] and receipt["steps"] == []
    assert receipt["model"] == MODEL_NAME
    usage = receipt["usage"]  # llama-server streams usage when asked (stream_options)
    assert usage["prompt_tokens"] > 500 and usage["completion_tokens"] > 0  # the agent's prompt is long
    assert receipt["cost_usd"] is None  # llama-server publishes no prices: unknown, never $0.00


def test_a_streamed_answer_stops_at_the_output_limit(llama_server: LlamaServer, tmp_path: Path) -> None:
    done = ask_with_tools(
        llama_server, tmp_path, "Tell me a long story about a dragon.", MAX_COMPLETION_TOKENS="5"
    )
    assert done.returncode != 1, done.stderr  # no crash, whatever the exit
    answer, receipt_line = done.stdout.rstrip("\n").rsplit("\n", 1)
    assert answer.strip()  # what streamed before the limit is shown
    assert "· 1 round ·" in receipt_line
    tokens = int(re.search(r"([\d,]+) tokens", receipt_line).group(1).replace(",", ""))  # type: ignore[union-attr]
    done = ask_with_tools(
        llama_server, tmp_path, "--json", "Tell me a long story about a dragon.", MAX_COMPLETION_TOKENS="5"
    )
    assert receipt_of(done)["usage"]["completion_tokens"] == 5  # the limit was sent and honoured
    assert tokens == receipt_of(done)["usage"]["total_tokens"]


def test_an_answer_cut_at_the_output_limit_is_partial_and_says_so(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    done = ask_with_tools(
        llama_server, tmp_path, "Tell me a long story about a dragon.", MAX_COMPLETION_TOKENS="5"
    )
    assert "cut at the model's output limit of 5 tokens" in done.stdout + done.stderr
    done = ask_with_tools(
        llama_server, tmp_path, "--json", "Tell me a long story about a dragon.", MAX_COMPLETION_TOKENS="5"
    )
    receipt = receipt_of(done)
    assert receipt["partial"] is True and receipt["answer"]
    assert receipt["stopped_because"] != "answered" and done.returncode not in (0, 1)


def test_a_tool_call_goes_through_a_real_mcp_server_and_the_answer_uses_its_result(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    done = ask_with_tools(llama_server, tmp_path, "--json", "What time is it in Tokyo?")
    assert done.returncode == 0, done.stderr
    receipt = receipt_of(done)
    assert receipt["stopped_because"] == "answered" and receipt["calls"] == 1 and receipt["rounds"] == 2
    [step] = receipt["steps"]
    assert step["tool"] == "get_current_time" and step["arguments"] == {"timezone": "Asia/Tokyo"}
    assert step["error"] is None
    now = json.loads(step["result"])["datetime"]  # mcp-server-time's clock: 2026-12-01T22:46:10+09:00
    assert now[:10] in receipt["answer"]  # the model read the result back (it cannot know the date)
    assert "→ get_current_time" in done.stderr


CUTS_THE_CALL = "25"  # output tokens: the model's call to get_current_time is under way there


@pytest.mark.parametrize("yes", [[], ["--yes"]], ids=["no terminal", "--yes"])
def test_a_call_cut_at_the_output_limit_is_on_the_receipt_with_why(
    llama_server: LlamaServer, tmp_path: Path, yes: list[str]
) -> None:
    done = ask_with_tools(
        llama_server,
        tmp_path,
        *yes,
        "--json",
        "What time is it in Tokyo?",
        MAX_COMPLETION_TOKENS=CUTS_THE_CALL,
    )
    assert done.returncode == 9, done.stderr  # output_limit
    receipt = receipt_of(done)
    assert receipt["steps"] == [] and receipt["partial"] is True
    assert [(item["tool"], item["outcome"], item["why"]) for item in receipt["proposed"]] == [
        ("get_current_time", "not_run", CUT_CALL)
    ]
    assert "1 proposed call did not run (get_current_time)" in done.stderr
    assert "→ get_current_time" not in done.stderr  # never run


def test_the_model_hears_of_a_call_the_output_limit_cut(llama_server: LlamaServer, tmp_path: Path) -> None:
    # The REPL keeps the cut turn, its call answered "not run"; llama-server takes that
    # conversation back (the call's arguments may be cut too) and the next question goes on.
    questions = "What time is it in Tokyo?\nThank you.\n"
    done = ask_with_tools(llama_server, tmp_path, stdin=questions, MAX_COMPLETION_TOKENS=CUTS_THE_CALL)
    first, second = [line for line in done.stdout.splitlines() if line.startswith("stopped: ")]
    assert first.startswith("stopped: output_limit (partial answer) · 0 calls"), done.stderr
    assert not second.startswith(("stopped: model_error", "stopped: context_full")), done.stderr
    said = done.stdout + done.stderr  # why a question stopped: stderr, or stdout in a piped REPL (today)
    assert said.count("1 proposed call did not run (get_current_time)") == 1


def test_doctor_passes_on_llama_server(llama_server: LlamaServer, tmp_path: Path) -> None:
    done = doctor(llama_server, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"✓ model server +{re.escape(llama_server.base_url)} answers \(1 model\)", done.stdout)
    assert re.search(rf"✓ model +{re.escape(MODEL_NAME)}", done.stdout)
    assert re.search(r"✓ context window +4\.1k tokens \(llama\.cpp's /props\)", done.stdout)
    assert "✓ mcp time" in done.stdout


LONG = "word " * N_CTX  # with the agent's own prompt, more than the server's window


def test_a_question_longer_than_the_context_window_is_refused_before_it_reaches_the_server(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    # The window is read from the server's /props, so the request is not sent at all: the
    # server logs no error (its own 400 wording is recognised too: tests/test_context.py).
    before = errors_logged(llama_server)
    done = ask_with_tools(llama_server, tmp_path, LONG)
    assert done.returncode not in (0, 1), done.stderr
    said = done.stdout + done.stderr
    assert "Traceback" not in said
    assert errors_logged(llama_server) == before
    line = done.stdout.splitlines()[-1]  # a server with no prices: unknown, even for nothing sent
    assert line.startswith("stopped: context_full") and " · cost unknown" in line, line
    assert "$" not in line


def test_a_question_longer_than_the_context_window_is_context_full(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    done = ask_with_tools(llama_server, tmp_path, "--json", LONG)
    receipt = receipt_of(done)
    assert receipt["stopped_because"] == "context_full" and receipt["cost_usd"] is None
    assert re.search(r"4,?096", json.dumps(receipt) + done.stderr)  # the window, read from the server
