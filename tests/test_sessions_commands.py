"""`venice-agent sessions …` and the REPL's /save, /title, /sessions, through the real CLI:
listing, showing, exporting (0600), importing, deleting; an export imported again sends what
was stored, byte for byte."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from cli_support import fake_venice
from test_sessions_cli import Cli, call, ids, sent, sessions_file, stored


def test_list_show_export_import_and_resume_send_the_same_conversation(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the notes")
    other = tmp_path / "other"
    other.mkdir()
    script = [
        call("read_file", path="notes.txt"),
        {"text": "They say: the notes."},
        {"text": "elsewhere"},
        {"text": "again"},
    ]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("what do my notes say?").returncode == 0
        assert run("asked elsewhere", folder=other).returncode == 0
        (here_id,) = [each for each in ids(tmp_path) if any("notes" in t for t in stored(tmp_path, each))]

        listed = run("sessions", "list")
        assert listed.returncode == 0, listed.stderr
        assert [line.split()[0] for line in listed.stdout.splitlines()] == [here_id]  # this folder's only
        assert "what do my notes say?" in listed.stdout and "fake-model" in listed.stdout
        every = json.loads(run("sessions", "list", "--all", "--json").stdout)
        assert {item["id"] for item in every} == set(ids(tmp_path))
        assert {"id", "folder", "title", "model", "questions", "tokens", "cost", "updated"} <= set(every[0])

        shown = run("sessions", "show", here_id[:5])
        assert shown.returncode == 0, shown.stderr
        assert "## › what do my notes say?" in shown.stdout
        assert '→ `read_file({"path": "notes.txt"})`' in shown.stdout
        assert "_stopped: answered · 1 call · " in shown.stdout  # not "1 calls"

        out = tmp_path / "talk.jsonl"
        exported = run("sessions", "export", here_id, "--format", "jsonl", "-o", str(out))
        assert exported.returncode == 0, exported.stderr
        assert out.stat().st_mode & 0o777 == 0o600
        header, *lines = out.read_text().splitlines()
        assert json.loads(header)["model"] == "fake-model" and len(json.loads(header)["receipts"]) == 1
        assert lines == stored(tmp_path, here_id)  # one stored message per line, as stored
        md = tmp_path / "talk.md"
        assert run("sessions", "export", here_id, "--format", "md", "-o", str(md)).returncode == 0
        assert md.stat().st_mode & 0o777 == 0o600 and "They say: the notes." in md.read_text()

        imported = run("sessions", "import", str(out))
        assert imported.returncode == 0, imported.stderr
        new_id = imported.stdout.strip()
        assert new_id in ids(tmp_path) and new_id != here_id
        resumed = run("--resume", new_id, "and then?")
        assert resumed.returncode == 0, resumed.stderr
        assert sent(fake.chat_bodies()[-1]) == [*lines, json.dumps({"role": "user", "content": "and then?"})]


def test_delete_by_id_and_by_age(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("first").returncode == 0
        assert run("second").returncode == 0
    first, second = ids(tmp_path)
    with sqlite3.connect(sessions_file(tmp_path)) as db:  # last used 40 days ago
        db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time() - 40 * 86_400, first))
    done = run("sessions", "delete", "--older-than", "30d")
    assert done.returncode == 0 and done.stdout.strip() == f"deleted 1 session ({first})"
    assert ids(tmp_path) == [second]
    assert run("sessions", "delete", "--older-than", "soon").returncode == 2
    assert run("sessions", "delete", second).returncode == 0
    assert ids(tmp_path) == [] and stored_count(tmp_path) == 0
    missing = run("sessions", "delete", "nope")
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr


def stored_count(tmp_path: Path) -> int:
    with sqlite3.connect(sessions_file(tmp_path)) as db:
        return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])


def test_the_commands_never_create_the_sessions_file(tmp_path: Path) -> None:
    run = Cli(tmp_path, "http://127.0.0.1:9")
    done = run("sessions", "list")
    assert done.returncode == 0 and "no saved sessions yet" in done.stdout
    assert run("sessions", "list", "--json").stdout.strip() == "[]"
    assert run("sessions", "show", "latest").returncode == 2
    assert not (tmp_path / "data").exists()


def test_repl_save_title_and_sessions_with_sessions_off(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url)
        done = run(stdin="hello\n/title [Not saved]\n/save\n/title [My] talk\nmore\n/sessions\n")
    assert done.returncode == 0, done.stderr
    assert "this conversation is not saved: /save first" in done.stdout
    (session,) = ids(tmp_path)
    assert f"saved as session {session}" in done.stdout
    assert f"* {session}  [My] talk" in done.stdout  # /sessions marks this one
    texts = stored(tmp_path, session)
    assert any('"hello"' in text for text in texts) and any('"more"' in text for text in texts)


def test_the_bots_chats_are_not_sessions(tmp_path: Path) -> None:
    run = Cli(tmp_path, "http://127.0.0.1:9", VENICE_AGENT_SESSIONS="1")
    chat = run("chat", "--offline", "--chat", "work", stdin="list_files path=.\n")
    assert chat.returncode == 0, chat.stderr
    assert (tmp_path / "data" / "venice-agent" / "venice-agent.db").exists()  # the bot's own store
    assert run("sessions", "list", "--all", "--json").stdout.strip() == "[]"


def test_clear_in_the_repl_starts_a_new_session_and_leaves_the_saved_one(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        done = run(stdin="first topic\n/clear\nsecond topic\n")
    assert done.returncode == 0, done.stderr
    first, second = ids(tmp_path)
    assert [json.loads(t)["content"] for t in stored(tmp_path, first)[1:]] == ["first topic", "one"]
    assert [json.loads(t)["content"] for t in stored(tmp_path, second)[1:]] == ["second topic", "two"]


def _export(folder: Path) -> list[Any]:
    """A well-formed export written by hand: a header and a question with a tool call."""
    header = {
        "type": "venice-agent session",
        "version": 1,
        "id": "0123abcd",
        "folder": str(folder),
        "title": "notes",
        "model": "fake-model",
        "base_url": None,
        "created": 1_700_000_000.0,
        "updated": 1_700_000_100.0,
        "questions": 1,
        "tokens": 120,
        "cost": 0.001,
        "local_data": True,
        "forked_from": None,
        "pages": 1,
        "cost_unknown": False,
        "receipts": [
            {"at": 1_700_000_100.0, "question": "notes?", "receipt": {"stopped_because": "answered"}}
        ],
    }
    tool_call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    return [
        header,
        {"role": "system", "content": "You are careful."},
        {"role": "user", "content": "notes?"},
        {"role": "assistant", "content": None, "tool_calls": [tool_call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "the notes"},
        {"role": "assistant", "content": "They say: the notes."},
    ]


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _with_header(**fields: Any) -> Any:
    return lambda lines: [{**lines[0], **fields}, *lines[1:]]


HOSTILE: dict[str, tuple[Any, int, str]] = {
    # name: (what is done to the export's lines, the line named, what the line says)
    "a line nested 100,000 deep": (
        lambda lines: [*lines, "[" * 100_000 + "]" * 100_000],
        7,
        "nested too deeply",
    ),
    "created is a word": (_with_header(created="yesterday"), 1, "'created' is a time in seconds"),
    "tokens is text": (_with_header(tokens="120"), 1, "'tokens' is a count"),
    "cost is text": (_with_header(cost="0.001"), 1, "'cost' is an amount in USD"),
    "cost is NaN": (lambda lines: [json.dumps(lines[0]).replace("0.001", "NaN"), *lines[1:]], 1, "'cost'"),
    "pages is text": (_with_header(pages="2"), 1, "'pages' is a count from 1"),
    "receipts is a number": (_with_header(receipts=42), 1, "'receipts' is a list"),
    "a receipt is a number": (_with_header(receipts=[42]), 1, "receipt 1 is an object"),
    "a receipt's cost is text": (
        _with_header(receipts=[{"receipt": {"cost_usd": "free"}}]),
        1,
        "receipt 1's 'cost_usd' is an amount in USD",
    ),
    "a compaction with no fields": (
        lambda lines: [*lines, {"role": "compaction"}],
        7,
        "a compaction's 'replaced'",
    ),
    "a compaction past the end": (
        lambda lines: [
            *lines,
            {
                "role": "compaction",
                "replaced": [1, 9],
                "summary": {"role": "user", "content": "s"},
                "rounds": 1,
                "tokens_before": 9,
                "tokens_after": 1,
            },
        ],
        7,
        "a compaction's 'replaced'",
    ),
    "a tool result without its call": (
        lambda lines: [*lines[:3], *lines[5:], lines[4]],
        5,
        "a tool result ('call_1') without its call",
    ),
    "a call without its result": (
        lambda lines: [*lines[:4], *lines[5:]],
        4,
        "the tool call 'call_1' has no result after it",
    ),
    "a message that is a number": (lambda lines: [*lines, 42], 7, "a message is a JSON object, not int"),
    "a role that is none": (
        lambda lines: [*lines, {"role": "wizard", "content": "x"}],
        7,
        "the role 'wizard'",
    ),
    "content that is a number": (
        lambda lines: [*lines, {"role": "user", "content": 7}],
        7,
        "content is text",
    ),
}


def test_hostile_imports_are_refused_naming_the_line_and_the_store_is_unchanged(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        good = run("sessions", "import", str(_write(tmp_path / "good.jsonl", _export(tmp_path))))
        assert good.returncode == 0, good.stderr
        before = sessions_file(tmp_path).read_bytes()
        for name, (spoil, line, said) in HOSTILE.items():
            path = _write(tmp_path / "bad.jsonl", spoil(_export(tmp_path)))
            done = run("sessions", "import", str(path))
            assert done.returncode == 2, (name, done.stderr)
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, (name, done.stderr)
            assert f"{path}:{line}: " in done.stderr and said in done.stderr, (name, done.stderr)
            assert sessions_file(tmp_path).read_bytes() == before, name


def test_what_is_imported_can_be_shown_exported_and_resumed(tmp_path: Path) -> None:
    with fake_venice([{"text": "Still the notes."}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        imported = run("sessions", "import", str(_write(tmp_path / "good.jsonl", _export(tmp_path))))
        assert imported.returncode == 0, imported.stderr
        new = imported.stdout.strip()
        shown = run("sessions", "show", new)
        assert shown.returncode == 0 and "They say: the notes." in shown.stdout, shown.stderr
        md = run("sessions", "export", new, "--format", "md")
        assert md.returncode == 0 and "They say: the notes." in md.stdout, md.stderr
        resumed = run("--resume", new, "and now?")
        assert resumed.returncode == 0 and "Still the notes." in resumed.stdout, resumed.stderr


def test_a_stored_session_damaged_by_hand_is_refused_in_one_line(tmp_path: Path) -> None:
    """Rows already stored (by hand, or by an import that did not check) are checked before they
    are shown, exported or resumed: a bare compaction marker crashed all three."""
    with fake_venice([], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        new = run(
            "sessions", "import", str(_write(tmp_path / "good.jsonl", _export(tmp_path)))
        ).stdout.strip()
        with sqlite3.connect(sessions_file(tmp_path)) as db:
            db.execute(
                "INSERT INTO messages (session, n, message) VALUES (?, 99, ?)",
                (new, '{"role": "compaction"}'),
            )
        for args in (
            ["sessions", "show", new],
            ["sessions", "export", new, "--format", "md"],
            ["--resume", new, "hi"],
        ):
            done = run(*args)
            assert done.returncode == 2, (args, done.stderr)
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, (args, done.stderr)
            assert f"session {new} is damaged in message 6" in done.stderr, (args, done.stderr)
        assert fake.chat_bodies() == []


def test_logs_and_sessions_each_say_where_the_other_history_is(tmp_path: Path) -> None:
    to_logs = "the chat bot's runs (and the agent's with --db) are not listed here: venice-agent logs"
    to_sessions = "the terminal agent's saved sessions are not listed here: venice-agent sessions list"
    with fake_venice([{"text": "one"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert to_logs not in run("sessions", "list").stderr  # no runs store: nothing to point to
        assert run("saved as a session").returncode == 0
        logs = run("logs")
        assert logs.returncode == 0 and to_sessions in logs.stderr.splitlines()
        assert run("chat", "--offline", stdin="help\n").returncode == 0  # the bot records a run
        listed = run("sessions", "list")
        assert "saved as a session" in listed.stdout and to_logs in listed.stderr.splitlines()
        logs = run("logs")
        assert "    > help" in logs.stdout and to_sessions in logs.stderr.splitlines()
