"""`venice-agent batch`: questions a second against workers, and what durability costs.

Each question is one paid MCP call between two model requests, each model request taking
200 ms on the fake server (its `delay`), the paid server on loopback (tests/servers/paid_ledger.py).
For workers 1, 2, 4 and 8 it runs the same questions twice, and prints both from one run:
  - durable: `venice-agent batch FILE --workers N` on a fresh SQLite database (DBOS, the ledger,
    every step recorded), timed by its own summary line (start-up excluded: DBOS's import and
    launch are said apart, once);
  - plain: the same questions in one process without DBOS (the same runtime and agent, N at a
    time with a semaphore), on the same servers.
The ideal for one question is 0.4 s (two requests); N workers cannot beat N / 0.4 questions a second.

    uv run --group test python benchmarks/batch.py [--questions 40] [--workers 1,2,4,8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from batch_support import paid_server, questions, script  # noqa: E402
from cli_support import COMMAND, clean_env, fake_venice  # noqa: E402

LATENCY = 0.2


def durable(folder: Path, base_url: str, file: Path, config: Path, workers: int) -> tuple[float, float]:
    """(seconds the batch took by its summary, seconds the whole command took)."""
    db = f"sqlite:///{folder / f'durable-{workers}.sqlite'}"
    started = time.perf_counter()
    done = subprocess.run(
        [
            COMMAND,
            "batch",
            str(file),
            "--db",
            db,
            "--yes",
            "--no-files",
            "--no-progress",
            "--workers",
            str(workers),
            "--mcp-config",
            str(config),
            "-o",
            os.devnull,
        ],
        env=clean_env(folder, base_url, VENICE_MODEL="fake-model"),
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    whole = time.perf_counter() - started
    found = re.search(r"· ([0-9.]+) s$", done.stderr.strip())
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the batch failed ({done.returncode}): {done.stderr[-2000:]}")
    return float(found.group(1)), whole


async def plain(folder: Path, base_url: str, lines: list[str], config: Path, workers: int) -> float:
    """The same questions in this process, without DBOS: seconds they took."""
    os.environ.update(clean_env(folder, base_url, VENICE_MODEL="fake-model"))
    from venice_terminal_agent.fronts.runtime import open_runtime
    from venice_terminal_agent.fronts.settings_load import Flags, load

    settings, servers = load(Flags(mcp_config=config, yes=True, no_files=True))
    async with open_runtime(settings, servers, person=False) as runtime:
        limit = asyncio.Semaphore(workers)

        async def one(question: str) -> str:
            async with limit:
                agent = runtime.agent(runtime.consented(auto_approve=True))
                receipt = await agent.ask(question)
                return str(receipt.stopped_because)

        started = time.perf_counter()
        exits = await asyncio.gather(*(one(json.loads(line)["question"]) for line in lines))
        took = time.perf_counter() - started
    if set(exits) != {"answered"}:
        raise SystemExit(f"the plain run did not answer every question: {exits}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--workers", default="1,2,4,8")
    arguments = parser.parse_args()
    counts = [int(n) for n in arguments.workers.split(",")]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        file = questions(folder, arguments.questions)
        lines = file.read_text().splitlines()
        with fake_venice(script(delay=LATENCY), folder) as fake, paid_server(folder) as (config, _):
            rows = []
            for workers in counts:
                took, whole = durable(folder, fake.base_url, file, config, workers)
                base = asyncio.run(plain(folder, fake.base_url, lines, config, workers))
                rows.append((workers, took, whole, base))
    n = arguments.questions
    print(f"{n} questions, model latency {LATENCY * 1000:.0f} ms a request, 2 requests and 1 paid call each")
    print(
        f"{'workers':>7} {'durable q/s':>12} {'plain q/s':>10} {'ideal q/s':>10} {'durable/plain':>14} "
        f"{'cost/question':>14} {'start-up':>9}"
    )
    for workers, took, whole, base in rows:
        ideal = workers / (2 * LATENCY)
        print(
            f"{workers:>7} {n / took:>12.2f} {n / base:>10.2f} {ideal:>10.2f} {took / base:>13.2f}x "
            f"{(took - base) / n * 1000:>11.0f} ms {whole - took:>8.1f}s"
        )
    first, last = rows[0], rows[-1]
    print(
        f"scaling: {last[0]} workers answer {first[1] / last[1]:.2f}x the questions a second of "
        f"{first[0]} (ideal {last[0] / first[0]:.0f}x)"
    )


if __name__ == "__main__":
    main()
