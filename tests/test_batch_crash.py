"""The batch's proof: two worker processes on one database, the fake model and a paid MCP server
on loopback that counts every call by its id, questions and kill -9s at seeded points (inside a
reservation's transaction, during a model stream, inside a tool call, between two steps). No
call id reaches the paid server twice; every question has exactly one receipt; the ledger's
total is the sum of the receipts and stays under the cap.

The fast tier proves it on SQLite with 40 questions and 3 kills, one at each kind of point that
can leave money in doubt (a reservation, a stream, a tool call); the slow tier repeats it at full
size, 200 questions and 10 kills, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batch_support import Ledger, Workers, calls, fake_venice, paid_server, postgres, questions, script

NANO = 1_000_000_000
QUESTION_USD = 0.000225  # the cap holds 90% of the questions' answers (each costs $0.00025)


def prove(tmp_path: Path, db: str, seed: int, count: int, kills: int) -> None:
    cap = round(count * QUESTION_USD, 6)
    file = questions(tmp_path, count)
    # Each model request takes 0.2 s and each worker answers 2 questions at a time: a worker
    # restarted after a kill (a few seconds) finds most of the batch still to do, so all the
    # seeded points are reached before it ends.
    with fake_venice(script(delay=0.2), tmp_path) as fake, paid_server(tmp_path) as (config, log):
        workers = Workers(
            tmp_path, fake.base_url, file, config, db, "--max-usd", str(cap), "--workers", "2", seed=seed
        )
        workers.run(workers=2, kills=kills)
        paid = calls(log)
    for status, _, stderr in workers.finished:  # no worker crashed or refused to start
        assert status in (0, 15), stderr
    assert len(workers.kills) == kills, workers.kills  # each seeded point was reached, and killed its worker
    assert {point.split(":")[0] for point in workers.kills} >= {"tool", "reserve"}, workers.kills

    # No call id reached the paid server twice, whoever died when.
    assert paid and max(paid.values()) == 1, [call for call, n in paid.items() if n > 1]

    # Each worker that ended on its own printed every receipt once, and said how the batch ended.
    for status, out, stderr in workers.finished:
        assert status in (0, 15), stderr
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert sorted(line["id"] for line in lines) == sorted(f"q{i}" for i in range(count)), stderr
        assert f"{count} of {count} questions done" in stderr

    ledger = Ledger(db)
    receipts = {
        qid: (exit, cost, json.loads(data))
        for qid, exit, cost, data in ledger.query(
            "select qid, exit, cost_nusd, receipt from venice_batch_receipts"
        )
    }
    assert len(receipts) == count
    ((charged,),) = ledger.query(
        "select sum(coalesce(charged_nusd, reserved_nusd)) from venice_batch_intents"
    )
    ((held, cap_nusd),) = ledger.query("select held_nusd, cap_nusd from venice_batch_runs")
    ((unsettled,),) = ledger.query("select count(*) from venice_batch_intents where state = 'sent'")
    assert unsettled == 0  # every intent settled, or charged whole as interrupted
    assert charged == held == sum(cost for _, cost, _ in receipts.values()) <= cap_nusd == round(cap * NANO)

    exits = {exit for exit, _, _ in receipts.values()}
    # Some calls were in flight at a kill, and the cap (90% of the questions' worth) was reached.
    assert {"interrupted", "answered", "cost_cap"} <= exits, exits
    for qid, (exit, cost, data) in receipts.items():
        call = f"call-{qid[1:]}"
        assert (
            data["id"] == qid and data["stopped_because"] == exit and round(data["cost_usd"] * NANO) == cost
        )
        if exit == "answered":  # its paid call went out exactly once, and it is on its receipt
            assert paid[call] == 1 and data["steps"][0]["arguments"] == {"call_id": call}
        if exit == "interrupted":
            assert "may have reached the server, so it was not sent again" in data["refusal"]


def test_two_workers_killed_three_times_never_pay_twice_on_sqlite(tmp_path: Path) -> None:
    """Seed 42 plans reserve:1, tool:2 and stream:2: each kind of point that holds money in doubt."""
    prove(tmp_path, f"sqlite:///{tmp_path / 'batch.sqlite'}", seed=42, count=40, kills=3)


@pytest.mark.slow
def test_two_workers_killed_ten_times_never_pay_twice_on_sqlite(tmp_path: Path) -> None:
    prove(tmp_path, f"sqlite:///{tmp_path / 'batch.sqlite'}", seed=37, count=200, kills=10)


@pytest.mark.slow
def test_two_workers_killed_ten_times_never_pay_twice_on_postgresql(tmp_path: Path) -> None:
    with postgres() as url:
        prove(tmp_path, url, seed=38, count=200, kills=10)
