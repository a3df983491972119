"""Plant known bugs one at a time and report which of them the test suite catches.

    uv run python benchmarks/mutants.py            # every mutant
    uv run python benchmarks/mutants.py -k begin   # those whose name contains "begin"

Each mutant is one exact text replacement in one source file, made in a copy of `src/` in a
temporary folder (the working tree is never touched), and the test files that should catch it
run against that copy (PYTHONPATH puts it first, for subprocess tests too). A mutant is
"caught" when those tests fail. A replacement whose text is no longer in the file is reported
as "stale": the code moved, and the mutant needs updating, not ignoring.

The list starts with the bugs a review planted that got through the suite (issue 11).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "src/venice_terminal_agent"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # under src/venice_terminal_agent/
    old: str
    new: str
    tests: tuple[str, ...]  # the test files that must catch it


MUTANTS = [
    Mutant(
        "an approver that raises is taken as a yes",
        "core/consent.py",
        "                # question is not an answer and goes on up.\n                answer = False\n",
        "                # question is not an answer and goes on up.\n                answer = True\n",
        ("tests/test_agent.py", "tests/test_consent.py"),
    ),
    Mutant(
        "after a success the failure count is not reset",
        "core/loop.py",
        "        self.failing = set(failing)\n",
        "        self.failing |= set(failing)\n",
        ("tests/test_loop_properties.py", "tests/test_loop.py"),
    ),
    Mutant(
        "store writes committed one at a time",
        "store/worker.py",
        "MAX_BATCH = 128",
        "MAX_BATCH = 1",
        ("tests/test_store_concurrency.py", "tests/test_store.py"),
    ),
    Mutant(
        "BEGIN IMMEDIATE replaced by a deferred BEGIN",
        "store/worker.py",
        '                db.execute("BEGIN IMMEDIATE")',
        '                db.execute("BEGIN")',
        ("tests/test_store_concurrency.py", "tests/test_store.py", "tests/test_bot_concurrency.py"),
    ),
    Mutant(
        "the repeated-call check minds key order",
        "core/receipt.py",
        "json.dumps(value, sort_keys=True,",
        "json.dumps(value, sort_keys=False,",
        ("tests/test_loop_properties.py", "tests/test_loop.py"),
    ),
    Mutant(
        "a bug of ours passes for a model error (the client catches everything)",
        "model/client.py",
        "            except ModelError as error:  # only failed requests, translated in `_stream`\n",
        "            except Exception as error:  # every failure, ours too\n                error = describe(error)\n",
        ("tests/test_errors.py",),
    ),
    Mutant(
        "the repeated-call check looks at the first call instead of the previous one",
        "core/loop.py",
        "            self.previous = call\n",
        "            self.previous = self.previous or call\n",
        ("tests/test_loop.py", "tests/test_loop_properties.py"),
    ),
    Mutant(
        "the budget is checked after the call",
        "core/loop.py",
        "            if self.tally.calls >= self.budget:",
        "            if self.tally.calls > self.budget:",
        ("tests/test_loop.py", "tests/test_loop_properties.py"),
    ),
    Mutant(
        "a read-only tool asks for consent",
        "core/consent.py",
        "        if spec is not None and spec.read_only:\n            return None\n",
        "        if spec is not None and spec.read_only and False:\n            return None\n",
        ("tests/test_agent.py", "tests/test_consent.py"),
    ),
    Mutant(
        "an unknown page id gives an empty page",
        "core/pager.py",
        '            raise ToolError(f"no page with id {page_id!r} (known: {known})") from None',
        '            return ""',
        ("tests/test_builtin_tools.py", "tests/test_bot.py"),
    ),
    # Issue 39: four slips that went through the whole fast tier before their tests.
    Mutant(
        "--yes approves a server's sampling request as it approves tool calls",
        "core/consent.py",
        "        verdict = await self._ask(\n            request, ToolSpec(request.tool, server=server), Why.SAMPLING,",
        "        if self.auto_approve:\n            return True\n"
        "        verdict = await self._ask(\n            request, ToolSpec(request.tool, server=server), Why.SAMPLING,",
        ("tests/test_consent.py",),
    ),
    Mutant(
        "a terminal under --yes offers servers sampling",
        "fronts/terminal/person.py",
        "        return not yes and has_terminal(sys.stderr)",
        "        return has_terminal(sys.stderr)",
        ("tests/test_mcp_sampling_pty.py",),
    ),
    Mutant(
        "a terminal under --yes shows servers' forms",
        "fronts/terminal/person.py",
        "        if yes or not has_terminal(sys.stderr):  # --yes never answers a server's question",
        "        if not has_terminal(sys.stderr):",
        ("tests/test_mcp_sampling_pty.py",),
    ),
    Mutant(
        "only text results are paged: a long list or object reaches the model whole",
        "core/loop.py",
        "        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)\n",
        "        if not isinstance(result, str):\n            return result\n        text = result\n",
        ("tests/test_loop.py", "tests/test_agent.py"),
    ),
    Mutant(
        "an attestation without a nonce passes (the nonce checked only when present)",
        "model/private.py",
        '    if report.get("nonce") != nonce:',
        '    if report.get("nonce") is not None and report.get("nonce") != nonce:',
        ("tests/test_e2ee.py",),
    ),
    Mutant(
        "the Redis budget counts every call its ledger keeps (a day), not the rolling hour",
        "store/redis_store.py",
        "local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES')",
        "local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '+inf', 'WITHSCORES')",
        ("tests/test_budget_window.py",),
    ),
    Mutant(
        "the SQLite budget counts every call its ledger keeps, not the rolling hour",
        "store/sqlite.py",
        '"SELECT coalesce(sum(calls), 0) FROM ledger WHERE chat = ? AND at > ?", (chat, now - window)',
        '"SELECT coalesce(sum(calls), 0) FROM ledger WHERE chat = ? AND at > ?", (chat, 0)',
        ("tests/test_budget_window.py",),
    ),
]


def run(mutant: Mutant, workdir: Path) -> tuple[str, float, str]:
    source = workdir / "src"
    if source.exists():
        shutil.rmtree(source)
    shutil.copytree(ROOT / "src", source, ignore=shutil.ignore_patterns("__pycache__"))
    target = source / "venice_terminal_agent" / mutant.file
    text = target.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        return "stale", 0.0, ""
    target.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            *mutant.tests,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - started
    failed = [
        line.split(" ", 1)[1].split(" - ")[0]
        for line in done.stdout.splitlines()
        if line.startswith("FAILED ")
    ]
    by = f"by {failed[0]}" if failed else ""
    return ("caught" if done.returncode != 0 else "MISSED"), took, by


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only the mutants whose name contains this")
    chosen = [m for m in MUTANTS if parser.parse_args().k.lower() in m.name.lower()]
    missed = 0
    with tempfile.TemporaryDirectory(prefix="mutants-") as folder:
        for mutant in chosen:
            verdict, took, by = run(mutant, Path(folder))
            missed += verdict != "caught"
            print(f"{verdict:7} {took:6.1f} s  {mutant.name} ({mutant.file})  {by}".rstrip(), flush=True)
    print(f"{len(chosen) - missed} of {len(chosen)} planted bugs caught")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
