"""The whole suite from one command: `uv run pytest` on a fresh machine.

Before the first test, the pinned npm servers are installed into `.tools/node` when missing
or out of date (`tests/node/install`, the script `.ci/run` runs too). A run that skipped tests
ends with one line saying how many and why, visible even under `-q`, which hides the reasons.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

INSTALL = Path(__file__).resolve().parent / "node" / "install"
NO_NPM = 3  # the install script's status when npm is not on the machine
_NPM_KEY = pytest.StashKey[str]()


def pytest_sessionstart(session: Any) -> None:
    done = subprocess.run([str(INSTALL)], capture_output=True, text=True, check=False)
    if done.returncode == NO_NPM:
        session.config.stash[_NPM_KEY] = done.stderr.strip()
    elif done.returncode != 0:
        session.config.stash[_NPM_KEY] = f"installing them failed: {done.stderr.strip()[-300:]}"


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
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
