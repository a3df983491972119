"""The REPL in a real pseudo-terminal (pexpect): the real CLI, the fake Venice server and
real stdio MCP servers (mcp-server-time, and a small server of ours with paid tools)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from cli_support import COMMAND, PAID_SERVER, FakeServer, clean_env, fake_venice, mcp_config

PROMPT = "›"  # prompt_toolkit draws the space after it with a cursor move
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


class Terminal:
    """The real command in a pseudo-terminal: the REPL, or a one-shot question in a terminal."""

    def __init__(
        self,
        tmp_path: Path,
        fake: FakeServer,
        *args: str,
        config: Path | None = None,
        command: tuple[str, ...] = (),  # ("chat",): another command than the REPL's
        **env: str,
    ) -> None:
        self.child = pexpect.spawn(
            COMMAND,
            [*command, "--mcp-config", str(config or mcp_config(tmp_path)), *args],
            cwd=str(tmp_path),
            env=clean_env(tmp_path, fake.base_url, **env),
            encoding="utf-8",
            dimensions=(40, 160),
            timeout=30,
        )

    def expect(self, text: str) -> str:
        """Wait for `text`; return the screen before it with styling escapes removed."""
        self.child.expect_exact(text)
        return ANSI.sub("", self.child.before)

    def prompt(self) -> None:
        self.expect(PROMPT)

    def ask(self, line: str) -> None:
        self.prompt()
        self.child.sendline(line)

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus


def no_servers(tmp_path: Path) -> Path:
    """An empty MCP server list, for a REPL test about the conversation or the prompt alone:
    mcp-server-time and shop cost most of a CPU second each to start (Python and the MCP SDK)."""
    return mcp_config(tmp_path, time_server=False, paid_server=False)


def shop_only(tmp_path: Path) -> Path:
    """The paid `shop` alone, for a test that calls only its tools (or needs one MCP server
    running, not which): mcp-server-time would cost most of a CPU second and check nothing more."""
    return mcp_config(tmp_path, time_server=False)


def test_streamed_reply_with_brackets_prints_literally_and_tools_lists_consent_marks(tmp_path: Path) -> None:
    with fake_venice([{"text": "Use [bold]this[/bold] and [red] :smile:"}], tmp_path) as fake:
        term = Terminal(tmp_path, fake)
        term.expect("apify  not used (MCP servers: time, shop)")
        term.ask("hello")
        term.expect("Use [bold]this[/bold] and [red] :smile:")
        term.expect("stopped: answered · 0 calls · 1 round")
        term.ask("/tools")
        table = term.expect("free: runs without asking")
        assert "free read_file" in table and "asks charge" in table and "free get_current_time" in table
        term.prompt()
        term.child.sendeof()  # Ctrl+D leaves
        assert term.finish() == 0


def test_one_paid_tool_approved_and_another_declined(tmp_path: Path) -> None:
    script = [call("charge", amount=5), call("refund", amount=3), {"text": "Charged 5, refund declined."}]
    with fake_venice(script, tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=shop_only(tmp_path))
        term.ask("charge then refund")
        assert 'Run charge({"amount": 5})?' in term.expect("[y/N]")
        term.child.sendline("y")
        term.expect("charged 5")
        assert 'Run refund({"amount": 3})?' in term.expect("[y/N]")
        term.child.sendline("")  # Enter alone is no
        term.expect("declined refund")
        term.expect("Charged 5, refund declined.")
        term.expect("stopped: answered · 2 calls proposed: 1 ran, 1 declined · 3 rounds")
        term.ask("/quit")
        assert term.finish() == 0
        tool_messages = [m for m in fake.chat_bodies()[2]["messages"] if m["role"] == "tool"]
        assert "charged 5" in tool_messages[0]["content"]
        assert "declined" in tool_messages[1]["content"]


def test_a_yes_for_the_session_runs_that_tool_again_without_asking_and_the_receipt_says_so(
    tmp_path: Path,
) -> None:
    script = [
        call("charge", amount=5),
        {"text": "Charged 5."},
        call("charge", amount=7),
        {"text": "Charged 7."},
    ]
    with fake_venice(script, tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=shop_only(tmp_path))
        term.ask("charge 5")
        asked = term.expect("(a = yes to it for this session)")
        assert 'Run charge({"amount": 5})? [y/N]' in asked
        term.child.sendline("a")
        term.expect("yes to charge for the rest of this session")
        term.expect("charged 5")
        term.expect("stopped: answered · 1 call · charge approved for this session · 2 rounds")
        term.ask("charge 7")
        shown = term.expect("stopped: answered · 1 call · charge approved for this session · 2 rounds")
        assert "charged 7" in shown and "Run charge" not in shown  # not asked again
        term.ask("/quit")
        assert term.finish() == 0


def test_ctrl_c_at_the_consent_prompt_means_no(tmp_path: Path) -> None:
    with fake_venice([call("charge", amount=9), {"text": "Not charged."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=shop_only(tmp_path))
        term.ask("charge")
        term.expect("[y/N]")
        term.child.sendcontrol("c")
        term.expect("declined charge")
        term.expect("stopped: answered · 1 call proposed: 0 ran, 1 declined · 2 rounds")
        term.prompt()
        term.child.sendcontrol("d")
        assert term.finish() == 0


def test_ctrl_c_after_a_consent_question_still_cancels_the_question(tmp_path: Path) -> None:
    # The consent prompt (prompt_toolkit) took over SIGINT while it asked; once answered,
    # Ctrl+C must cancel the question again, not be swallowed until the reply ends.
    script = [call("charge", amount=9), {"text": "Charged, and now a long", "hang": True}]
    with fake_venice(script, tmp_path) as fake:
        term = Terminal(tmp_path, fake, "charge it", config=shop_only(tmp_path))
        term.expect("[y/N]")
        term.child.sendline("y")
        term.expect("Charged, and now a long")
        term.child.sendcontrol("c")
        term.expect("stopped: cancelled · 1 call · 2 rounds")
        assert term.finish() == 130


def test_a_question_cancelled_by_ctrl_c_is_not_saved_and_a_resume_never_sends_it(tmp_path: Path) -> None:
    from test_sessions_cli import stored

    script = [
        {"text": "Kept answer."},
        call("list_files", path="."),
        {"text": "Cut short by Ctrl+C", "hang": True},
        {"text": "Resumed answer."},
    ]
    with fake_venice(script, tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=no_servers(tmp_path), VENICE_AGENT_SESSIONS="1")
        term.ask("kept question")
        term.expect("stopped: answered")
        term.ask("cancelled question")
        term.expect("Cut short by Ctrl+C")
        term.child.sendcontrol("c")
        term.expect("stopped: cancelled")
        term.ask("/quit")
        assert term.finish() == 0
        kept = [json.loads(text) for text in stored(tmp_path)]
        assert [m.get("content") for m in kept if m["role"] != "system"] == ["kept question", "Kept answer."]
        resumed = Terminal(
            tmp_path, fake, "-c", "and then?", config=no_servers(tmp_path), VENICE_AGENT_SESSIONS="1"
        )
        resumed.expect("Resumed answer.")
        assert resumed.finish() == 0
        assert fake.chat_bodies()[-1]["messages"] == [*kept, {"role": "user", "content": "and then?"}]


def test_ctrl_c_mid_stream_cancels_and_the_next_question_starts_from_a_clean_history(tmp_path: Path) -> None:
    script = [
        call("list_files", path="."),
        {"text": "A long answer that never ends", "hang": True},
        {"text": "Fresh answer."},
    ]
    with fake_venice(script, tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=shop_only(tmp_path))
        term.ask("first question")
        term.expect("A long answer that never ends")
        term.child.sendcontrol("c")
        term.expect("stopped: cancelled")
        term.ask("second question")
        term.expect("Fresh answer.")
        term.expect("stopped: answered · 0 calls · 1 round")
        term.ask("/receipt")
        term.expect('"stopped_because": "answered"')
        term.prompt()
        term.child.sendcontrol("c")  # Ctrl+C on an empty prompt leaves
        assert term.finish() == 0
        bodies = fake.chat_bodies()
        assert len(bodies) == 3  # the fake server answered 400 to none: all were well formed
        assert [m["role"] for m in bodies[2]["messages"]] == ["system", "user"]
        assert bodies[2]["messages"][1]["content"] == "second question"
        statuses = [seen["status"] for seen in fake.requests() if seen["path"].endswith("/chat/completions")]
        assert 400 not in statuses


def test_clear_forgets_the_conversation(tmp_path: Path) -> None:
    with fake_venice([{"text": "One."}, {"text": "Two."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=no_servers(tmp_path))
        term.ask("first")
        term.expect("One.")
        term.ask("/clear")
        term.expect("conversation cleared")
        term.ask("second")
        term.expect("Two.")
        term.ask("/quit")
        assert term.finish() == 0
        assert [m["role"] for m in fake.chat_bodies()[1]["messages"]] == ["system", "user"]


@pytest.mark.parametrize("save", [False, True])
def test_prompt_history_is_written_only_with_save_history(tmp_path: Path, save: bool) -> None:
    with fake_venice([], tmp_path) as fake:
        term = Terminal(tmp_path, fake, *(["--save-history"] if save else []), config=no_servers(tmp_path))
        term.ask("/help")
        term.expect("/reload")
        term.ask("/quit")
        assert term.finish() == 0
    history = tmp_path / "data" / "venice-agent" / "history"
    assert history.exists() is save
    assert not save or "/help" in history.read_text()
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.parent.name != "config"]
    names = {p.name for p in written}
    if not save:  # nothing on disk by default, beyond this test's own files
        assert names <= {"mcp.json", "requests.jsonl"}, names


def test_an_escape_sequence_from_a_tool_does_not_reach_the_terminal_raw(tmp_path: Path) -> None:
    with fake_venice([call("ansi"), {"text": "done"}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, "--yes", config=shop_only(tmp_path))
        term.ask("show the page")
        term.expect("stopped: answered")
        screen = term.child.before
        assert "\x1b]0;pwned" not in screen and "\x1b[2J" not in screen
        assert "\\x1b]0;pwned\\x07" in screen
        term.ask("/quit")
        assert term.finish() == 0


def test_a_spinner_shows_while_the_model_or_a_slow_tool_keeps_us_waiting(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "wait", "arguments": {"seconds": 1}}], "delay": 1},
        {"text": "Finally."},
    ]
    with fake_venice(script, tmp_path) as fake:
        term = Terminal(tmp_path, fake, "--yes", config=shop_only(tmp_path))
        term.ask("take your time")
        term.expect("thinking…")  # the server waits a second before its first byte
        term.expect('→ wait({"seconds": 1})')
        term.expect("running wait…")
        term.expect("Finally.")
        term.ask("/quit")
        assert term.finish() == 0


def test_ctrl_c_during_a_one_shot_question_exits_130_with_the_cancelled_receipt(tmp_path: Path) -> None:
    with fake_venice([{"text": "Never finishing", "hang": True}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, "a question", config=shop_only(tmp_path))
        term.expect("Never finishing")
        term.child.sendcontrol("c")
        said = term.expect("stopped: cancelled · 0 calls · 1 round")
        assert (
            "cancelled before the answer was finished" in said
        )  # half of it streamed: not "before an answer"
        assert term.finish() == 130


def test_reload_picks_up_tools_added_mid_session(tmp_path: Path) -> None:
    paged = Path(__file__).parent / "servers" / "paged.py"  # its `grow` tool adds a tool to its list
    config = tmp_path / "grow.json"
    config.write_text(
        json.dumps({"mcpServers": {"paged": {"command": sys.executable, "args": [str(paged)]}}})
    )
    with fake_venice([call("grow"), {"text": "Grown."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, "--yes", config=config)
        term.ask("/tools")
        assert "grown_0" not in term.expect("free: runs without asking")
        term.ask("add an actor")
        term.expect("Grown.")
        term.ask("/reload")
        term.expect("new: grown_0")
        term.ask("/tools")
        assert "asks grown_0" in term.expect("free: runs without asking")
        term.ask("/quit")
        assert term.finish() == 0


def test_json_output_is_not_for_the_repl(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        term = Terminal(tmp_path, fake, "--json")
        term.expect("--json needs a question")
        assert term.finish() == 2


def gated_config(tmp_path: Path, *, shop: bool = True) -> tuple[Path, Path]:
    """An MCP config with a server that starts when the test opens the returned FIFO for
    writing, and the shop (unless `shop=False`: a test that calls none of its tools)."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    config = tmp_path / "gated.json"
    server = {
        "command": sys.executable,
        "args": [str(Path(__file__).parent / "servers" / "gated.py"), str(gate)],
    }
    servers = {"gated": server, "shop": {"command": sys.executable, "args": [str(PAID_SERVER)]}}
    config.write_text(json.dumps({"mcpServers": servers if shop else {"gated": server}}))
    return config, gate


