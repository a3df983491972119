"""The whole suite from one command: `uv run --group test pytest` on a fresh machine.

Run whole (no paths given), the suite is spread over one worker process per CPU (pytest-xdist):
most tests wait on child processes (the CLI, MCP servers, Node), so workers overlap that waiting.
A run of chosen files or tests (`uv run --group test pytest tests/test_x.py -x`) stays in one process,
where starting workers would cost more than it saves; `-n N` decides either way.

Run whole without `-m`, it is the fast tier: tests marked `slow` (the conformance suites, the
MCP Inspector, llama-server, stress runs: second lines of defence, minutes each) are left out,
and the run ends saying how many; `-m slow` runs them, `.ci/run` runs both tiers. Naming a file
or a test runs it whatever its tier.

Before the first test, the pinned npm servers are installed into `.tools/node` when missing
or out of date (`tests/node/install`, the script `.ci/run` runs too). A run that skipped tests
ends with one line saying how many and why, visible even under `-q`, which hides the reasons.

No test writes into the user's home: every test runs with a HOME and XDG folders of its own
(`own_home`), and whatever starts before the first test (the browser of a module, the npm
install) with folders of the session's, so Chromium's `~/.config/chromium`, dconf's
`~/.cache/dconf` and our own user config and data land there, never in the real ones.

No test talks to anything but this machine: every socket `connect` to an internet address
fails the test that made it, whatever library made it (openai, httpx2, mcp, asyncio); loopback
(127.0.0.0/8, ::1) and Unix sockets only. Child processes are not covered: commands that might
dial out run against loopback stand-ins.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

# A suite started as a shell's background job (`.ci/run &` in a script) has SIGINT ignored, and
# every process a test starts inherits that: the tests that press Ctrl+C or send SIGINT would
# see nothing happen (an `ask` waiting out its start-up, exit 7 instead of 130). The suite's
# children start as from a terminal, SIGINT at its default; a test that wants it ignored says so.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

INSTALL = Path(__file__).resolve().parent / "node" / "install"
NO_NPM = 3  # the install script's status when npm is not on the machine
_NPM_KEY = pytest.StashKey[str]()
_HOME_KEY = pytest.StashKey[Path]()
_SLOW_KEY = pytest.StashKey[int]()  # how many `slow` tests a run of the fast tier left out
DURATIONS = "venice-agent/durations"  # pytest's cache: each test's seconds in the last whole run
_TOOK: dict[str, float] = {}  # this run's, by test id (setup, call and teardown)
WORKERS = "auto"  # one per CPU: each test runs several processes already (docs/development.md)
# Files whose tests share a module-scoped fixture too costly to build once per worker: all their
# tests go to one worker. (xdist's own `xdist_group` mark does nothing under pytest 9: xdist 3.8
# renames tests through an attribute pytest 9 no longer reads.)
# (The conformance scenarios are one test each, spread by xdist; test_acp_hostile.py sends its
# whole table of hostile lines to one `acp` process.)
ONE_WORKER = {"test_llama_server.py", "test_llama_cpp_python.py", "test_acp_hostile.py"}
HOME_FOLDERS = {  # what a test's home holds, and the variable pointing at each
    "HOME": "",
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
    "XDG_STATE_HOME": ".local/state",
    "XDG_RUNTIME_DIR": "run",  # dconf writes here, else into the cache folder
}
# The user's own, as the suite found it, never written.
REAL_HOME = os.environ.get("HOME", "")


def home_environment(home: Path) -> dict[str, str]:
    """HOME and the XDG folders inside `home`, made (the runtime folder private, as specified)."""
    env = {}
    for name, folder in HOME_FOLDERS.items():
        path = home / folder
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    (home / HOME_FOLDERS["XDG_RUNTIME_DIR"]).chmod(0o700)
    return env


def pytest_configure(config: pytest.Config) -> None:
    # Session-wide first, for what starts before any test's own fixture (module-scoped
    # browsers and servers, the npm install below); each test then gets its own (`own_home`).
    home = Path(tempfile.mkdtemp(prefix="venice-agent-tests-home-"))
    config.stash[_HOME_KEY] = home
    os.environ.update(home_environment(home))
    # Nobody answers cursor-position requests in the suite's pseudo-terminals: without this, a
    # prompt_toolkit prompt started from the suite's own environment waits out 1 s for the
    # answer at each prompt (cli_support.clean_env sets it for the commands it runs).
    os.environ["PROMPT_TOOLKIT_NO_CPR"] = "1"
    _children_run_the_mutant()


# Mutation runs (`mutmut run`, docs/development.md): mutmut copies the package and the tests into
# `mutants/`, runs pytest there with the mutated copy first on sys.path, and names the active
# mutant in MUTANT_UNDER_TEST ("stats" while it maps tests to functions). A command a test starts
# (the CLI, `serve`, `acp`) is another Python process: without this, it would import the
# unmutated package, and a mutant only the command reaches would survive, or count "no tests".
MUTATED_SOURCE = Path(__file__).resolve().parents[1] / "src"
CHILD_SITE = Path(__file__).resolve().parent / "mutation" / "site"  # its sitecustomize.py
HITS = "VENICE_MUTMUT_HITS"  # the file the children append the functions they reached to


def under_mutmut() -> bool:
    return "MUTANT_UNDER_TEST" in os.environ and MUTATED_SOURCE.parent.name == "mutants"


def _children_run_the_mutant() -> None:
    """Under mutmut, every process a test starts imports the mutated copy (PYTHONPATH, which
    `clean_env` keeps, as it keeps MUTANT_UNDER_TEST) and, while tests are mapped to functions,
    reports the functions it reached (tests/mutation/site/sitecustomize.py)."""
    if not under_mutmut():
        return
    paths = [str(CHILD_SITE), str(MUTATED_SOURCE)]
    before = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    os.environ["PYTHONPATH"] = os.pathsep.join([*paths, *(p for p in before if p and p not in paths)])
    os.environ[HITS] = str(Path(tempfile.mkdtemp(prefix="venice-agent-mutmut-")) / "hits")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """While mutmut maps tests to functions, the functions this test's children reached are
    this test's too: they join the hits mutmut's own teardown hook files under this test."""
    if os.environ.get("MUTANT_UNDER_TEST") != "stats" or HITS not in os.environ:
        return
    hits = Path(os.environ[HITS])
    if not hits.exists():
        return
    from mutmut.state import state  # only ever under mutmut

    state()._stats.update(name for name in hits.read_text(encoding="utf-8").split() if name)
    hits.unlink()


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME_KEY, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's HOME and XDG folders (beside its tmp_path, so listing that finds no home)."""
    home = tmp_path_factory.mktemp("home")
    for name, value in home_environment(home).items():
        monkeypatch.setenv(name, value)
    return home


