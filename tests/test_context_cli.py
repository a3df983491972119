"""The context window from the command line: the REPL (questions read from a pipe) and one-shot
questions, as real processes against the strict fake model server with a window of its own."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import fake_venice
from cli_support import run_cli as run
from venice_terminal_agent.model.compaction import SUMMARY_HEAD

WINDOW = 4000
FILLER = "lorem ipsum dolor " * 30


def script(**more) -> dict:
    return {
        "replies": [{"text": "noted"}],
        "loop": True,
        "context_window": WINDOW,
        "model_spec": {"availableContextTokens": WINDOW},
        **more,
    }


def is_summary(body: dict) -> bool:
    return "tools" not in body and "--- the conversation ---" in body["messages"][-1]["content"]


def test_a_long_repl_conversation_compacts_before_the_window_is_passed(tmp_path: Path) -> None:
    questions = "".join(f"question {n}: {FILLER}\n" for n in range(24))
    with fake_venice(script(), tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", stdin=questions + "/receipt\n")
        seen = [s for s in fake.requests() if s["path"].endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr
    assert all(s["status"] == 200 for s in seen)  # no request passed the window
    assert sum(1 for s in seen if is_summary(s["body"])) >= 1
    out = done.stdout + done.stderr  # the banner and notes on stderr, the receipt lines on stdout
    assert "  context  4k tokens (the model list)" in done.stderr  # the banner says the window
    assert "compacted " in out and " earlier rounds (" in out and " summary" in out
    assert "% of 4k" in out  # each receipt line says how full the window is
    assert '"context_window": 4000' in out  # /receipt has it
    assert '"context_tokens": ' in out


def test_compaction_off_ends_context_full_and_sends_nothing(tmp_path: Path) -> None:
    with fake_venice(script(), tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "--no-compact", FILLER * 30)
        bodies = fake.chat_bodies()
    assert done.returncode == 10, done.stderr
    assert bodies == []
    assert "the next request needs about " in done.stderr  # why it stopped: stderr
    assert "and the model's window is 4k; /compact, /clear, or a model with a larger window" in done.stderr
    assert "stopped: context_full" in done.stdout


def test_the_setting_gives_the_window_when_the_server_does_not(tmp_path: Path) -> None:
    quiet = script()
    del quiet["model_spec"]
    with fake_venice(quiet, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", FILLER * 30, CONTEXT_TOKENS="4000", COMPACT="0")
        unknown = run(tmp_path, fake.base_url, "--no-mcp", "hi")
        bodies = fake.chat_bodies()
    assert done.returncode == 10, done.stderr
    assert "  context  4k tokens (CONTEXT_TOKENS)" in done.stderr  # a one-shot's banner is on stderr
    assert unknown.returncode == 0, unknown.stderr
    assert (
        "  context  unknown (the server does not say; set CONTEXT_TOKENS or --context-tokens)"
        in unknown.stderr
    )
    assert len(bodies) == 1


def test_a_400_for_length_becomes_context_full(tmp_path: Path) -> None:
    quiet = script(context_window=1000)
    del quiet["model_spec"]  # nobody told the agent: the server is the judge
    with fake_venice(quiet, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "--json", FILLER * 10)
        seen = [s for s in fake.requests() if s["path"].endswith("/chat/completions")]
    assert done.returncode == 10, done.stderr
    assert [s["status"] for s in seen] == [400]  # refused once, not retried
    assert '"stopped_because": "context_full"' in done.stdout
    assert "maximum context length is 1000 tokens" in done.stdout


def test_a_session_keeps_the_original_rounds_and_resumes_from_the_summary(tmp_path: Path) -> None:
    questions = "".join(f"question {n}: {FILLER}\n" for n in range(24))
    with fake_venice(script(), tmp_path) as fake:
        first = run(tmp_path, fake.base_url, "--no-mcp", stdin=questions, VENICE_AGENT_SESSIONS="1")
        last_before = fake.chat_bodies()[-1]
        exported = run(tmp_path, fake.base_url, "sessions", "export", "latest")
        readable = run(tmp_path, fake.base_url, "sessions", "export", "latest", "--format", "md")
        resumed = run(tmp_path, fake.base_url, "--no-mcp", "-c", "one more", VENICE_AGENT_SESSIONS="1")
        after = fake.chat_bodies()[-1]
    assert first.returncode == 0, first.stderr
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()[1:]]
    # Every question is kept as it was asked, and a marker says where the rounds were compacted.
    asked = [m["content"] for m in lines if m["role"] == "user"]
    assert asked == [f"question {n}: {FILLER}".strip() for n in range(24)]  # as read from the prompt
    markers = [m for m in lines if m["role"] == "compaction"]
    assert markers and all(m["summary"]["content"].startswith(SUMMARY_HEAD) for m in markers)
    assert "_compacted " in readable.stdout
    # Resumed, the model gets the compacted conversation it had, then the new question.
    assert resumed.returncode == 0, resumed.stderr
    assert after["messages"] == [*last_before["messages"], {"role": "assistant", "content": "noted"},
                                 {"role": "user", "content": "one more"}]  # fmt: skip
    assert after["messages"][1]["content"].startswith(SUMMARY_HEAD)


def test_doctor_says_the_window_or_that_it_is_unknown(tmp_path: Path) -> None:
    with fake_venice(script(), tmp_path) as fake:
        known = run(tmp_path, fake.base_url, "doctor", "--no-mcp", "--json")
    quiet = script()
    del quiet["model_spec"]
    with fake_venice(quiet, tmp_path) as fake:
        unknown = run(tmp_path, fake.base_url, "doctor", "--no-mcp", "--json")
    checks = {c["name"]: c for c in json.loads(known.stdout)["checks"]}
    assert checks["context window"]["detail"] == "4k tokens (the model list)"
    checks = {c["name"]: c for c in json.loads(unknown.stdout)["checks"]}
    assert checks["context window"]["detail"].startswith("unknown (the server does not say")


def test_a_piped_repl_says_why_on_stderr_and_keeps_stdout_for_answers(tmp_path: Path) -> None:
    with fake_venice(script(), tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "--no-compact", stdin=f"{FILLER * 30}\n/compact\n")
        bodies = fake.chat_bodies()
    assert done.returncode == 10, done.stderr  # the last question's status: context_full
    assert bodies == []
    refusal = "the next request needs about "
    assert refusal in done.stderr and refusal not in done.stdout
    assert "not compacted: " in done.stderr and "not compacted" not in done.stdout
    assert "stopped: context_full" in done.stdout  # the receipt line is the transcript's
