"""The batch ledger (fronts/batch/ledger.py): a reservation and its intent are one transaction,
the cap is checked against every reservation of every worker, and a step recorded and never
settled is found as interrupted and charged whole."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from venice_terminal_agent.fronts.batch.ledger import Ledger, nusd


def ledger(tmp_path: Path, cap: float | None = 1.0) -> Ledger:
    book = Ledger(f"sqlite:///{tmp_path / 'batch.sqlite'}")
    book.create()
    book.open_batch("b", cap, 0.0, "q.jsonl", [{"id": "a", "question": "?"}])
    return book


def test_a_step_is_reserved_settled_and_found_settled_with_its_result(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    assert book.reserve("b", "b:a", 1, "model", "m", nusd(0.3)).kind == "new"
    assert book.totals("b").held == nusd(0.3)
    book.settle("b", "b:a", 1, nusd(0.01), {"completion": {"message": {"role": "assistant"}}})
    assert book.totals("b").held == nusd(0.01)  # the rest of the reservation is given back
    again = book.reserve("b", "b:a", 1, "model", "m", nusd(0.3))  # the worker died before DBOS's checkpoint
    assert again.kind == "settled" and again.result == {"completion": {"message": {"role": "assistant"}}}
    assert book.totals("b").held == nusd(0.01) == book.charged("b:a")


def test_a_step_recorded_and_never_settled_is_interrupted_and_charged_whole(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    assert book.reserve("b", "b:a", 2, "tool", "charge", nusd(0.2)).kind == "new"
    # its worker died here: the call may have reached the server
    found = book.reserve("b", "b:a", 2, "tool", "charge", nusd(0.2))
    assert found.kind == "interrupted" and found.reserved == nusd(0.2)
    assert book.reserve("b", "b:a", 2, "tool", "charge", nusd(0.2)).kind == "interrupted"  # and stays so
    book.settle("b", "b:a", 2, 0, {"result": "late"})  # a settlement after that changes nothing
    assert book.charged("b:a") == book.totals("b").held == book.intent_total("b") == nusd(0.2)


def test_a_reservation_the_cap_cannot_pay_is_refused_and_records_nothing(tmp_path: Path) -> None:
    book = ledger(tmp_path, cap=0.5)
    assert book.reserve("b", "b:a", 1, "model", "m", nusd(0.4)).kind == "new"
    refused = book.reserve("b", "b:a", 2, "model", "m", nusd(0.2))
    assert (refused.kind, refused.left, refused.cap) == ("cap", nusd(0.1), nusd(0.5))
    assert book.intent_total("b") == nusd(0.4)  # no intent for the refused one
    book.settle("b", "b:a", 1, nusd(0.1), {})
    assert book.reserve("b", "b:a", 2, "model", "m", nusd(0.2)).kind == "new"  # room again


@pytest.mark.parametrize("cap", [0.05, 1.0])
def test_workers_racing_for_the_cap_never_pass_it_together(tmp_path: Path, cap: float) -> None:
    """Eight threads, each on its own connection as a worker process would be, reserve the
    same batch as fast as they can: what is held never passes the cap, and every reservation
    that was granted is in the total."""
    book = ledger(tmp_path, cap=cap)
    granted: list[int] = []
    lock = threading.Lock()

    def worker(number: int) -> None:
        own = Ledger(f"sqlite:///{tmp_path / 'batch.sqlite'}")
        try:
            for step in range(25):
                if own.reserve("b", f"b:w{number}", step, "model", "m", nusd(0.003)).kind == "new":
                    with lock:
                        granted.append(nusd(0.003))
        finally:
            own.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    held = book.totals("b").held
    assert held == sum(granted) == book.intent_total("b") <= nusd(cap)
    if cap < 1:
        assert held > nusd(cap) - nusd(0.003)  # the cap was reached, not merely approached


def test_a_batch_is_opened_once_with_one_cap(tmp_path: Path) -> None:
    from venice_terminal_agent.core.errors import ConfigError

    book = ledger(tmp_path, cap=1.0)
    book.open_batch("b", 1.0, 0.0, "q.jsonl", [{"id": "a", "question": "?"}])  # the same again: joined
    with pytest.raises(
        ConfigError, match="batch b was started with --max-usd 1 and --call-usd 0: give the same"
    ):
        book.open_batch("b", 2.0, 0.0, "q.jsonl", [{"id": "a", "question": "?"}])
    with pytest.raises(ConfigError, match="batch b has 1 questions, this file 2"):
        book.open_batch(
            "b", 1.0, 0.0, "q.jsonl", [{"id": "a", "question": "?"}, {"id": "c", "question": "?"}]
        )


def test_the_progress_line_says_done_running_spent_of_the_cap_and_the_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io
    import sys

    from venice_terminal_agent.fronts.batch.ledger import Totals
    from venice_terminal_agent.fronts.batch.progress import Progress

    now = [100.0]
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    progress = Progress(True, "b-1", started=100.0, clock=lambda: now[0])
    progress.show(Totals(nusd(1), nusd(0.25), 10, 2, {"answered": 2}, nusd(0.25)), running=3)
    now[0] = 104.0
    progress.show(Totals(nusd(1), nusd(0.5), 10, 10, {"answered": 9, "cost_cap": 1}, nusd(0.5)), running=0)
    progress.done(Totals(nusd(1), nusd(0.5), 10, 10, {"answered": 9, "cost_cap": 1}, nusd(0.5)))
    shown = screen.getvalue().split("\r")
    assert shown[1] == "2/10 done · 3 running · $0.2500 of $1.0000 · 0.0/s\x1b[K"
    assert shown[2] == "10/10 done · 0 running · $0.5000 of $1.0000 · 2.0/s\x1b[K"  # 8 more in 4 s
    assert shown[3] == (
        "\x1b[Kbatch b-1: 10 of 10 questions done (9 answered, 1 cost_cap) · $0.500000 spent of $1.000000 · 4.0 s\n"
    )