def whole_suite(config: pytest.Config) -> bool:
    """Run with no paths or test ids (the README's command): in every xdist worker too, which
    gets the same command line."""
    return config.args_source is pytest.Config.ArgsSource.TESTPATHS


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    chosen = getattr(config.option, "numprocesses", None)  # `-n`, when xdist is loaded
    if whole_suite(config) and chosen is None and not hasattr(config, "workerinput"):
        config.option.numprocesses = WORKERS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The whole suite without `-m` is the fast tier: the `slow` tests are left out (and
    counted, for the summary). `-m slow` runs them alone, `-m "slow or not slow"` everything;
    naming a file or a test runs it whatever its tier. A whole run goes longest first (by the
    last run's durations), so no worker starts a long test when the others are done."""
    if not whole_suite(config):
        return
    took = config.cache.get(DURATIONS, {}) if getattr(config, "cache", None) else {}
    items.sort(key=lambda item: -took.get(item.nodeid, 0.0))  # stable: the same in every worker
    if config.option.markexpr:
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
        config.hook.pytest_deselected(items=slow)
    config.stash[_SLOW_KEY] = len(slow)
    if hasattr(config, "workeroutput"):  # an xdist worker: its controller prints the summary
        config.workeroutput["slow_left_out"] = len(slow)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # In the controller too, for the reports its workers send.
    _TOOK[report.nodeid] = _TOOK.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if whole_suite(config) and not hasattr(config, "workerinput") and getattr(config, "cache", None):
        # Merged: a run of one tier keeps what the other tier's tests took last time.
        config.cache.set(DURATIONS, {**config.cache.get(DURATIONS, {}), **_TOOK})


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    left_out = getattr(node, "workeroutput", {}).get("slow_left_out")
    if left_out is not None:  # every worker collects the whole suite: the same count
        node.config.stash[_SLOW_KEY] = left_out


@pytest.hookimpl(optionalhook=True)  # `-p no:xdist` must still run
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "load":
        return None  # a distribution asked for by name (`--dist loadfile`) is xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerForSharedFixtures(LoadScopeScheduling):
        """Every test its own unit, but a ONE_WORKER file is one unit; the largest units go
        first (xdist's reordering), so the conformance scenarios start at once, not last."""

        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::")[0]
            return file if file.rsplit("/", 1)[-1] in ONE_WORKER else nodeid

    return OneWorkerForSharedFixtures(config, log)


def pytest_sessionstart(session: Any) -> None:
    # One install at a time: every xdist worker (and every checkout sharing `.tools`) gets here;
    # the first installs, the others then find the lock file matching and do nothing.
    tools = INSTALL.parents[2] / ".tools"
    tools.mkdir(exist_ok=True)
    with open(tools / "node-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        returncode, said = _install(session.config, tools)
    if returncode == NO_NPM:
        session.config.stash[_NPM_KEY] = said.strip()
    elif returncode != 0:
        session.config.stash[_NPM_KEY] = f"installing them failed: {said.strip()[-300:]}"


def _install(config: Any, tools: Path) -> tuple[int, str]:
    """Run the install script; its `installing …` lines (what, where, how big) reach the
    terminal as they come, past pytest's capture, so the wait of a first run is never silent.
    npm's own cache is kept in `.tools`, not in the user's home."""
    env = {**os.environ, "npm_config_cache": str(tools / "npm-cache")}
    capture = config.pluginmanager.getplugin("capturemanager")
    process = subprocess.Popen(
        [str(INSTALL)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    said = []
    assert process.stderr is not None
    with process.stderr:
        for line in process.stderr:
            said.append(line)
            if line.startswith("installing "):
                with capture.global_and_fixture_disabled():
                    sys.stderr.write(f"venice-agent tests: {line}")
                    sys.stderr.flush()
    return process.wait(), "".join(said)


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    left_out = config.stash.get(_SLOW_KEY, 0)
    if left_out:
        terminalreporter.write_line(
            f"the fast tier: {left_out} slow tests left out (`pytest -m slow` runs them; CI runs both)",
            bold=True,
        )
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons = Counter(_reason(report) for report in skipped)
    said = "; ".join(f"{count} {why}" for why, count in reasons.most_common())
    npm = config.stash.get(_NPM_KEY, "")
    extra = f" (npm test servers not installed: {npm})" if npm else ""
    terminalreporter.write_line(f"skipped {len(skipped)} tests: {said}{extra}", yellow=True, bold=True)


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


class NetworkRefused(OSError):
    """A test tried to reach another machine."""


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return  # Unix sockets and socket pairs stay on this machine
    host = address[0] if isinstance(address, tuple) else address
    try:
        loopback = ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        loopback = str(host) == "localhost"
    if not loopback:
        raise NetworkRefused(f"tests reach 127.0.0.1 only; a test tried to connect to {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    return _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
