"""`uv run --group test pytest` on a fresh machine: the npm servers install themselves once, through the
same script `.ci/run` uses; without npm the run ends with one line naming what was skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# A pytest run of the suite's conftest on a few files of its own: without Hypothesis's plugin,
# which none of them uses and which is half of such a run's CPU (about 0.5 s of imports each).
INNER = ("-p", "conftest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def fresh_clone(tmp_path: Path) -> Path:
    """The script and the lock file, as a fresh clone has them, and no `.tools`."""
    (tmp_path / "tests" / "node" / "next").mkdir(parents=True)
    (tmp_path / "tests" / "node" / "filesystem").mkdir()
    (tmp_path / "tests" / "node" / "inspector").mkdir()
    for name in (
        "install",
        "package.json",
        "package-lock.json",
        "next/package.json",
        "next/package-lock.json",
        "filesystem/package.json",
        "filesystem/package-lock.json",
        "inspector/package.json",
        "inspector/package-lock.json",
    ):
        shutil.copy2(TESTS / "node" / name, tmp_path / "tests" / "node" / name)
    return tmp_path / "tests" / "node" / "install"


def fake_npm(folder: Path) -> Path:
    """An `npm` that records its arguments and creates node_modules, as `npm ci` would."""
    folder.mkdir()
    npm = folder / "npm"
    npm.write_text(f'#!/bin/sh\necho "$@" >> {folder / "calls"}\nmkdir -p node_modules\n')
    npm.chmod(0o755)
    return folder


def test_the_servers_are_installed_once_and_without_npm_it_says_so(tmp_path: Path) -> None:
    install = fresh_clone(tmp_path)
    basics = tmp_path / "basics"  # what the script needs, and no npm
    basics.mkdir()
    for tool in ("sh", "dirname", "cmp", "cp", "rm", "mkdir"):
        (basics / tool).symlink_to(shutil.which(tool) or tool)
    bare = {"PATH": str(basics)}
    done = subprocess.run([str(install)], capture_output=True, text=True, env=bare, check=False)
    assert (done.returncode, done.stderr.strip()) == (
        3,
        "npm is not on this machine (install Node.js and npm)",
    )

    tools = fake_npm(tmp_path / "fakebin")
    env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    for _ in range(2):
        done = subprocess.run([str(install)], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
    assert (tools / "calls").read_text().splitlines() == ["ci --no-audit --no-fund --loglevel=error"] * 4
    assert (tmp_path / ".tools" / "node" / "node_modules").is_dir()
    assert (tmp_path / ".tools" / "node-next" / "node_modules").is_dir()
    assert (tmp_path / ".tools" / "node-filesystem" / "node_modules").is_dir()
    assert (tmp_path / ".tools" / "node-inspector" / "node_modules").is_dir()


@pytest.mark.slow  # two whole pytest runs in a fresh clone
def test_a_first_run_says_on_the_terminal_what_it_installs_and_how_big_before_the_wait(
    tmp_path: Path,
) -> None:
    install = fresh_clone(tmp_path)
    shutil.copy2(TESTS / "conftest.py", install.parents[1] / "conftest.py")
    (install.parents[1] / "test_one.py").write_text("def test_one():\n    pass\n")
    tools = fake_npm(tmp_path / "fakebin")
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("venice-agent tests: installing")]
    assert len(said) == 4, done.stderr  # .tools/node, node-next, node-filesystem, node-inspector
    assert "Node 22 and the npm MCP test servers" in said[0] and "into .tools/node " in said[0]
    assert all(" MB)" in line for line in said)
    again = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert again.returncode == 0 and "installing" not in again.stderr  # once: then nothing to say


def test_a_run_with_skipped_tests_ends_with_one_line_saying_why(tmp_path: Path) -> None:
    (tmp_path / "test_needs.py").write_text(
        "import pytest\n\n"
        "def test_a():\n    pytest.skip('npm test servers are not installed (Node 22 missing)')\n\n"
        "def test_b():\n    pytest.skip('npm test servers are not installed (Node 22 missing)')\n\n"
        "def test_c():\n    pytest.skip('redis-server is not installed')\n\n"
        "def test_d():\n    pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *INNER, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "skipped 3 tests: 2 npm test servers are not installed (Node 22 missing); "
        "1 redis-server is not installed"
    ) in done.stdout.splitlines()


def test_the_whole_suite_is_the_fast_tier_and_the_slow_tier_runs_on_request(tmp_path: Path) -> None:
    """`pytest` with no paths leaves the `slow` tests out and says how many and how to run them,
    under xdist too (the workers collect, the controller prints); `-m slow` runs them alone; a
    file named on the command line runs whatever its tier."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = .\nmarkers =\n    slow: the slow tier\n")
    (tmp_path / "test_tiers.py").write_text(
        "import pytest\n\n"
        "def test_fast():\n    pass\n\n"
        "@pytest.mark.slow\ndef test_slow():\n    pass\n\n"
        "@pytest.mark.slow\ndef test_slow_too():\n    pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS)}

    def pytest_run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *INNER, *args],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    said = "the fast tier: 2 slow tests left out (`pytest -m slow` runs them; CI runs both)"
    for workers in ("0", "2"):
        out = pytest_run("-n", workers, "-rA")
        assert "PASSED test_tiers.py::test_fast" in out and "test_slow" not in out, out
        assert said in out.splitlines(), out
    out = pytest_run("-n", "0", "-rA", "-m", "slow")
    assert "test_fast" not in out and "PASSED test_tiers.py::test_slow_too" in out, out
    assert "fast tier" not in out
    out = pytest_run("-n", "0", "-rA", "test_tiers.py")
    assert "2 slow tests" not in out and out.count("PASSED") == 3, out


