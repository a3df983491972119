"""What a batch shows on stderr: on a terminal, one line kept up to date (done, running, spent
of the cap, the rate); always, the summary line at the end (also `batch status`'s)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from .ledger import usd


def summary(totals: Any, elapsed: float | None = None) -> str:
    exits = ", ".join(
        f"{count} {exit}"
        for exit, count in sorted(totals.exits.items(), key=lambda item: (-item[1], item[0]))
    )
    left = totals.questions - totals.done
    parts = [f"{totals.done} of {totals.questions} questions done" + (f" ({exits})" if exits else "")]
    if left:
        parts.append(f"{left} to go")
    cap = f" of ${usd(totals.cap):.6f}" if totals.cap is not None else ""
    parts.append(f"${usd(totals.held):.6f} spent{cap}")
    if elapsed is not None:
        parts.append(f"{elapsed:.1f} s")
    return " · ".join(parts)


class Progress:
    """On a terminal (stderr): done, running, spent of the cap and the rate, on one line; the
    summary line at the end, always."""

    def __init__(
        self, shown: bool | None, batch_id: str, started: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.shown = sys.stderr.isatty() if shown is None else shown
        self.batch_id, self.started, self.clock = batch_id, started, clock
        self.first_done: int | None = None

    def show(self, totals: Any, running: int) -> None:
        if not self.shown:
            return
        if self.first_done is None:
            self.first_done = totals.done  # a resumed batch: the rate counts this run's
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = (totals.done - self.first_done) / elapsed
        cap = f" of ${usd(totals.cap):.4f}" if totals.cap is not None else ""
        line = (
            f"{totals.done}/{totals.questions} done · {running} running · "
            f"${usd(totals.held):.4f}{cap} · {rate:.1f}/s"
        )
        sys.stderr.write("\r" + line + "\x1b[K")
        sys.stderr.flush()

    def done(self, totals: Any) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
        elapsed = self.clock() - self.started
        print(f"batch {self.batch_id}: {summary(totals, elapsed)}", file=sys.stderr)
