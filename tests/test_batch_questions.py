"""`venice-agent batch FILE`: a file of questions that cannot run is refused before anything
runs, in one line naming the line and what is wrong, with status 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cli_support import COMMAND, clean_env
from venice_terminal_agent.core.errors import ConfigError
from venice_terminal_agent.fronts.batch.questions import LINE_LIMIT, parse_questions, read_questions

GOOD = '{"id": "a", "question": "q?"}'

HOSTILE = [
    ("not JSON", f"{GOOD}\n{{oops", "line 2: not JSON"),
    ("not an object", f"{GOOD}\n[1, 2]", "line 2: a line is a JSON object"),
    ("a string", '"what?"', 'line 1: a line is a JSON object {"id": …, "question": …}, not a string'),
    ("no id", '{"question": "q?"}', 'line 1: no "id"'),
    (
        "a duplicate id",
        f'{GOOD}\n\n{{"id": "a", "question": "again"}}',
        "line 3: the id 'a' is already the id of line 1",
    ),
    (
        "1 and '1' are one id",
        '{"id": 1, "question": "x"}\n{"id": "1", "question": "y"}',
        "line 2: the id '1'",
    ),
    (
        "an id of the wrong type",
        '{"id": [1], "question": "q?"}',
        '"id" is a string or a whole number, not a list',
    ),
    (
        "a boolean id",
        '{"id": true, "question": "q?"}',
        '"id" is a string or a whole number, not true or false',
    ),
    ("a blank id", '{"id": "  ", "question": "q?"}', '"id" must be 1 to 200 characters'),
    ("no question", '{"id": "a"}', 'line 1: no "question"'),
    ("a question of the wrong type", '{"id": "a", "question": 3}', '"question" is a string, not a number'),
    ("an empty question", '{"id": "a", "question": " "}', '"question" is empty'),
    ("an unknown key", '{"id": "a", "question": "q", "max_usdd": 1}', "unknown key 'max_usdd'"),
    (
        "max_rounds out of range",
        '{"id": "a", "question": "q", "max_rounds": 0}',
        '"max_rounds" is a whole number from 1 to 40, not 0',
    ),
    ("a float budget", '{"id": "a", "question": "q", "budget": 2.5}', '"budget" is a whole number'),
    (
        "a negative cap",
        '{"id": "a", "question": "q", "max_usd": -1}',
        '"max_usd" is a positive number of USD, not -1',
    ),
    ("NaN", '{"id": "a", "question": "q", "max_usd": NaN}', "line 1: not JSON (NaN is not JSON)"),
    ("deep nesting", "[" * 100_000, "line 1: not JSON"),
    ("not UTF-8", b'{"id": "a", "question": "\xff"}', "line 1: not UTF-8 text"),
    ("an empty file", "", "no questions"),
    ("blank lines only", "\n  \n\n", "no questions"),
]


@pytest.mark.parametrize(
    ("text", "said"), [(text, said) for _, text, said in HOSTILE], ids=[n for n, _, _ in HOSTILE]
)
def test_a_hostile_file_is_refused_naming_the_line(text: str | bytes, said: str) -> None:
    data = text if isinstance(text, bytes) else text.encode()
    with pytest.raises(ConfigError) as refused:
        parse_questions(data, "q.jsonl")
    assert said in refused.value.message
    assert "\n" not in refused.value.message


def test_a_huge_line_is_refused_before_it_is_parsed() -> None:
    line = json.dumps({"id": "a", "question": "x" * LINE_LIMIT}).encode()
    with pytest.raises(ConfigError, match=r"q.jsonl, line 2: 1.0 MB, longer than a line may be \(1.0 MB\)"):
        parse_questions(GOOD.encode() + b"\n" + line, "q.jsonl")


def test_a_good_file_keeps_every_line_and_its_options(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": 7, "question": "one"}\r\n'
        '{"id": "b", "question": "two", "model": "m", "system": "be brief", "max_rounds": 3, '
        '"budget": 0, "max_usd": 0.5}\n'
    )
    questions, digest = read_questions(path)
    assert [q.id for q in questions] == ["7", "b"] and [q.line for q in questions] == [1, 2]
    assert questions[1].to_json() == {
        "id": "b",
        "question": "two",
        "model": "m",
        "system": "be brief",
        "max_rounds": 3,
        "budget": 0,
        "max_usd": 0.5,
        "line": 2,
    }
    assert len(digest) == 12 and read_questions(path)[1] == digest  # the batch's default name


def _batch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "batch", *args],
        env=clean_env(tmp_path, "http://127.0.0.1:9"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.mark.parametrize("case", ["not JSON", "a folder", "unreadable", "missing"])
def test_the_command_refuses_a_bad_file_with_status_2_and_one_line(tmp_path: Path, case: str) -> None:
    path = tmp_path / "q.jsonl"
    if case == "not JSON":
        path.write_text(GOOD + "\n{nope\n")
    elif case == "a folder":
        path.mkdir()
    elif case == "unreadable":
        path.write_text(GOOD)
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads anything: a file it cannot read is a FIFO's peer
            path.unlink()
            os.mkfifo(path)
    done = _batch(tmp_path, str(path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("venice-agent batch: "), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    expected = {
        "not JSON": "q.jsonl, line 2: not JSON",
        "a folder": "q.jsonl: a folder, not a file",
        "unreadable": "q.jsonl: ",
        "missing": "q.jsonl: no such file",
    }[case]
    assert expected in lines[0]
    assert not (tmp_path / "data" / "venice-agent" / "batch" / "batch.sqlite").exists()  # nothing ran
