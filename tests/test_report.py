"""The planner's one `Report` and the receipt built from it (`model/report.py`), pure."""

from __future__ import annotations

from venice_terminal_agent.core.receipt import Exit, Receipt
from venice_terminal_agent.model.models import ModelFacts
from venice_terminal_agent.model.planner import LLMPlanner
from venice_terminal_agent.model.report import Report


def report(**changes: object) -> Report:
    fields: dict[str, object] = dict(
        requests=2, model="served-model", usage={"prompt_tokens": 10}, cost_usd=0.5, balance=None,
        context_tokens=10, cached_tokens=0, compacted=None, parsed={"ok": True}, unmeasured=0,
        unstreamed=1, notes=("a note",), thinking="hm", sources=({"url": "https://x.test"},),
        facts=ModelFacts(), known_cost=0.5, unknown_worst=0.0, headers={}, added=(), markers=(),
    )  # fmt: skip
    return Report(**{**fields, **changes})


def test_the_receipt_gets_the_models_part_and_the_callers_fields() -> None:
    loop = Receipt(steps=(), stopped_because=Exit.ANSWERED, answer="yes", rounds=2)
    receipt = report().on(loop, context_window=4096, schema=True)
    assert (receipt.model, receipt.cost_usd, receipt.unstreamed, receipt.notes) == (
        "served-model",
        0.5,
        1,
        ("a note",),
    )
    assert (receipt.thinking, receipt.sources, receipt.parsed) == (
        "hm",
        ({"url": "https://x.test"},),
        {"ok": True},
    )
    assert (receipt.answer, receipt.context_window, receipt.schema) == ("yes", 4096, True)


def test_a_round_stopped_before_its_request_is_not_counted_and_only_an_answer_is_parsed() -> None:
    loop = Receipt(steps=(), stopped_because=Exit.COST_CAP, refusal="too dear", rounds=3)
    receipt = report(requests=2).on(loop)
    assert receipt.rounds == 2 and receipt.parsed is None and receipt.refusal == "too dear"


def test_a_planner_that_made_no_request_reports_no_tokens_and_a_cost_unknown_without_prices() -> None:
    planner = LLMPlanner(object(), [], (), model="asked-model")  # type: ignore[arg-type]
    done = planner.report()
    assert (done.requests, done.model, done.usage, done.cost_usd) == (0, "asked-model", {}, None)
    assert done.compacted is None and done.thinking is None and done.added == () and done.markers == ()