def test_a_whole_run_starts_with_the_tests_that_took_longest_last_time(tmp_path: Path) -> None:
    """So that no worker picks up a long test when the others have finished: the order comes
    from pytest's cache, where every whole run leaves each test's seconds."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = .\n")
    (tmp_path / "test_order.py").write_text("".join(f"def test_{name}():\n    pass\n\n" for name in "abcd"))
    durations = tmp_path / ".pytest_cache" / "v" / "venice-agent" / "durations"
    durations.parent.mkdir(parents=True)
    durations.write_text(
        json.dumps({"test_order.py::test_c": 5.0, "test_order.py::test_b": 1.0, "gone": 9.0})
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:hypothesispytest", "-n", "0", "-v"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.findall(r"test_order\.py::test_(\w) PASSED", done.stdout)
    assert ran == ["c", "b", "a", "d"], done.stdout  # unknown ones keep their order, after
    took = json.loads(durations.read_text())
    assert set(took) == {"gone", *(f"test_order.py::test_{name}" for name in "abcd")}
    assert all(isinstance(seconds, float) for seconds in took.values())


def test_the_stores_the_examples_make_are_ignored_by_git() -> None:
    """The README's and --help's examples make stores in the working folder (bot.db, runs.db)
    and SQLite its side files beside them; none of them shows up as a change in a clone."""
    made = ["bot.db", "runs.db", "bot.db-wal", "bot.db-shm", "bot.db-journal", "docs/x.db"]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *made],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.split() == made, done.stderr


def test_the_manuals_chat_example_leaves_nothing_in_the_working_folder(tmp_path: Path) -> None:
    page = (TESTS.parent / "docs" / "bot.md").read_text(encoding="utf-8")
    example = next(line for line in page.splitlines() if line.startswith("printf 'list_files\\n"))
    work = tmp_path / "clone"
    work.mkdir()
    (work / "README.md").write_text("# a clone\n")
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        ["bash", "-c", example], cwd=work, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "# a clone" in done.stdout
    assert sorted(path.name for path in work.iterdir()) == ["README.md"]


TEST_TOOLS = ("pytest", "playwright", "mypy", "ruff", "hypothesis", "pexpect")


def test_the_first_command_installs_the_agent_alone_and_the_test_command_the_tests_tools(
    tmp_path: Path,
) -> None:
    """A fresh clone's `uv run venice-agent …` installs what the agent needs, no test tool; the
    README's test command brings those (a dependency group that `uv run` leaves out unless
    asked). Read from the lock file by `uv export`, which lists what `uv run` would install with
    the same group flags: no download, no cache needed (an offline install from the cache
    failed now and then when the cache had been filled by another checkout)."""
    uv = shutil.which("uv")
    if uv is None:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)("uv is not on PATH")
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("pyproject.toml", "uv.lock", "README.md", "src", "examples"):
        source = TESTS.parent / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, clone / name)
    env = {**os.environ, "UV_OFFLINE": "1"}
    for name in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"):
        env.pop(name, None)

    def installed_by(*flags: str) -> set[str]:
        done = subprocess.run(
            [uv, "export", "--frozen", "--no-hashes", "--no-header", "--no-emit-project", *flags],
            cwd=clone, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        names = (line.split("==")[0].strip().lower() for line in done.stdout.splitlines())
        return {name.replace("_", "-") for name in names if name and not name.startswith(("#", "-"))}

    readme = (TESTS.parent / "README.md").read_text(encoding="utf-8")
    first_command, test_command = (
        line.split("#")[0].split() for line in readme.split("```sh\n", 1)[1].splitlines()[:2]
    )
    assert first_command[:3] == ["uv", "run", "venice-agent"], first_command
    agent = installed_by()  # `uv run` with no group flag: the default groups
    assert {"mcp", "typer", "httpx2"} <= agent
    assert not agent & set(TEST_TOOLS), agent & set(TEST_TOOLS)

    assert test_command[:2] == ["uv", "run"] and test_command[-1] == "pytest", test_command
    assert set(TEST_TOOLS) <= installed_by(*test_command[2:-1])