def type_ahead(term: Terminal, gate: Path, keys: str) -> None:
    """Type `keys` while start-up still waits for the gated server, then let it start."""
    term.expect("starting gated")
    term.child.send(keys)
    with open(gate, "w"):
        pass


# Typed ahead (while the agent starts, or while a question runs), keys wait in the terminal and
# the next prompt reads them: a person expects them once, as the start of what they are typing
# at that prompt, not echoed by the terminal wherever the cursor was and then shown again.


def test_text_typed_while_the_repl_starts_is_shown_once_as_the_prompts_input(tmp_path: Path) -> None:
    config, gate = gated_config(tmp_path, shop=False)
    with fake_venice([{"text": "Noon."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=config)
        type_ahead(term, gate, "what time is it")
        before_prompt = term.expect(PROMPT)
        assert "what time" not in before_prompt  # the terminal did not echo it by itself
        term.expect("what time is it")  # the prompt shows it, ready to edit or send
        term.child.send("?\r")
        term.expect("Noon.")
        term.ask("/quit")
        assert term.finish() == 0
        assert [m["content"] for m in fake.chat_bodies()[0]["messages"] if m["role"] == "user"] == [
            "what time is it?"
        ]


def test_a_yes_typed_ahead_of_a_consent_question_is_its_answer_shown_once(tmp_path: Path) -> None:
    config, gate = gated_config(tmp_path)
    with fake_venice([call("charge", amount=5), {"text": "Charged."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, "charge 5", config=config)
        type_ahead(term, gate, "YES\r")  # Enter too: the question is answered as it comes
        assert "YES" not in term.expect("[y/N]")
        term.expect("YES")
        term.expect("charged 5")
        term.expect("Charged.")
        assert term.finish() == 0


def test_text_typed_while_chat_starts_is_shown_once_as_the_prompts_input(tmp_path: Path) -> None:
    config, gate = gated_config(tmp_path, shop=False)
    with fake_venice([{"text": "Hello to you."}], tmp_path) as fake:
        term = Terminal(tmp_path, fake, config=config, command=("chat",), VENICE_MODEL="fake-model")
        type_ahead(term, gate, "hello bot")
        assert "hello bot" not in term.expect(PROMPT)
        term.expect("hello bot")
        term.child.send("\r")
        term.expect("Hello to you.")
        term.prompt()
        term.child.sendeof()
        assert term.finish() == 0
        assert [m["content"] for m in fake.chat_bodies()[0]["messages"] if m["role"] == "user"] == [
            "hello bot"
        ]


def test_the_terminal_echoes_again_once_the_repl_has_left(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        shell = f'"{COMMAND}" --mcp-config "{mcp_config(tmp_path)}"; stty -a'
        child = pexpect.spawn(
            "sh", ["-c", shell], cwd=str(tmp_path), env=clean_env(tmp_path, fake.base_url),
            encoding="utf-8", dimensions=(40, 160), timeout=30,
        )  # fmt: skip
        child.expect_exact(PROMPT)
        child.sendline("/quit")
        child.expect(pexpect.EOF)
        modes = child.before  # stty -a: the terminal's modes as the shell gets them back
        child.close()
    assert re.search(r"(?<![-\w])echo\b", modes), modes
