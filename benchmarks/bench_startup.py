"""How long `venice-agent --help` and `doctor --help` take to start, against a bare `python -c pass`.

Both run as fresh processes, alternating, in the same environment; medians are compared.
`venice-agent run` (a plan, offline) is shown too. Also checked: neither command imports the
openai or mcp SDKs (the unit test `tests/test_cli_imports.py` checks the same).

    uv run python benchmarks/bench_startup.py [--runs 30] [--warm] [--baseline SRC]

`--warm` lets Python cache bytecode (in a temporary folder) as an installed package would;
by default the environment decides (PYTHONDONTWRITEBYTECODE=1 here: every run compiles).
Target (issue 21): `--help` and `doctor --help` within 0.1 s of `python -c pass`.

`--baseline SRC`: the same commands paired against another tree's `src` folder (e.g. main's,
`git archive main src | tar -x -C /tmp/base`), run by the same interpreter with that folder
first on the path, alternating run by run; the ratio of medians is printed (issue 36: within 2%).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.1
PYTHON = sys.executable
COMMAND = str(Path(PYTHON).parent / "venice-agent")
REPO = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys, json\n"
    "sys.argv = {argv!r}\n"
    "from venice_terminal_agent.cli.app import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})), file=sys.stderr)"
)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run; CPU time shrugs off a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO, check=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def loaded(argv: list[str], env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [PYTHON, "-c", PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warm", action="store_true", help="let Python cache bytecode between runs")
    parser.add_argument("--baseline", type=Path, help="another tree's src folder, paired against this one")
    options = parser.parse_args()
    if options.baseline is not None:
        return paired(options.baseline.resolve(), options.runs, options.warm)
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ)
        if options.warm:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = folder
        commands = {
            "python -c pass": [PYTHON, "-c", "pass"],
            "venice-agent --help": [COMMAND, "--help"],
            "venice-agent doctor --help": [COMMAND, "doctor", "--help"],
            "venice-agent run examples/tour.json": [COMMAND, "run", "examples/tour.json"],
        }
        for command in commands.values():  # one untimed run each (fills the cache under --warm)
            timed(command, env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(options.runs):
            for name, command in commands.items():
                times[name].append(timed(command, env))
        heavy = {"openai", "mcp"}
        help_sdks = (
            loaded(["venice-agent", "--help"], env) | loaded(["venice-agent", "doctor", "--help"], env)
        ) & heavy
        run_sdks = loaded(["venice-agent", "run", "examples/tour.json"], env) & heavy

    wall = {name: statistics.median(sample[0] for sample in samples) for name, samples in times.items()}
    cpu = {name: statistics.median(sample[1] for sample in samples) for name, samples in times.items()}
    base = "python -c pass"
    flag = os.environ.get("PYTHONDONTWRITEBYTECODE", "")
    mode = "warm bytecode cache" if options.warm else f"PYTHONDONTWRITEBYTECODE={flag}"
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"start-up, median of {options.runs} runs each, {mode}, load average {load}")
    print(f"  {'':38} {'wall':>16}   {'cpu':>16}")
    for name in commands:
        more = "" if name == base else f"(+{wall[name] - wall[base]:.3f})"
        more_cpu = "" if name == base else f"(+{cpu[name] - cpu[base]:.3f})"
        print(f"  {name:38} {wall[name]:.3f} {more:10} s   {cpu[name]:.3f} {more_cpu:10} s")
    print(
        f"  SDKs imported by the helps: {sorted(help_sdks) or 'none'}; by run: {sorted(run_sdks) or 'none'}"
    )
    over = max(wall["venice-agent --help"], wall["venice-agent doctor --help"]) - wall[base]
    print(f"  --help and doctor --help over bare python: {over:.3f} s wall at most (target ≤ {TARGET} s)")
    return 0 if over <= TARGET and not help_sdks and not run_sdks else 1


def paired(baseline: Path, runs: int, warm: bool) -> int:
    """Each command run as `python -m venice_terminal_agent …` on this tree and on `baseline`,
    alternating; medians of wall and CPU time, and their ratios (this tree / baseline)."""
    argvs = {
        "--help": ["--help"],
        "doctor --help": ["doctor", "--help"],
        "run examples/tour.json": ["run", "examples/tour.json"],
    }
    with tempfile.TemporaryDirectory() as folder:
        # Both trees alike: no bytecode from earlier runs beside the sources is read (a tree
        # whose tests ran has it, a fresh copy has not); with --warm each fills its own cache.
        env = {**os.environ, "PYTHONPYCACHEPREFIX": folder}
        if warm:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        trees = {"this tree": dict(env), "baseline": {**env, "PYTHONPATH": str(baseline)}}
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for argv in argvs.values():  # one untimed run each (fills the cache under --warm)
            for tree_env in trees.values():
                timed([PYTHON, "-m", "venice_terminal_agent", *argv], tree_env)
        for _ in range(runs):
            for name, argv in argvs.items():
                for tree, tree_env in trees.items():
                    sample = timed([PYTHON, "-m", "venice_terminal_agent", *argv], tree_env)
                    times.setdefault((name, tree), []).append(sample)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"start-up paired against {baseline}, median of {runs} runs each, load average {load}")
    print(f"  {'':28} {'wall this/base':>24}   {'cpu this/base':>24}")
    worst = 0.0
    for name in argvs:
        mine, base = times[(name, "this tree")], times[(name, "baseline")]
        wall = [statistics.median(sample[0] for sample in side) for side in (mine, base)]
        cpu = [statistics.median(sample[1] for sample in side) for side in (mine, base)]
        worst = max(worst, cpu[0] / cpu[1])
        print(
            f"  {name:28} {wall[0]:.3f}/{wall[1]:.3f} = {wall[0] / wall[1]:.3f}   "
            f"{cpu[0]:.3f}/{cpu[1]:.3f} = {cpu[0] / cpu[1]:.3f}"
        )
    return 0 if worst <= 1.02 else 1


if __name__ == "__main__":
    sys.exit(main())
