"""`venice-agent demo`: the agent tried with no key and no network, from any folder, by the
command alone: its stand-in model and MCP server come with it, and so does its tour.

Each test runs the real command in a folder that is not the clone, with no key, and with the
model server's URL on a port where nothing listens: the demo must need neither. The installed
command itself (a wheel in a fresh environment) is tried in the slow tier, last.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from cli_support import COMMAND, TESTS, clean_env, run_cli
from test_readme_examples import check_the_demo_block
from test_repl_pty import ANSI, PROMPT

NOWHERE = "http://127.0.0.1:9"  # nothing listens there: the demo uses its own stand-in
# The user's own settings, which the demo must neither use nor write to.
USER_SETTINGS = {"VENICE_API_KEY": None, "VENICE_MODEL": "their-model", "VENICE_AGENT_SESSIONS": "1"}


def demo(folder: Path, *args: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """`venice-agent demo ARGS` in `folder`, without a terminal, with the user's settings."""
    work = folder / "somewhere"
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("my notes\n")
    settings = {**USER_SETTINGS, "VENICE_AGENT_DB": str(folder / "runs.db"), **env}
    return run_cli(folder, NOWHERE, "demo", *args, cwd=work, **settings)


def nothing_saved(folder: Path) -> None:
    assert not (folder / "runs.db").exists()  # the user's store for `logs`
    assert not list((folder / "data").rglob("sessions*"))  # their sessions, on in their settings


def test_the_tour_runs_the_plan_shipped_in_the_package_from_any_folder(tmp_path: Path) -> None:
    done = demo(tmp_path, "--tour")
    assert done.returncode == 0, done.stderr
    assert "→ list_files" in done.stdout and '→ read_file({"path": "core/exits.py"})' in done.stdout
    assert "→ page" in done.stdout and "core/exits.py names every way a run can stop" in done.stdout
    assert done.stdout.endswith("stopped: answered · 3 calls · 4 rounds\n")
    assert done.stderr == ""
    plain = demo(tmp_path, "--tour", "--json")
    assert json.loads(plain.stdout)["stopped_because"] == "answered"
    refused = demo(tmp_path, "--tour", "what?")
    assert refused.returncode == 2
    assert refused.stderr == "venice-agent: demo --tour runs a plan: it takes no question and asks nothing\n"
    unasked = demo(tmp_path, "--json")
    assert (unasked.returncode, unasked.stderr) == (
        2,
        'venice-agent: demo --json needs a question: venice-agent demo --json "question"\n',
    )


def test_a_question_without_a_terminal_runs_the_read_only_tool_and_asks_nobody(tmp_path: Path) -> None:
    done = demo(tmp_path, "what can you do?")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("venice-agent demo: a stand-in model on 127.0.0.1 plays a script")
    assert "model  stand-in" in done.stderr and "apify  not used (MCP servers: demo)" in done.stderr
    assert "skipped pretend_purchase: it needs your consent, and there is no terminal" in done.stderr
    assert '→ list_files({})\n  ✓ ["notes.txt"]' in done.stderr
    assert "That was the agent's loop, played by a stand-in" in done.stdout
    receipt = done.stdout.splitlines()[-1]
    assert receipt.startswith("stopped: answered · 2 calls proposed: 1 ran, 1 not run (no one to ask)")
    assert "$0.0000" in receipt  # the stand-in publishes prices: the receipt has a cost
    nothing_saved(tmp_path)


def test_yes_runs_the_pretend_paid_tool_and_json_prints_the_receipt(tmp_path: Path) -> None:
    done = demo(tmp_path, "--yes", "--json", "buy me a coffee")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["stopped_because"] == "answered" and receipt["model"] == "stand-in"
    purchase, listing = receipt["steps"]
    assert purchase["tool"] == "pretend_purchase" and "nothing was bought" in purchase["result"]
    assert listing == {"tool": "list_files", "arguments": {}, "result": ["notes.txt"], "error": None}
    assert receipt["cost_usd"] > 0
    nothing_saved(tmp_path)


