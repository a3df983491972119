"""Loaded first by every Python process a test starts during a mutation run (conftest.py puts
this folder on PYTHONPATH then, and only then), so a command run by a test is seen by mutmut.

While mutmut collects which tests reach which function (MUTANT_UNDER_TEST=stats), its
trampolines record a hit in the memory of the process that made it, which for the real command
is a subprocess: the hit would be lost and the mutants of a function only the command reaches
counted "no tests". Here each function's first hit in this process is appended to the file
VENICE_MUTMUT_HITS names; the test process reads it after each test (conftest.py). While a
mutant runs, nothing is needed here: the mutated package comes first on PYTHONPATH and its
trampolines read MUTANT_UNDER_TEST from the environment the test passed on.
"""

from __future__ import annotations

import os


def _record_hits_in_file(path: str) -> None:
    try:
        from mutmut.mutation import trampoline
    except ImportError:  # a child of a child that runs another Python: nothing to record
        return
    seen: set[str] = set()

    def record(name: str, caller: str | None = None) -> None:
        if name not in seen:
            seen.add(name)
            with open(path, "a", encoding="utf-8") as hits:
                hits.write(name + "\n")

    trampoline.record_trampoline_hit = record  # type: ignore[assignment]


if os.environ.get("MUTANT_UNDER_TEST") == "stats" and os.environ.get("VENICE_MUTMUT_HITS"):
    _record_hits_in_file(os.environ["VENICE_MUTMUT_HITS"])
