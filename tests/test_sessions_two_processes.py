"""Two terminals on one session, as two real processes: the second forks it with a line that
says so, and each conversation is saved on its own; never two histories interleaved."""

from __future__ import annotations

import queue
import subprocess
import threading
from pathlib import Path

from cli_support import COMMAND, clean_env, fake_venice
from test_sessions_cli import KEY, Cli, ids, stored


def lines_of(stream: object) -> queue.Queue[str]:
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            found.put(line)

    threading.Thread(target=read, daemon=True).start()
    return found


def wait_for(lines: queue.Queue[str], text: str, seen: list[str]) -> str:
    while True:
        line = lines.get(timeout=30)  # a bounded wait on the process's own output
        seen.append(line)
        if text in line:
            return line


def test_the_second_process_on_a_session_forks_it_and_neither_history_mixes(tmp_path: Path) -> None:
    script = [{"text": "first answer"}, {"text": "answer to B"}, {"text": "answer to A"}]
    with fake_venice(script, tmp_path) as fake:
        run = Cli(tmp_path, fake.base_url, VENICE_AGENT_SESSIONS="1")
        assert run("the first question").returncode == 0
        (original,) = ids(tmp_path)
        first = subprocess.Popen(  # the REPL on the session, its input still open
            [COMMAND, "--mcp-config", str(run.servers), "-c"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=clean_env(tmp_path, fake.base_url, VENICE_API_KEY=KEY, VENICE_AGENT_SESSIONS="1"),
            start_new_session=True,
        )
        try:
            seen: list[str] = []
            wait_for(lines_of(first.stderr), f"resumed {original}", seen)  # a note under the banner: stderr
            second = run("-c", "question from B")
            assert second.returncode == 0, second.stderr
            assert f"session {original} is open in another terminal (process {first.pid})" in second.stderr
            (fork,) = [each for each in ids(tmp_path) if each != original]
            assert f"this run goes on in a fork, {fork}" in second.stderr
            assert first.stdin is not None
            first.stdin.write("question from A\n")
            first.stdin.close()
            assert first.wait(timeout=60) == 0
        finally:
            first.kill()
            first.wait()
            for stream in (first.stdout, first.stderr):
                assert stream is not None
                stream.close()
    mine, theirs = stored(tmp_path, original), stored(tmp_path, fork)
    assert any("question from A" in text for text in mine) and not any(
        "question from B" in text for text in mine
    )
    assert any("question from B" in text for text in theirs) and not any(
        "question from A" in text for text in theirs
    )
    assert mine[:3] == theirs[:3]  # both went on from the same stored conversation
