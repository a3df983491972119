"""Asking better, through the real command and the fake Venice: -s/--system, stdin as
material, web search, reasoning controls. Each test reads the request really sent."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from cli_support import fake_venice, run_cli


def system_of(body: dict) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def test_system_adds_an_instruction_after_our_prompt_which_starts_the_same(tmp_path: Path) -> None:
    (tmp_path / "style.md").write_text("Answer in French.\nBe brief.\n")
    with fake_venice([{"text": "a"}, {"text": "b"}, {"text": "c"}], tmp_path) as fake:
        plain = run_cli(tmp_path, fake.base_url, "--no-mcp", "hi")
        text = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "Answer in French.", "hi")
        file = run_cli(tmp_path, fake.base_url, "--no-mcp", "--system", "@style.md", "hi")
        bodies = fake.chat_bodies()
    assert [done.returncode for done in (plain, text, file)] == [0, 0, 0], text.stderr + file.stderr
    ours, with_text, with_file = (system_of(body) for body in bodies)
    assert with_text.startswith(ours) and with_file.startswith(ours)  # the prefix stays stable
    assert with_text.endswith("\nAnswer in French.")
    assert with_file.endswith("\nAnswer in French.\nBe brief.")
    assert [m["role"] for m in bodies[1]["messages"]] == ["system", "user"]  # one system message


def test_system_from_a_missing_file_or_with_a_resume_is_refused_before_any_request(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        missing = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "@nope.md", "hi")
        empty = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "  ", "hi")
        resumed = run_cli(tmp_path, fake.base_url, "--no-mcp", "-s", "x", "-c", "hi")
        bodies = fake.chat_bodies()
    assert missing.returncode == 2 and missing.stderr.startswith("venice-agent: -s @nope.md: no such file")
    assert empty.returncode == 2 and "the instruction is empty" in empty.stderr
    assert resumed.returncode == 2 and "a resumed session keeps its own" in resumed.stderr
    assert bodies == []


def receipt_of(stdout: str) -> dict:
    return json.loads(stdout)


def user_of(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def test_piped_text_is_attached_to_the_question(tmp_path: Path) -> None:
    with fake_venice([{"text": "A summary."}], tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "--no-mcp", "--json", "summarise this", stdin="# Notes\nBuy milk.\n"
        )
        [body] = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert user_of(body) == "summarise this\n\n<stdin>\n# Notes\nBuy milk.\n</stdin>"
    assert "stdin  18 characters attached to the question (local data" in done.stderr
    assert receipt_of(done.stdout)["answer"] == "A summary."


def test_a_dash_reads_the_whole_of_stdin_as_the_question(tmp_path: Path) -> None:
    with fake_venice([{"text": "4"}], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "-", stdin="What is\n2 + 2?\n")
        empty = run_cli(tmp_path, fake.base_url, "--no-mcp", "-", stdin="\n")
        [body] = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert user_of(body) == "What is\n2 + 2?"
    assert "attached" not in done.stderr  # the question itself, not material
    assert empty.returncode == 2 and "stdin was empty" in empty.stderr


def test_piped_lines_without_a_question_stay_the_repl(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", stdin="first\nsecond\n")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert [user_of(body) for body in bodies] == ["first", "first"]  # the second carries the history
    assert [m["content"] for m in bodies[1]["messages"] if m["role"] == "user"] == ["first", "second"]


def test_piped_material_is_local_data_so_a_tool_that_leaves_the_machine_asks(tmp_path: Path) -> None:
    from cli_support import mcp_config

    servers = str(mcp_config(tmp_path, paid_server=False))  # get_current_time: read-only, trusted
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "I could not look the time up."},
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "It is noon."},
    ]
    with fake_venice(script, tmp_path) as fake:
        piped = run_cli(
            tmp_path, fake.base_url, "--mcp-config", servers, "--json", "what time?", stdin="secret notes\n"
        )
        plain = run_cli(tmp_path, fake.base_url, "--mcp-config", servers, "--json", "what time?")
        bodies = fake.chat_bodies()
    assert piped.returncode == 0 and plain.returncode == 0, piped.stderr + plain.stderr
    # With the material in the conversation, the read-only tool needs a yes, and nobody is there.
    assert receipt_of(piped.stdout)["steps"] == []
    tool_message = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert "no one to ask" in tool_message["content"]  # the truth: nobody was there to say yes
    assert "skipped get_current_time: it may send local file contents off this machine" in piped.stderr
    # Without it, the same call runs free.
    assert [step["tool"] for step in receipt_of(plain.stdout)["steps"]] == ["get_current_time"]


# Web search -----------------------------------------------------------------------------

CITED = [
    {
        "title": "Venice API docs",
        "url": "https://docs.venice.ai/",
        "date": "2026-08-22",
        "content": "long text",
    },
    {"title": "Venice blog", "url": "https://venice.ai/blog", "content": "more"},
]
PRICED = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 100}


def test_web_search_is_asked_of_venice_and_its_sources_listed_and_kept(tmp_path: Path) -> None:
    script = {"replies": [{"text": "Venice is private ^1^.", "citations": CITED}] * 2, "model_spec": PRICED}
    with fake_venice(script, tmp_path) as fake:
        shown = run_cli(tmp_path, fake.base_url, "--no-mcp", "--web-search", "on", "what is Venice?")
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--web-search", "on", "--json", "what is Venice?")
        body = fake.chat_bodies()[1]
    assert shown.returncode == 0 and done.returncode == 0, shown.stderr + done.stderr
    assert body["venice_parameters"] == {
        "include_venice_system_prompt": False, "enable_web_search": "on", "enable_web_citations": True
    }  # fmt: skip
    assert shown.stdout.splitlines()[:4] == [
        "Venice is private ^1^.",
        "Sources:",
        "  [1] Venice API docs — https://docs.venice.ai/",
        "  [2] Venice blog — https://venice.ai/blog",
    ]
    receipt = receipt_of(done.stdout)
    assert receipt["answer"] == "Venice is private ^1^."
    assert receipt["sources"] == [
        {"title": "Venice API docs", "url": "https://docs.venice.ai/", "date": "2026-08-22"},
        {"title": "Venice blog", "url": "https://venice.ai/blog"},
    ]
    # 10 prompt and 5 completion tokens at $1 and $10 per million, plus the search ($0.01).
    assert abs(receipt["cost_usd"] - (10 * 1 + 5 * 10) / 1e6 - 0.01) < 1e-12


def test_web_search_auto_and_off_send_what_they_say(tmp_path: Path) -> None:
    with fake_venice([{"text": "a"}, {"text": "b"}], tmp_path) as fake:
        auto = run_cli(tmp_path, fake.base_url, "--no-mcp", "--web-search", "auto", "hi")
        off = run_cli(tmp_path, fake.base_url, "--no-mcp", "--web-search", "off", "hi")
        bodies = fake.chat_bodies()
    assert auto.returncode == 0 and off.returncode == 0
    assert bodies[0]["venice_parameters"]["enable_web_search"] == "auto"
    assert bodies[1]["venice_parameters"] == {"include_venice_system_prompt": False}
    assert "Sources:" not in auto.stdout  # no citations came: no list


def test_the_search_price_counts_in_the_money_cap_before_the_request(tmp_path: Path) -> None:
    script = {"replies": [{"text": "without search"}], "model_spec": PRICED}
    with fake_venice(script, tmp_path) as fake:
        searching = run_cli(
            tmp_path, fake.base_url, "--no-mcp", "--web-search", "on", "--max-usd", "0.01", "--json", "hi"
        )
        plain = run_cli(tmp_path, fake.base_url, "--no-mcp", "--max-usd", "0.01", "--json", "hi")
        bodies = fake.chat_bodies()
    assert searching.returncode == 8, searching.stderr
    refusal = receipt_of(searching.stdout)["refusal"]
    assert refusal.startswith("stopped before model request 1: it could cost up to $0.01")
    assert plain.returncode == 0 and len(bodies) == 1 and "venice_parameters" in bodies[0]
    assert "enable_web_search" not in bodies[0]["venice_parameters"]


def test_web_search_on_a_model_without_it_is_refused_before_any_request(tmp_path: Path) -> None:
    script = {
        "replies": [],
        "model_spec": {"capabilities": {"supportsFunctionCalling": True, "supportsWebSearch": False}},
    }
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--web-search", "on", "hi")
        bodies = fake.chat_bodies()
    assert done.returncode == 2 and bodies == []
    assert "venice-agent: fake-model does not support web search" in done.stderr


# Reasoning ------------------------------------------------------------------------------


def venice(tmp_path: Path, model: str, *args: str, replies: list | None = None) -> tuple:
    """One question to `model` of the real listing, in a folder of its own (its own record)."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    with fake_venice({"listing": "venice", "replies": replies or []}, folder) as fake:
        done = run_cli(folder, fake.base_url, "--no-mcp", *args, "hi", VENICE_MODEL=model)
        return done, fake.chat_bodies()


