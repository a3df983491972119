"""The money arithmetic of one model request (`model/spending.py`), pure: what a request under a
cap may ask for, when it is refused, the most it can cost, and why a cut answer is partial."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from venice_terminal_agent.core.costs import Cap, Prices
from venice_terminal_agent.core.defaults import CAPPED_OUTPUT_MIN, CAPPED_OUTPUT_TOKENS
from venice_terminal_agent.core.tokens import IMAGE_MOST_TOKENS
from venice_terminal_agent.model.spending import Spending, input_bound

PRICES = Prices(1.0, 10.0)  # USD per million tokens: an input token $0.000001, an output $0.00001
EPSILON = 1e-12  # a float's last digits: a sum exactly on the cap may be just over it


def test_a_capped_request_asks_for_what_the_money_left_pays_within_the_limits() -> None:
    spending = Spending(PRICES)
    # $0.011 left, 1,000 input tokens ($0.001): $0.01 pays 1,000 output tokens.
    assert spending.request_limit(Cap(0.011 + EPSILON), 1000) == 1000
    # Plenty of money: the ceiling when the model publishes no limit, else the model's, else asked.
    assert spending.request_limit(Cap(100.0), 1000) == CAPPED_OUTPUT_TOKENS
    assert Spending(PRICES, model_limit=512).request_limit(Cap(100.0), 1000) == 512
    assert spending.request_limit(Cap(100.0), 1000, asked=300) == 300
    # What was spent is not there to pay with.
    assert spending.request_limit(Cap(0.011 + EPSILON, spent=0.006), 1000) == 400  # $0.004 after the input


def test_without_a_cap_or_with_max_completion_tokens_the_limit_is_the_settings() -> None:
    assert Spending(PRICES).request_limit(None, 1000) is None
    assert Spending(PRICES, model_limit=512).request_limit(None, 1000, asked=900) == 512
    fixed = Spending(PRICES, model_limit=4096, setting_limit=2048)
    assert not fixed.capped(Cap(0.0001))  # MAX_COMPLETION_TOKENS fixes the limit, whatever the cap
    assert fixed.request_limit(Cap(0.0001), 1000) == 2048
    assert not Spending(None).capped(Cap(1.0))  # no prices: nothing to reckon the limit with


def test_a_request_whose_money_left_cannot_pay_a_short_answer_is_refused() -> None:
    spending = Spending(PRICES)
    short = 1000 * 1e-6 + CAPPED_OUTPUT_MIN * 1e-5
    assert spending.refusal(Cap(short + EPSILON), 1000) is None
    refusal = spending.refusal(Cap(short - 1e-6), 1000, request=3)
    assert refusal is not None and refusal.startswith("stopped before model request 3:")
    # A sampling request asking for fewer tokens than a short answer needs only those paid.
    assert spending.refusal(Cap(1000 * 1e-6 + 10 * 1e-5 + EPSILON), 1000, asked=10) is None
    assert spending.refusal(None, 10**9) is None


def test_with_max_completion_tokens_the_whole_limit_must_be_paid_and_no_price_is_refused() -> None:
    fixed = Spending(PRICES, setting_limit=1000)
    assert fixed.refusal(Cap(0.011 + EPSILON), 1000) is None
    assert fixed.refusal(Cap(0.0109), 1000) is not None
    unknown = Spending(None).refusal(Cap(1.0), 10, request=2, model="m")
    assert unknown == "stopped before model request 2: no price or output limit is known for m"


def test_the_worst_cost_counts_every_token_and_the_web_search() -> None:
    assert Spending(PRICES).worst(1000, 1000) == PRICES.worst(1000, 1000) == 0.011
    assert Spending(PRICES, search_usd=0.01).worst(1000, 1000) == PRICES.worst(1000, 1000) + 0.01
    assert Spending(PRICES, model_limit=100).worst(1000) == PRICES.worst(1000, 100)
    assert Spending(PRICES).worst(1000) is None  # no output limit known: no worst
    assert Spending(None, model_limit=100).worst(1000) is None


@example(left=0.0, input_price=1.0, output_price=2.2e-309, bound=0, model_limit=None, search=0.01)
@example(left=0.01, input_price=1.0, output_price=2.2e-309, bound=0, model_limit=None, search=0.01)
@given(
    left=st.floats(0.0, 1.0),
    input_price=st.floats(0.01, 50),
    output_price=st.floats(0.0, 100),
    bound=st.integers(0, 200_000),
    model_limit=st.none() | st.integers(1, 50_000),
    search=st.sampled_from([0.0, 0.01]),
)
def test_a_capped_request_that_is_made_can_never_cost_more_than_is_left(
    left: float, input_price: float, output_price: float, bound: int, model_limit: int | None, search: float
) -> None:
    spending = Spending(Prices(input_price, output_price), model_limit, search_usd=search)
    cap = Cap(left)
    if spending.refusal(cap, bound) is not None:
        return
    limit = spending.request_limit(cap, bound)
    assert limit is not None and limit >= min(CAPPED_OUTPUT_MIN, model_limit or CAPPED_OUTPUT_TOKENS)
    worst = spending.worst(bound, limit)
    assert worst is not None and worst <= left


def test_a_cut_answer_says_whose_limit_cut_it() -> None:
    spending = Spending(PRICES)
    assert "raise --max-usd" in spending.cut_reason(Cap(1.0), 700)
    assert "raise --session-max-usd" in spending.cut_reason(Cap(1.0, "session cap"), 700)
    ceiling = spending.cut_reason(Cap(1.0), CAPPED_OUTPUT_TOKENS)
    assert f"{CAPPED_OUTPUT_TOKENS:,} tokens, the most a request under a money cap asks for" in ceiling
    ours = Spending(PRICES, setting_limit=900).cut_reason(Cap(1.0), 900)
    assert ours.endswith("output limit of 900 tokens (raise MAX_COMPLETION_TOKENS for a longer one)")
    assert Spending(None).cut_reason(None, None, used=321).endswith("output limit of 321 tokens")
    assert Spending(None).cut_reason(None, None) == "the answer was cut at the model's output limit"


def test_the_input_bound_is_the_bytes_sent_with_an_image_at_its_most_tokens() -> None:
    text = [{"role": "user", "content": "héllo"}]
    assert input_bound(text, ()) == len(b'[{"role": "user", "content": "h\xc3\xa9llo"}]')
    url = "data:image/png;base64," + "A" * 100_000
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    empty = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": ""}}]}]
    assert input_bound(image, ()) == len(json.dumps(empty)) + IMAGE_MOST_TOKENS


def test_a_response_costs_the_servers_figure_else_its_tokens_and_a_search_that_found_something() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    spending = Spending(PRICES, search_usd=0.01)
    assert spending.cost(usage) == PRICES.of(usage)
    assert spending.cost(usage, searched=True) == PRICES.of(usage) + 0.01
    assert (
        spending.cost({**usage, "cost": {"usd": 0.5}}, searched=True) == 0.5
    )  # the server's, search and all
    assert Spending(None).cost(usage) is None and spending.cost({}) is None