def test_the_repl_asks_before_the_pretend_paid_tool_and_shows_the_receipt(tmp_path: Path) -> None:
    work = tmp_path / "somewhere"
    work.mkdir()
    env = clean_env(tmp_path, NOWHERE, VENICE_MODEL="their-model")
    del env["VENICE_API_KEY"]
    child = pexpect.spawn(
        COMMAND, ["demo"], cwd=str(work), env=env, encoding="utf-8", dimensions=(40, 160), timeout=30
    )

    def expect(text: str) -> str:
        child.expect_exact(text)
        return ANSI.sub("", child.before)

    expect(PROMPT)
    child.sendline("hello")
    expect("pretend_purchase on demo is not known to be free: it may spend money or change things.")
    expect('Run pretend_purchase({"item": "a coffee"})? [y/N]')
    child.sendline("y")
    assert "nothing was bought" in expect("→ list_files({})")
    assert "played by a stand-in" in expect("stopped: answered · 2 calls · 3 rounds")
    expect(PROMPT)
    child.sendline("again")  # the next question plays the script from its start
    # The folder's listing is in the conversation now: a tool that leaves the machine asks for that.
    expect('pretend_purchase({"item": "a coffee"}) may send local file contents off this machine. Run it?')
    child.sendline("n")
    expect("declined pretend_purchase")
    expect("stopped: answered · 2 calls proposed: 1 ran, 1 declined · 3 rounds")
    expect(PROMPT)
    child.sendline("/recipt")
    expect("unknown command /recipt; did you mean /receipt? (/help lists them)")
    expect(PROMPT)
    child.sendline("/receipt")
    assert '"tool": "pretend_purchase"' in expect('"outcome": "declined"')
    expect(PROMPT)
    child.sendeof()  # Ctrl+D leaves
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.slow
def test_the_installed_command_runs_the_first_screens_demo_from_any_folder(tmp_path: Path) -> None:
    """The wheel as `uv build` makes it, installed in a fresh environment outside the clone with
    the project's locked packages (offline, from uv's cache): no examples folder, no clone on
    the path. The README's demo block runs as written from a folder of its own."""
    uv = shutil.which("uv")
    if uv is None:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)("uv is not on PATH")
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("pyproject.toml", "uv.lock", "README.md"):
        shutil.copy2(TESTS.parent / name, clone / name)
    shutil.copytree(TESTS.parent / "src", clone / "src", ignore=shutil.ignore_patterns("__pycache__"))
    installed = tmp_path / "installed"
    env = {**os.environ, "UV_OFFLINE": "1", "UV_PROJECT_ENVIRONMENT": str(installed)}
    env.pop("VIRTUAL_ENV", None)
    env.setdefault("UV_CACHE_DIR", real_uv_cache(uv))  # the packages are there, not in this test's home

    def uv_run(*args: str) -> None:
        done = subprocess.run([uv, *args], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    uv_run("build", "--wheel", "--out-dir", str(tmp_path / "dist"))
    uv_run("sync", "--frozen", "--no-install-project", "--python", sys.executable)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    uv_run(
        "pip", "install", "--no-cache", "--python", str(installed / "bin" / "python"), "--no-deps", str(wheel)
    )
    shutil.rmtree(clone)  # nothing of the clone is left to lean on
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check_the_demo_block(elsewhere, installed / "bin")
    missing = subprocess.run(
        [installed / "bin" / "venice-agent", "run", "examples/tour.json"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert missing.returncode == 2 and "venice-agent demo --tour runs the tour" in missing.stderr


def real_uv_cache(uv: str) -> str:
    """uv's cache as the person running the tests has it: each test has a home of its own (and
    under xdist even the session's HOME is one), so the home is the account's, from passwd."""
    import pwd

    env = {name: value for name, value in os.environ.items() if name != "XDG_CACHE_HOME"}
    env["HOME"] = pwd.getpwuid(os.getuid()).pw_dir
    done = subprocess.run([uv, "cache", "dir"], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()
