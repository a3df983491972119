"""Output that pipes cleanly, and consent asked on the person's terminal even then. The real
CLI in a pseudo-terminal (which is its controlling terminal, /dev/tty) with its streams
redirected, against the fake model server and a real stdio MCP server with paid tools."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pexpect

from cli_support import COMMAND, clean_env, fake_venice, mcp_config

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def shell(tmp_path: Path, base_url: str, line: str) -> pexpect.spawn:
    return pexpect.spawn(
        "/bin/sh",
        ["-c", line],
        cwd=str(tmp_path),
        env=clean_env(tmp_path, base_url),
        encoding="utf-8",
        dimensions=(40, 160),
        timeout=60,
    )


CHARGE = [call("charge", amount=5), {"text": "Charged 5."}]
# What out.txt holds once the charge ran (a no would say "1 call proposed: 0 ran, 1 declined").
RAN = ["Charged 5.", "stopped: answered · 1 call · 2 rounds · 30 tokens · cost unknown"]


def yes_on_the_terminal(
    tmp_path: Path, line: str, script: list[Any] = CHARGE, config: Path | None = None
) -> str:
    """Run the shell `line` at a terminal, `{agent}` in it standing for the agent with the shop
    server (or `config`'s servers); answer its consent question y. Returns the screen up to the
    question; the command must end with status 0."""
    config = config or mcp_config(tmp_path, time_server=False)
    with fake_venice(script, tmp_path) as fake:
        agent = f"{COMMAND} --mcp-config {shlex.quote(str(config))}"
        child = shell(tmp_path, fake.base_url, line.format(agent=agent))
        child.expect_exact("[y/N]")
        asked = child.before
        child.sendline("y")
        child.expect(pexpect.EOF)
        child.close()
    errors = tmp_path / "err.txt"
    assert child.exitstatus == 0, errors.read_text() if errors.exists() else child.before
    return asked


def out_lines(tmp_path: Path, encoding: str = "utf-8") -> list[str]:
    return (tmp_path / "out.txt").read_text(encoding=encoding).splitlines()


def test_consent_is_asked_on_the_terminal_when_both_output_streams_are_redirected(tmp_path: Path) -> None:
    asked = yes_on_the_terminal(
        tmp_path, "{agent} 'charge 5' >out.txt 2>err.txt", config=mcp_config(tmp_path)
    )
    assert 'Run charge({"amount": 5})?' in asked
    assert out_lines(tmp_path) == RAN
    errors = (tmp_path / "err.txt").read_text().splitlines()
    assert '  ✓ {"result": "charged 5"}' in errors  # the tool line, with its result
    # Piped, nothing is wrapped at 80 columns: the banner's long tools line stays one line.
    tools = next(line for line in errors if line.startswith("  tools  "))
    assert len(tools) > 80 and tools.endswith("(9 in all)")


def test_with_only_stdout_redirected_the_question_stays_out_of_the_answer_file(tmp_path: Path) -> None:
    """`venice-agent "…" > answer.txt` at a terminal: the question goes to the terminal (stderr),
    and the file holds the answer and the receipt line, never the question."""
    assert 'Run charge({"amount": 5})?' in yes_on_the_terminal(tmp_path, "{agent} 'charge 5' >out.txt")
    assert out_lines(tmp_path) == RAN


def test_on_a_narrow_terminal_long_lines_wrap_under_their_text_not_at_column_0(tmp_path: Path) -> None:
    with fake_venice([{"text": "Hi."}], tmp_path) as fake:
        child = pexpect.spawn(
            COMMAND,
            ["--mcp-config", str(mcp_config(tmp_path)), "hello"],
            cwd=str(tmp_path),
            env=clean_env(tmp_path, fake.base_url),
            encoding="utf-8",
            dimensions=(40, 60),
            timeout=60,
        )
        child.expect_exact("stopped: answered")
        screen = ANSI.sub("", child.before)
        child.expect(pexpect.EOF)
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  tools  read_file"))
    assert lines[start + 1].startswith("         ") and lines[start + 1].strip()  # under "read_file"
    assert "(9 in all)" in " ".join(lines[start : start + 3])


def test_a_call_the_person_declines_is_on_the_receipt_and_the_model_is_told_they_declined(
    tmp_path: Path,
) -> None:
    script = [call("charge", amount=5), {"text": "Not charged."}]
    with fake_venice(script, tmp_path) as fake:
        config = shlex.quote(str(mcp_config(tmp_path, time_server=False)))  # charge is the shop's
        child = shell(
            tmp_path, fake.base_url, f"{COMMAND} --mcp-config {config} 'charge 5' >out.txt 2>err.txt"
        )
        child.expect_exact("[y/N]")
        child.sendline("n")
        child.expect(pexpect.EOF)
        child.close()
        bodies = fake.chat_bodies()
    assert child.exitstatus == 0, (tmp_path / "err.txt").read_text()
    assert (tmp_path / "out.txt").read_text().splitlines()[-1] == (
        "stopped: answered · 1 call proposed: 0 ran, 1 declined · 2 rounds · 30 tokens · cost unknown"
    )
    told = next(m for m in bodies[1]["messages"] if m["role"] == "tool")["content"]
    assert told == '{"error": "the user declined this call; it did not run"}'


def test_with_all_three_streams_redirected_the_question_is_still_answered_on_the_terminal(
    tmp_path: Path,
) -> None:
    """`cat notes | venice-agent "…" >out 2>err`: stdin holds the notes, not the person's keys,
    and neither output is the terminal, so the consent question is asked and read on the terminal
    itself (/dev/tty), never from the pipe, whose end would read as a no. The piped notes are
    local data, and the question says so."""
    asked = yes_on_the_terminal(tmp_path, "printf 'my notes' | {agent} 'charge 5' >out.txt 2>err.txt")
    assert 'charge({"amount": 5}) may send local file contents off this machine. Run it?' in asked
    assert out_lines(tmp_path) == RAN


def test_a_server_name_that_cannot_be_written_as_text_is_asked_about_on_the_terminal_all_the_same(
    tmp_path: Path,
) -> None:
    """mcp.json may name a server with a lone surrogate (JSON's "\\ud800"), which no encoding
    writes: asked on the terminal itself (output redirected), the question shows a stand-in for
    it instead of failing. (A model's text cannot carry one: the stream repairs it first.)"""
    config = mcp_config(tmp_path, time_server=False)
    servers = json.loads(config.read_text())["mcpServers"]
    config.write_text(json.dumps({"mcpServers": {"sh\ud800op": servers["shop"]}}))
    asked = yes_on_the_terminal(tmp_path, "{agent} 'charge 5' >out.txt 2>err.txt", config=config)
    assert "charge on sh?op is not known to be free" in asked
    assert out_lines(tmp_path) == RAN


def test_under_an_ascii_locale_the_question_is_shown_whole_and_the_run_ends_well(tmp_path: Path) -> None:
    """LC_ALL=C with Python's UTF-8 mode off makes the locale's encoding ASCII. The question on
    the terminal itself is still written as UTF-8 (what the terminal shows), so the accented
    argument reads as it is; the redirected output writes `?` for what ASCII cannot hold. It
    once ended the answered, paid-for run in an internal error on the receipt's `·`."""
    script = [call("charge", amount=5, note="café"), {"text": "Charged 5 €."}]
    line = "LC_ALL=C PYTHONUTF8=0 {agent} 'charge 5' >out.txt 2>err.txt"
    assert 'Run charge({"amount": 5, "note": "café"})?' in yes_on_the_terminal(tmp_path, line, script)
    assert out_lines(tmp_path, "ascii") == [
        "Charged 5 ?.",
        "stopped: answered ? 1 call ? 2 rounds ? 30 tokens ? cost unknown",
    ]
    assert '  ? {"result": "charged 5"}' in (tmp_path / "err.txt").read_text(encoding="ascii")


def test_under_an_ascii_locale_a_json_receipt_keeps_every_character_escaped(tmp_path: Path) -> None:
    """--json where stdout cannot write UTF-8: the receipt's text is escaped (`\\u20ac`), so the
    JSON a program reads back holds the answer whole, not a `?` for each character."""
    with fake_venice([{"text": "5 € café"}], tmp_path) as fake:
        done = subprocess.run(
            [COMMAND, "--no-mcp", "--json", "price?"],
            cwd=tmp_path, env={**clean_env(tmp_path, fake.base_url), "LC_ALL": "C", "PYTHONUTF8": "0"},
            capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"\\u20ac" in done.stdout and done.stdout.isascii()
    assert json.loads(done.stdout)["answer"] == "5 € café"


def test_under_an_ascii_locale_a_question_typed_with_accents_reaches_the_model_as_typed(
    tmp_path: Path,
) -> None:
    """Python decodes argv under LC_ALL=C (UTF-8 mode off) with surrogate escapes, which no
    request can carry: `venice-agent "café?"` ended in an internal error before anything was
    sent. The terminal typed UTF-8, so the model is asked "café?", and `-s` is read as typed too."""
    with fake_venice([{"text": "Oui."}], tmp_path) as fake:
        done = subprocess.run(
            [COMMAND, "--no-mcp", "-s", "Réponds en français.", "café?"],
            cwd=tmp_path, env={**clean_env(tmp_path, fake.base_url), "LC_ALL": "C", "PYTHONUTF8": "0"},
            capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip
        messages = fake.chat_bodies()[0]["messages"]
    assert done.returncode == 0, done.stderr
    assert messages[-1]["content"] == "café?"
    assert "Réponds en français." in messages[0]["content"]
