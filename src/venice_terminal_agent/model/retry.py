"""How the model client retries a failed request: which failures, how often, how long it waits.

Retries are ours, not the SDK's (`max_retries=0`): the SDK's sleep cannot be injected
(tests never sleep), it does not know that text already streamed must be withdrawn
(`TextDiscarded`), and it does not count failures across requests. Venice blocks a client
for 30 s after more than 20 failed requests in 30 s, so failures are counted in a sliding
window and retrying stops well before that.

Why not stamina: its `retry_context` with an `on=` hook could return our wait (Retry-After
included) and has a test mode, but the two things the client's loop does around each attempt
would stay outside it anyway: withdrawing text an attempt already showed, and counting failures
across requests (one client's `FailureWindow`, not per call). What is left is `next_wait` and
a dozen lines of `VeniceClient.complete`; a dependency would not make them shorter or clearer.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.errors import ModelError
from ..core.record import Record
from ..core.wording import plural


class RetryPolicy(Record, frozen=False):
    """How failed requests are retried: few attempts, exponential backoff with jitter,
    `Retry-After` honoured up to a limit, and a cap on failures in a sliding window."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0  # asked to wait longer: give up now rather than hang
    window: float = 30.0
    max_failures_in_window: int = 10  # Venice blocks past 20 failures in 30 s
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    jitter: Callable[[], float] = random.random

    def backoff(self, attempt: int) -> float:
        """Delay before attempt `attempt + 1` when the server did not say how long."""
        delay = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        return delay * (0.75 + 0.5 * self.jitter())


class FailureWindow:
    """The failed requests of one client in the last `seconds`: state, kept apart from the
    policy (which is configuration, and may be shared)."""

    def __init__(self, seconds: float, clock: Callable[[], float]) -> None:
        self.seconds, self.clock = seconds, clock
        self.times: deque[float] = deque()

    def add(self) -> int:
        """Count one failure; how many fell in the window."""
        now = self.clock()
        self.times.append(now)
        while self.times and self.times[0] < now - self.seconds:
            self.times.popleft()
        return len(self.times)


def next_wait(policy: RetryPolicy, problem: ModelError, attempt: int, in_window: int) -> float:
    """Seconds to wait before attempt `attempt + 1`, or raise to give up (`problem` itself
    when it is not worth retrying, else a `ModelError` saying why retrying stopped).
    `in_window`: the client's failed requests in the policy's window, this one included."""
    if not problem.retryable:
        raise problem
    tries = plural(attempt, "attempt")
    if attempt >= policy.attempts:
        raise ModelError(f"{problem.message} (gave up after {tries})", status=problem.status)
    if in_window > policy.max_failures_in_window:
        raise ModelError(
            f"{problem.message} (not retrying: {in_window} failed requests in {policy.window:.0f} s; "
            "Venice blocks clients that keep failing)",
            status=problem.status,
        )
    if problem.retry_after is not None and problem.retry_after > policy.max_retry_after:
        raise ModelError(
            f"{problem.message} (the server asks to wait {problem.retry_after:.0f} s; try again later)",
            status=problem.status,
        )
    if problem.retry_after is not None:
        return problem.retry_after
    return policy.backoff(attempt)
