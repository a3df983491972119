"""A slip of the keys is not a paid question: a command's or an option's name nearly right is
answered with the name meant (exit 2, no request), through the real command and the fake Venice
serving Venice's own model list. After `--` a word is asked as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import fake_venice, run_cli
from venice_terminal_agent.core.wording import did_you_mean, near_misses

VENICE = "zai-org-glm-5-2"  # a text model of the project's copy of Venice's list


def asked(tmp_path: Path, *runs: list[str], replies: int = 0) -> tuple[list, list]:
    """Each of `runs` (the command's arguments) as its own process on one fake Venice with
    `replies` answers; the processes and every chat request the server saw."""
    script = {"listing": "venice", "replies": [{"text": "An answer."}] * replies}
    with fake_venice(script, tmp_path) as fake:
        done = [run_cli(tmp_path, fake.base_url, *args, VENICE_MODEL=VENICE) for args in runs]
        return done, fake.chat_bodies()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["docter"], "venice-agent: no such command docter; did you mean doctor? (to ask it, put it after --: venice-agent -- docter)"),
        (["sesions"], "venice-agent: no such command sesions; did you mean sessions? (to ask it, put it after --: venice-agent -- sesions)"),
        (["modles"], "venice-agent: no such command modles; did you mean models? (to ask it, put it after --: venice-agent -- modles)"),
        (["--no-mcp", "--model", VENICE, "docter"], "venice-agent: no such command docter; did you mean doctor? (to ask it, put it after --: venice-agent -- docter)"),
        (["sesions", "list"], "venice-agent: no such command sesions; did you mean sessions? (to ask it, put it after --: venice-agent -- sesions)"),
        (["--json", "doctor"], "venice-agent: doctor is a command: name it first, venice-agent doctor … (to ask it, put it after --: venice-agent -- doctor)"),
        (["--modle", "x", "hi"], "venice-agent: no such option --modle; did you mean --model? (see venice-agent --help)"),
        (["doctor", "--jsn"], "venice-agent doctor: no such option --jsn; did you mean --json? (see venice-agent doctor --help)"),
        (["sessions", "list", "--jsn"], "venice-agent sessions list: no such option --jsn; did you mean --json? (see venice-agent sessions list --help)"),
        (["run", "--bugdet", "1", "plan.json"], "venice-agent run: no such option --bugdet; did you mean --budget? (see venice-agent run --help)"),
        (["sessions", "lst"], "venice-agent sessions: no such command lst; did you mean list? (see venice-agent sessions --help)"),
        (["tools", "lsit"], "venice-agent tools: no such command lsit; did you mean list? (see venice-agent tools --help)"),
        (["sessions", "vanish"], "venice-agent sessions: no such command vanish (see venice-agent sessions --help)"),
        (["-5"], 'venice-agent: no such option -5; a question that starts with - goes after --: venice-agent -- "-5 …" (see venice-agent --help)'),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)  # fmt: skip
def test_a_name_nearly_right_is_answered_with_the_name_meant_and_asks_nothing(
    tmp_path: Path, args: list[str], line: str
) -> None:
    [done], bodies = asked(tmp_path, args)
    assert (done.returncode, done.stderr.splitlines()) == (2, [line]), done.stdout
    assert bodies == []


def test_after_double_dash_a_slip_is_asked_as_are_other_words_and_longer_questions(tmp_path: Path) -> None:
    runs = [["--no-mcp", "--", "docter"], ["--no-mcp", "hello"], ["--no-mcp", "what is a docter?"]]
    done, bodies = asked(tmp_path, *runs, replies=3)
    assert [each.returncode for each in done] == [0, 0, 0], [each.stderr for each in done]
    questions = [body["messages"][-1]["content"] for body in bodies]
    assert questions == ["docter", "hello", "what is a docter?"]


def test_near_misses_keep_the_first_letter_and_allow_one_slip_in_a_short_name() -> None:
    commands = ["run", "doctor", "models", "tools", "logs", "logout", "chat", "sessions", "mcp"]
    assert near_misses("docter", commands) == ["doctor"]  # a letter changed
    assert near_misses("modles", commands) == ["models"]  # two swapped
    assert near_misses("sesion", commands) == ["sessions"]  # two left out of a long name
    assert near_misses("Tool", commands) == ["tools"]
    assert near_misses("mpc", commands) == ["mcp"]
    assert near_misses("what", commands) == []  # one slip from chat, but not its first letter
    assert near_misses("hello", commands) == near_misses("summarise", commands) == []
    assert near_misses("--modle", ["--model", "--max-usd", "--mcp-config"]) == ["--model"]
    assert did_you_mean(["doctor"]) == "did you mean doctor?"
    assert did_you_mean(["list", "last", "lost"]) == "did you mean list, last or lost?"
