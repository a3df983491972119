"""Sessions through the real CLI, against the strict fake model server: what a resumed question
sends is the stored conversation byte for byte plus the new question; a rolled-back question
is not in it, a partial answer is; `-c` is this folder's; sessions off write nothing; the file
is 0600 and holds no secret."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_support import (
    COMMAND,
    clean_env,
    fake_venice,
    in_full_folder,
    in_read_only_folder,
    mcp_config,
    run_cli,
)

KEY = "sk-test-secret-4242"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


class Cli:
    """The command run in `folder` (default: the test's folder), all runs on one fake server."""

    def __init__(self, tmp_path: Path, base_url: str, **env: str) -> None:
        self.tmp_path, self.base_url = tmp_path, base_url
        self.env = {"VENICE_API_KEY": KEY, **env}
        # No MCP server: what a session keeps and sends is the conversation, and the built-in
        # tools make its calls; an mcp-server-time started by every run was 2 s of CPU each.
        self.servers = mcp_config(tmp_path, time_server=False, paid_server=False)

    def __call__(
        self, *args: str, folder: Path | None = None, stdin: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        # Asking gets the test's servers; the other commands take no --mcp-config first.
        asking = not args or args[0] not in ("sessions", "config", "chat", "logs")
        servers = ["--mcp-config", str(self.servers)] if asking else []
        variables: dict[str, str | None] = {"VENICE_MODEL": None, **self.env, **env}
        return run_cli(self.tmp_path, self.base_url, *servers, *args, stdin=stdin, cwd=folder, **variables)


def sessions_file(tmp_path: Path) -> Path:
    return tmp_path / "data" / "venice-agent" / "sessions.db"


def stored(tmp_path: Path, session: str | None = None) -> list[str]:
    """The stored messages' JSON text, in order (the latest session, or `session`)."""
    with sqlite3.connect(sessions_file(tmp_path)) as db:
        if session is None:
            session = db.execute("SELECT id FROM sessions ORDER BY updated DESC LIMIT 1").fetchone()[0]
        return [
            text
            for (text,) in db.execute("SELECT message FROM messages WHERE session = ? ORDER BY n", (session,))
        ]


def ids(tmp_path: Path) -> list[str]:
    with sqlite3.connect(sessions_file(tmp_path)) as db:
        return [row[0] for row in db.execute("SELECT id FROM sessions ORDER BY created")]


def sent(body: dict[str, Any]) -> list[str]:
    return [json.dumps(message, ensure_ascii=False) for message in body["messages"]]


def test_continue_sends_the_stored_conversation_byte_for_byte_without_the_rolled_back_question(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("the notes")
    script = [
        # 1: a tool round (assistant content null, a tool message), reasoning fields, an answer
        {
            **call("read_file", path="notes.txt"),
            "reasoning_content": "look first",
            "thought_signature": "sig-1",
        },
        {"text": "They say: the notes."},
        # 2: the model fails: rolled back, never stored
        {"status": 400, "error": "bad request"},
        # 3: out of budget, then a partial answer: kept
        call("list_files", path="."),
        {"text": "Partly: notes.txt."},
        # 4: after -c
        {"text": "Yes."},
    ]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("what do my notes say?").returncode == 0
        failed = run("-c", "this one fails")
        assert failed.returncode == 7
        assert run("-c", "--budget", "0", "list my files").returncode == 3
        kept = stored(tmp_path)
        assert not any("this one fails" in text for text in kept)  # the rolled-back question
        assert any("Partly: notes.txt." in text for text in kept)  # the partial answer
        assert '"content": null' in kept[2] and '"thought_signature": "sig-1"' in kept[2]
        done = run("-c", "anything else?")
        assert done.returncode == 0, done.stderr
        bodies = fake.chat_bodies()
        assert sent(bodies[-1]) == [*kept, json.dumps({"role": "user", "content": "anything else?"})]
        assert "resumed " in done.stderr and "3 questions" not in done.stderr
        assert "· 2 questions ·" in done.stderr  # the rolled-back one is not counted
        assert len(ids(tmp_path)) == 1  # one session, gone on with
        assert stored(tmp_path)[: len(kept)] == kept  # what was there stays as it was


def test_continue_takes_this_folders_latest_session_not_another_folders(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    script = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("asked here", folder=here).returncode == 0
        assert run("asked there", folder=there).returncode == 0  # the latest of all
        done = run("-c", "go on", folder=here)
        assert done.returncode == 0, done.stderr
        questions = [m["content"] for m in fake.chat_bodies()[-1]["messages"] if m["role"] == "user"]
        assert questions == ["asked here", "go on"]
        elsewhere = run("-c", "go on", folder=tmp_path)
        assert elsewhere.returncode == 2
        assert f"no saved session for {tmp_path.resolve()} yet" in elsewhere.stderr


def test_a_first_question_that_rolled_back_leaves_no_session_and_continue_skips_empty_ones(
    tmp_path: Path,
) -> None:
    script = [{"text": "one"}, {"status": 400, "error": "bad request"}, {"text": "two"}]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("asked first").returncode == 0
        (kept,) = ids(tmp_path)
        failed = run("fails")  # a new session whose only question is rolled back
        assert failed.returncode != 0
        assert ids(tmp_path) == [kept]  # nothing of it, not an empty session
        with sqlite3.connect(sessions_file(tmp_path)) as db:  # an empty one an older version left
            db.execute(
                "INSERT INTO sessions (id, folder, title, created, updated, questions)"
                " VALUES ('0e0e0e0e', ?, 'fails', 9e9, 9e9, 1)",
                (str(tmp_path.resolve()),),
            )
            db.execute(
                "INSERT INTO messages VALUES ('0e0e0e0e', 0, ?)",
                (json.dumps({"role": "system", "content": "x"}),),
            )
        done = run("-c", "go on")
        assert done.returncode == 0, done.stderr
        questions = [m["content"] for m in fake.chat_bodies()[-1]["messages"] if m["role"] == "user"]
        assert questions == ["asked first", "go on"]
        assert f"resumed {kept}" in done.stderr


def test_fork_goes_its_own_way_and_sends_the_stored_conversation(tmp_path: Path) -> None:
    script = [{"text": "one"}, {"text": "forked"}, {"text": "original"}]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("first").returncode == 0
        (original,) = ids(tmp_path)
        kept = stored(tmp_path, original)
        done = run("--fork", original[:4], "in the fork")
        assert done.returncode == 0, done.stderr
        assert sent(fake.chat_bodies()[-1]) == [*kept, json.dumps({"role": "user", "content": "in the fork"})]
        fork = next(each for each in ids(tmp_path) if each != original)
        assert f"forked {original} as {fork}" in done.stderr
        assert run("--resume", original, "in the original").returncode == 0
        assert not any("in the fork" in text for text in stored(tmp_path, original))
        assert any("in the fork" in text for text in stored(tmp_path, fork))
        assert not any("in the original" in text for text in stored(tmp_path, fork))


def test_sessions_off_write_nothing_and_continue_says_how_to_turn_them_on(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url)
        assert run("hello").returncode == 0
        assert run(stdin="hello again\n").returncode == 0  # the REPL, piped
        done = run("-c", "go on")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "venice-agent: sessions are off, so there is no saved conversation to go on from: turn them on "
        "with venice-agent config set sessions on (or VENICE_AGENT_SESSIONS=1, or --save for one run); "
        f"they would be kept in {sessions_file(tmp_path)}"
    ]
    data = tmp_path / "data"
    assert not data.exists() or not any(data.rglob("*"))  # the data folder stays empty


def test_save_and_private_for_one_run(tmp_path: Path) -> None:
    with fake_venice([{"text": "one"}, {"text": "two"}, {"text": "three"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url)
        assert run("--save", "kept").returncode == 0
        assert len(ids(tmp_path)) == 1
        private = run("--private", "not kept", VENICE_AGENT_SESSIONS="1")
        assert "private: nothing of this run is saved" in private.stderr
        assert len(ids(tmp_path)) == 1 and not any("not kept" in t for t in stored(tmp_path))
        assert run("-c", "--save", "kept too").returncode == 0
        assert any("kept too" in text for text in stored(tmp_path))


def test_the_file_is_0600_and_holds_no_secret(tmp_path: Path) -> None:
    script = [{"text": f"Your key is {KEY}, keep it safe."}, {"text": "ok"}]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run(f"is {KEY} my key?").returncode == 0
        assert run("-c", "thanks").returncode == 0
    files = [path for path in sessions_file(tmp_path).parent.iterdir() if path.name.startswith("sessions.db")]
    assert sessions_file(tmp_path) in files
    for path in files:
        assert path.stat().st_mode & 0o777 == 0o600, path
        assert KEY.encode() not in path.read_bytes()
    assert sessions_file(tmp_path).parent.stat().st_mode & 0o077 == 0  # a folder of ours: ours alone


def test_a_one_shot_with_sessions_off_imports_nothing_of_sessions(tmp_path: Path) -> None:
    import sys

    probe = (
        "import sys, json\n"
        "sys.argv = ['venice-agent', '--mcp-config', sys.argv[1], 'hello']\n"
        "from venice_terminal_agent.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    with fake_venice([{"text": "hi"}], tmp_path) as fake:
        done = subprocess.run(
            [sys.executable, "-c", probe, str(mcp_config(tmp_path, paid_server=False))],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env(tmp_path, fake.base_url),
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=True,
        )
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "venice_terminal_agent.agent" in modules  # the question really ran
    assert modules.isdisjoint(
        {"sqlite3", "venice_terminal_agent.store.sessions", "venice_terminal_agent.fronts.saved_sessions"}
    )


def test_pages_of_long_results_are_said_to_have_expired_after_a_resume(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("line of text\n" * 4000)  # 52 kB: three pages of 20 000
    script = [
        call("read_file", path="big.txt"),
        {"text": "It is long."},
        call("page", id=2),
        {"text": "That page is gone."},
    ]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("read big.txt").returncode == 0
        assert "call page(id=2)" in fake.chat_bodies()[1]["messages"][-1]["content"]
        done = run("-c", "show me page 2")
        assert done.returncode == 0, done.stderr
        answer = fake.chat_bodies()[-1]["messages"][-1]
        assert answer["role"] == "tool"
        assert "page 2 has expired: it was cut in an earlier run of this conversation" in answer["content"]


def test_continue_in_the_repl_in_a_terminal_restores_this_folders_latest(tmp_path: Path) -> None:
    from test_repl_pty import Terminal

    with fake_venice([{"text": "first answer"}, {"text": "second answer"}], tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url)
        assert run("config", "set", "sessions", "on").returncode == 0  # in the user config this time
        assert run("the first question").returncode == 0
        kept = stored(tmp_path)
        term = Terminal(tmp_path, fake, "-c", config=run.servers)
        term.expect("/help for commands")
        screen = term.expect("cost unknown")  # the line under the banner (the fake lists no prices)
        assert "resumed " in screen and "· 1 question ·" in screen
        term.ask("and the second?")
        term.expect("second answer")
        term.prompt()
        term.child.sendcontrol("d")
        assert term.finish() == 0
        assert sent(fake.chat_bodies()[-1]) == [
            *kept,
            json.dumps({"role": "user", "content": "and the second?"}),
        ]
    assert len(ids(tmp_path)) == 1 and len(stored(tmp_path)) == len(kept) + 2


def _damaged(kind: str, data: Path) -> None:
    """The data folder (XDG_DATA_HOME) or its sessions file, as a damaged disk or a careless
    hand may leave it."""
    store = data / "venice-agent" / "sessions.db"
    if kind == "the data folder is a file":
        data.write_text("not a folder\n")
        return
    store.parent.mkdir(parents=True)
    if kind == "sessions.db is a folder":
        store.mkdir()
    elif kind == "sessions.db is garbage":
        store.write_bytes(b"\x00\xffnot sqlite" * 500)
    elif kind == "sessions.db links to a device":
        store.symlink_to("/dev/zero")
    elif kind == "sessions.db links to nowhere":
        store.symlink_to(data / "gone" / "sessions.db")


DAMAGE = [
    "the data folder is a file",
    "sessions.db is a folder",
    "sessions.db is garbage",
    "sessions.db links to a device",
    "sessions.db links to nowhere",
    "the data folder is read-only",
    "the disk is full",
]


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_failed_save_never_fails_the_question(tmp_path: Path, kind: str) -> None:
    """The answer is printed, one line says the conversation was not saved, and the status is
    the question's (a data folder that was a regular file ended `FileExistsError`, exit 1)."""
    data = tmp_path / "data"
    command = [COMMAND, "--no-mcp", "What is new?"]
    if kind == "the data folder is read-only":
        data.mkdir()
        command = in_read_only_folder(data, command)
    elif kind == "the disk is full":
        data.mkdir()
        command = in_full_folder(data, command)
    else:
        _damaged(kind, data)
    with fake_venice([{"text": "Nothing much."}], tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model", VENICE_AGENT_SESSIONS="1")
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
            timeout=90, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Nothing much." in done.stdout
    said = [line for line in done.stderr.splitlines() if "not saved" in line]
    assert len(said) == 1 and "Traceback" not in done.stderr and "internal error" not in done.stderr, (
        done.stderr
    )