def test_reasoning_effort_is_sent_when_the_model_takes_that_level(tmp_path: Path) -> None:
    done, [body] = venice(tmp_path, "zai-org-glm-5-2", "--reasoning-effort", "max", replies=[{"text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert body["reasoning_effort"] == "max"


def test_reasoning_effort_the_model_does_not_take_is_refused_before_the_request(tmp_path: Path) -> None:
    done, bodies = venice(tmp_path, "zai-org-glm-5-2", "--reasoning-effort", "low")
    assert done.returncode == 2 and bodies == []
    assert "venice-agent: zai-org-glm-5-2 takes --reasoning-effort none|high|max, not low" in done.stderr
    done, bodies = venice(tmp_path, "claude-opus-4-7", "--reasoning-effort", "high")
    assert done.returncode == 2 and bodies == []
    assert "claude-opus-4-7 takes no --reasoning-effort (it lists no effort levels)" in done.stderr
    done, bodies = venice(tmp_path, "llama-3.3-70b", "--reasoning-effort", "high")
    assert done.returncode == 2 and "(it does not reason)" in done.stderr


def test_no_thinking_is_sent_to_a_reasoning_model_and_not_to_one_that_does_not_think(tmp_path: Path) -> None:
    done, [body] = venice(tmp_path, "kimi-k3", "--no-thinking", replies=[{"text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert body["venice_parameters"] == {"include_venice_system_prompt": False, "disable_thinking": True}
    done, [body] = venice(tmp_path, "llama-3.3-70b", "--no-thinking", replies=[{"text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert body["venice_parameters"] == {"include_venice_system_prompt": False}


THOUGHT = {"reasoning_content": "Two and two make four.", "text": "4",
           "usage": {"completion_tokens_details": {"reasoning_tokens": 1234}}}  # fmt: skip


def test_thinking_has_its_own_receipt_field_and_one_line_off_a_terminal(tmp_path: Path) -> None:
    with fake_venice([THOUGHT, THOUGHT], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--json", "2+2?")
        shown = run_cli(tmp_path, fake.base_url, "--no-mcp", "--quiet-thinking", "2+2?")
    assert done.returncode == 0 and shown.returncode == 0, done.stderr + shown.stderr
    receipt = receipt_of(done.stdout)
    assert receipt["answer"] == "4" and receipt["thinking"] == "Two and two make four."
    assert shown.stdout.splitlines()[0] == "4"  # the answer alone on stdout
    assert "Two and two" not in shown.stdout + shown.stderr
    assert "thought for 1.2k tokens" in shown.stderr.splitlines()


def test_a_think_block_in_the_content_is_taken_out_of_the_answer(tmp_path: Path) -> None:
    reply = {"text": ["<thi", "nk>Hmm: 2", " + 2.</th", "ink>\n\n", "4 it is."]}
    with fake_venice([reply, reply, {"text": "again"}], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--json", "2+2?")
        piped = run_cli(tmp_path, fake.base_url, "--no-mcp", stdin="2+2?\nand?\n")
        bodies = fake.chat_bodies()
    assert done.returncode == 0 and piped.returncode == 0, done.stderr + piped.stderr
    receipt = receipt_of(done.stdout)
    assert receipt["answer"] == "4 it is." and receipt["thinking"] == "Hmm: 2 + 2."
    assert "thought for 11 characters" in done.stderr  # no reasoning token count came
    # The conversation goes on with the answer alone: the block is not sent back as the answer.
    assert [m["content"] for m in bodies[2]["messages"] if m["role"] == "assistant"] == ["4 it is."]
    assert "Hmm" not in piped.stdout


def test_on_a_terminal_thinking_streams_dimmed_before_the_answer(tmp_path: Path) -> None:
    import pexpect

    from cli_support import COMMAND, clean_env

    with fake_venice([THOUGHT, THOUGHT], tmp_path) as fake:

        def on_terminal(*flags: str) -> str:
            child = pexpect.spawn(
                COMMAND, ["--no-mcp", *flags, "2+2?"], cwd=str(tmp_path),
                env=clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model"),
                encoding="utf-8", dimensions=(40, 160), timeout=60,
            )  # fmt: skip
            child.expect(pexpect.EOF)
            child.close()
            assert child.exitstatus == 0, child.before
            return child.before

        shown = on_terminal()
        quiet = on_terminal("--quiet-thinking")
    dimmed = "".join(re.findall(r"\x1b\[2m(.*?)\x1b\[0m", shown))  # each piece dim, as it streamed
    assert "Two and two make four." in dimmed
    assert shown.index("four.") < shown.index("\r\n4\r\n")  # before the answer, on a line of its own
    assert "thought for" not in shown
    assert "Two and two" not in quiet and "thought for 1.2k tokens" in quiet
