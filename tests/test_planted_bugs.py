"""benchmarks/mutants.py plants known bugs by exact text replacement; a replacement whose text
moved away plants nothing and is only reported when someone runs it. One went stale for a day
that way (the terminal person took a decision over from elicit_form.py): every planted bug's
text is checked here, on every run of the fast tier, to be found exactly once."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def planted() -> list:
    spec = importlib.util.spec_from_file_location("planted_mutants", ROOT / "benchmarks" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.MUTANTS


@pytest.mark.parametrize("mutant", planted(), ids=lambda mutant: mutant.name)
def test_each_planted_bug_still_finds_the_code_it_changes(mutant) -> None:
    source = (ROOT / "src" / "venice_terminal_agent" / mutant.file).read_text(encoding="utf-8")
    assert source.count(mutant.old) == 1, f"{mutant.file} no longer holds this text once: update the mutant"
    for test in mutant.tests:
        assert (ROOT / test.split("::")[0]).is_file(), test
