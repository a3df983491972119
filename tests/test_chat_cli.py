"""`venice-agent chat` and `venice-agent logs` driven as a person would: real processes, real
stdin, a real SQLite file, and (for the model) the fake Venice server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from subprocess import PIPE

import pytest

from cli_support import in_read_only_folder
from venice_terminal_agent.testing.fake_venice import FakeVenice

BIN = Path(sys.executable).parent


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VENICE_", "APIFY_"))}
    env.update(extra)
    return env


def venice_agent(
    *args: str, stdin: str = "", cwd: Path, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "venice-agent"), *args], input=stdin, capture_output=True, text=True,
        timeout=120, env=env or clean_env(), cwd=cwd, check=False,
    )  # fmt: skip


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    (tmp_path / "docs").mkdir()
    return tmp_path


def test_an_offline_chat_session_from_stdin(work: Path) -> None:
    messages = [
        "help",
        "read_file path=notes.txt",
        "read_file path=notes.txt",
        "page id=3",
        "weather city=Oslo",
    ]
    done = venice_agent("chat", "--chat", "me", "--db", "bot.db", stdin="\n".join(messages) + "\n", cwd=work)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "page id=3" in out and "stopped: answered · 0 calls · 5 left this hour" in out  # help
    assert "buy milk\nstopped: answered · 1 call · 4 left this hour" in out
    assert (
        "buy milk\nsame message as before: previous answer (stopped: answered), no call · 4 left this hour"
        in out
    )
    assert (
        "page refused: no page with id 3" in out and "stopped: tool_error · 1 call · 3 left this hour" in out
    )
    assert (
        "there is no tool named 'weather'" in out
        and "stopped: tool_error · 1 call proposed: 0 ran, 1 invalid · 3 left this hour" in out
    )
    assert done.stderr == ""  # no banner, no noise when stdin is not a terminal


def test_help_after_calls_states_the_limit_and_never_a_count_its_status_line_contradicts(work: Path) -> None:
    done = venice_agent("chat", "--db", "bot.db", stdin="list_files\nlist_files path=docs\nhelp\n", cwd=work)
    assert done.returncode == 0, done.stderr
    help_reply = done.stdout.split("stopped: answered · 1 call · 3 left this hour\n")[-1]
    assert "a chat may make 5 tool calls an hour (the last line of every reply says how many are left)" in (
        " ".join(help_reply.split())
    )
    assert "you have" not in help_reply
    assert help_reply.rstrip().endswith("stopped: answered · 0 calls · 3 left this hour")


def test_the_budget_carries_over_to_the_next_session(work: Path) -> None:
    first = venice_agent(
        "chat", "--chat", "me", "--db", "bot.db", stdin="list_files\nlist_files path=docs\n", cwd=work
    )
    assert first.returncode == 0, first.stderr
    second = venice_agent(
        "chat", "--chat", "me", "--db", "bot.db", "--calls", "3",
        stdin="read_file path=notes.txt\nlist_files path=.\n", cwd=work,
    )  # fmt: skip
    assert "stopped: answered · 1 call · 0 left this hour" in second.stdout
    assert "come back in 1 hour" in second.stdout
    other = venice_agent("chat", "--chat", "you", "--db", "bot.db", stdin="list_files\n", cwd=work)
    assert "4 left this hour" in other.stdout  # budgets are per conversation


def test_quit_leaves_and_nothing_after_it_runs(work: Path) -> None:
    done = venice_agent("chat", "--db", "bot.db", stdin="list_files\n/quit\nlist_files path=docs\n", cwd=work)
    assert done.returncode == 0
    assert done.stdout.count("stopped:") == 1


def test_logs_lists_past_runs_newest_last(work: Path) -> None:
    venice_agent("chat", "--chat", "me", "--db", "bot.db", stdin="list_files\nnope\nhelp\n", cwd=work)
    done = venice_agent("logs", "--db", "bot.db", "-n", "2", cwd=work)
    assert done.returncode == 0, done.stderr
    heads = [line for line in done.stdout.splitlines() if line.startswith("#")]
    assert len(heads) == 2
    assert heads[0].startswith("#2 ") and "chat me  tool_error · 0 calls · " in heads[0]
    assert (
        heads[1].startswith("#3 ")
        and "chat me  answered · 0 calls · " in heads[1]
        and heads[1].endswith(" s")
    )
    assert "    > nope" in done.stdout and "    < there is no tool named 'nope'" in done.stdout

    as_json = json.loads(venice_agent("logs", "--db", "bot.db", "--json", cwd=work).stdout)
    assert [run["question"] for run in as_json] == ["list_files", "nope", "help"]
    assert as_json[0]["receipt"]["steps"][0]["tool"] == "list_files"
    assert {run["stopped_because"] for run in as_json} == {"answered", "tool_error"}


def test_logs_without_a_store_says_so_and_creates_nothing(work: Path) -> None:
    env = clean_env(XDG_DATA_HOME=str(work / "data"))
    done = venice_agent("logs", cwd=work, env=env)
    assert done.returncode == 0 and done.stdout == ""
    assert "no runs recorded yet" in done.stderr
    assert not (work / "data").exists()
    assert venice_agent("logs", "--json", cwd=work, env=env).stdout == "[]\n"


def test_chat_uses_the_user_data_folder_by_default(work: Path) -> None:
    env = clean_env(XDG_DATA_HOME=str(work / "data"))
    done = venice_agent("chat", "--chat", "me", stdin="list_files\n", cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    assert (work / "data" / "venice-agent" / "venice-agent.db").is_file()
    assert "list_files" in venice_agent("logs", cwd=work, env=env).stdout


@pytest.mark.parametrize("command", ["chat", "logs"])
def test_a_corrupt_store_is_a_clear_error_and_left_alone(work: Path, command: str) -> None:
    (work / "bot.db").write_bytes(b"not sqlite" * 100)
    done = venice_agent(command, "--db", "bot.db", stdin="list_files\n", cwd=work)
    assert done.returncode == 2
    assert "bot.db is not a usable venice-agent store" in done.stderr and "left untouched" in done.stderr
    assert "Traceback" not in done.stderr
    assert (work / "bot.db").read_bytes() == b"not sqlite" * 100


async def test_with_a_key_the_model_plans_and_a_repeat_costs_no_request(work: Path) -> None:
    mcp = work / "mcp.json"
    time_server = {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}
    mcp.write_text(json.dumps({"mcpServers": {"time": time_server}}))
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "You need to buy milk."},
        {"text": "Hello!"},
    ]
    async with FakeVenice(script) as fake:
        env = clean_env(VENICE_API_KEY="test-key", VENICE_BASE_URL=fake.base_url, VENICE_MODEL="fake-model")
        process = await asyncio.create_subprocess_exec(
            str(BIN / "venice-agent"), "chat", "--chat", "me", "--db", "bot.db", "--mcp-config", str(mcp),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, env=env,
        )  # fmt: skip
        stdin = b"what is on my list?\nwhat is on my list?\nhi\n"
        out, err = await asyncio.wait_for(process.communicate(stdin), 120)
        assert process.returncode == 0, err.decode()
        assert len(fake.chat_requests) == 3  # the repeated question never reached the model
    text = out.decode()
    assert "You need to buy milk.\nstopped: answered · 1 call · 4 left this hour" in text
    assert (
        "You need to buy milk.\nsame message as before: previous answer (stopped: answered), no call · 4 left this hour"
        in text
    )
    assert "Hello!\nstopped: answered · 0 calls · 4 left this hour" in text
    assert "test-key" not in text + err.decode()


async def test_chat_takes_base_url_and_model_as_ask_does(work: Path) -> None:
    # Both from the flags alone: the environment names a server where nothing listens.
    async with FakeVenice([{"text": "Hi from the local model."}]) as fake:
        env = clean_env(VENICE_API_KEY="k", VENICE_BASE_URL="http://127.0.0.1:9", VENICE_MODEL="other")
        flags = ("--base-url", fake.base_url, "--model", "fake-model", "--no-mcp", "--db", "bot.db")
        process = await asyncio.create_subprocess_exec(
            str(BIN / "venice-agent"), "chat", *flags,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, env=env,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(b"hi\n"), 120)
        assert process.returncode == 0, err.decode()
        assert [body["model"] for body in fake.chat_requests] == ["fake-model"]
    assert "Hi from the local model.\nstopped: answered" in out.decode()


def names_in(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


async def run_process(*args: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(BIN / "venice-agent"), *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=cwd, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_logs_after_one_shot_questions_recorded_only_when_asked(work: Path) -> None:
    mcp = work / "mcp.json"
    time_server = {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}
    mcp.write_text(json.dumps({"mcpServers": {"time": time_server}}))
    replies = [
        {"text": "Paris.", "usage": {"cost": {"usd": 0.0031, "diem": 0}}},  # the server's own figure
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Buy milk."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "I could not read your list this time."},  # the partial answer after the budget stop
        {"text": "Not kept anywhere."},
    ]
    # Otherwise priced from /models: 10 prompt and 5 completion tokens a request, $1 and $2 a million.
    pricing = {"pricing": {"input": {"usd": 1}, "output": {"usd": 2}}}
    async with FakeVenice({"replies": replies, "model_spec": pricing}) as fake:
        env = clean_env(VENICE_API_KEY="test-key", VENICE_BASE_URL=fake.base_url, VENICE_MODEL="fake-model")
        ask = ("--mcp-config", str(mcp))
        assert (await run_process("capital of France?", *ask, "--db", "agent.db", cwd=work, env=env))[0] == 0
        with_env = {**env, "VENICE_AGENT_DB": str(work / "agent.db")}
        assert (await run_process("what is on my list?", *ask, cwd=work, env=with_env))[0] == 0
        status, _, _ = await run_process(
            "list again", *ask, "--budget", "0", "--db", "agent.db", cwd=work, env=env
        )
        assert status == 3  # budget: the call was stopped before it ran
        files_before = names_in(work)
        assert (await run_process("not recorded", *ask, cwd=work, env=env))[0] == 0
        assert names_in(work) == files_before  # no opt-in, nothing on disk

    done = venice_agent("logs", "--db", "agent.db", cwd=work)
    assert done.returncode == 0, done.stderr
    heads = [line for line in done.stdout.splitlines() if line.startswith("#")]
    assert len(heads) == 3
    assert "agent  answered · 0 calls · " in heads[0] and heads[0].endswith(" s · $0.0031 · fake-model")
    assert "agent  answered · 1 call · " in heads[1] and " · $0.00004 · " in heads[1]
    assert "agent  budget · 0 calls · " in heads[2] and " · $0.00004 · " in heads[2]
    assert done.stdout.splitlines()[-1] == "total: $0.0032 over 3 runs"
    assert "    > capital of France?" in done.stdout and "    < Paris." in done.stdout
    runs = json.loads(venice_agent("logs", "--db", "agent.db", "--json", "-n", "1", cwd=work).stdout)
    assert [run["question"] for run in runs] == ["list again"]
    assert runs[0]["receipt"]["stopped_because"] == "budget" and runs[0]["source"] == "agent"
    assert "test-key" not in (work / "agent.db").read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("argv", [["--help"], ["chat", "--help"], ["logs", "--help"]])
def test_help_imports_neither_sqlite_nor_the_model_nor_mcp(argv: list[str]) -> None:
    probe = (
        "import sys\n"
        f"sys.argv = {['venice-agent', *argv]!r}\n"
        "from venice_terminal_agent.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sqlite3', 'openai', 'mcp', 'typer'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "['typer']"


def test_two_processes_on_one_store_share_the_hour(work: Path) -> None:
    """Two `chat` processes talking in the same conversation at once: five calls in all."""
    command = [str(BIN / "venice-agent"), "chat", "--chat", "shared", "--db", "bot.db"]
    processes = [
        subprocess.Popen(command, stdin=PIPE, stdout=PIPE, stderr=PIPE, cwd=work, env=clean_env())
        for _ in range(2)
    ]
    # Texts differ between the processes and alternate within each, so no message repeats the previous one.
    scripts = [
        f"read_file path={prefix}notes.txt\nlist_files path={prefix}docs\n" * 5 for prefix in ("", "./")
    ]
    outputs = [
        process.communicate(script.encode(), timeout=120)[0].decode()
        for process, script in zip(processes, scripts, strict=True)
    ]
    assert all(process.returncode == 0 for process in processes)
    ran = sum(out.count(" · 1 call · ") for out in outputs)
    assert ran == 5
    assert sum(out.count("come back in 1 hour") for out in outputs) == 20 - ran


def test_chat_in_a_real_terminal(work: Path) -> None:
    import pexpect

    child = pexpect.spawn(
        str(BIN / "venice-agent"), ["chat", "--chat", "me", "--db", "bot.db"], env=clean_env(), cwd=str(work),
        encoding="utf-8", timeout=30, dimensions=(40, 120),
    )  # fmt: skip
    try:
        child.expect_exact("chat 'me' · planned by commands (no model: type help) · 5 tool calls an hour")
        child.expect_exact("›")
        child.sendline("read_file path=notes.txt")
        child.expect_exact("→ read_file(")  # each call as it starts
        child.expect_exact("buy milk")
        child.expect_exact("stopped: answered · 1 call · 4 left this hour")
        child.expect_exact("›")
        child.sendline("page id=4")
        child.expect_exact("stopped: tool_error · 1 call · 3 left this hour")
        child.expect_exact("›")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_a_store_in_a_read_only_folder_or_at_a_folder_is_one_line_and_status_2(work: Path) -> None:
    locked = work / "locked"
    locked.mkdir()
    for args in (["chat", "--chat", "me"], ["logs"]):
        for db, reason in (
            (locked, "it is a folder, not a file"),
            (locked / "bot.db", f"the folder {locked} is not writable"),
        ):
            command = in_read_only_folder(locked, [str(BIN / "venice-agent"), *args, "--db", str(db)])
            done = subprocess.run(command, input="help\n", capture_output=True, text=True, timeout=120,
                                  env=clean_env(), cwd=work)  # fmt: skip
            if args == ["logs"] and db != locked:  # reading creates nothing: no file, no runs yet
                assert done.returncode == 0 and "no runs recorded yet" in done.stderr
                continue
            assert done.returncode == 2, done.stderr
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
            assert f"cannot open the store {db}: {reason}" in done.stderr
    assert list(locked.iterdir()) == []


def test_a_secret_the_model_repeats_is_masked_in_the_chat_store(tmp_path: Path) -> None:
    """`chat` keeps its conversations in a store: an answer repeating a secret of the run (the
    key here; any MCP server's header or env alike) is kept masked."""
    from cli_support import fake_venice, run_cli

    key = "venice-key-for-chat-4242"
    with fake_venice([{"text": f"The key is {key}."}], tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "chat", "--chat", "me", "--db", "bot.db", "--no-mcp",
            stdin=f"is {key} mine?\n", VENICE_API_KEY=key,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = list(tmp_path.glob("bot.db*"))
    assert written and b"The key is ***." in (tmp_path / "bot.db").read_bytes()
    for path in written:
        assert key.encode() not in path.read_bytes(), path
