"""Text from servers made fit to show: secrets masked, characters cut in half mended."""

from __future__ import annotations

import json

from venice_terminal_agent.core.scrub import redact, well_formed, well_formed_all
from venice_terminal_agent.model.errors import MAX_LINE, one_line


def test_every_secret_is_masked_longest_first_and_short_values_are_left_alone() -> None:
    text = "key sk-abcdef123 and its prefix sk-abcdef, bearer tok-999999, id 42"
    assert redact(text, ["sk-abcdef", "sk-abcdef123", "Bearer tok-999999", "42"]) == (
        "key *** and its prefix ***, bearer ***, id 42"
    )
    assert redact(None, ["secret"]) is None


def test_a_line_cut_short_does_not_keep_the_start_of_a_secret() -> None:
    key = "sk-venice-0123456789abcdef"
    line = one_line("x" * (MAX_LINE - 20) + f" the key {key} is invalid")
    assert line.endswith("…") and key[:5] in line
    masked = redact(line, [key])
    assert key[:5] not in masked and masked.endswith("***…")


def test_halves_of_a_character_are_joined_and_a_lone_half_replaced() -> None:
    assert well_formed("a\ud83d\ude00b") == "a\U0001f600b"
    assert well_formed("\ude00 then \ud83d") == "\ufffd then \ufffd"
    assert well_formed_all({"k\ud83d": ["\ude00", 1, None]}) == {"k\ufffd": ["\ufffd", 1, None]}


def test_a_masked_receipt_hides_a_secret_wherever_a_tool_or_the_model_put_it() -> None:
    from venice_terminal_agent.core.receipt import CallOutcome, Exit, Proposed, Receipt, Step

    secret = "tok-123456"
    receipt = Receipt(
        steps=(Step("echo", {"text": secret}, {"said": [secret]}, f"failed with {secret}"),),
        stopped_because=Exit.BUDGET,
        answer=f"the token is {secret}",
        refusal=f"stopped at {secret}",
        proposed=(Proposed("echo", {"again": secret}, CallOutcome.NOT_RUN, "budget"),),
        notes=(f"note {secret}",),
        thinking=f"I saw {secret}",
    )
    masked = receipt.masked([secret])
    assert secret not in json.dumps(masked.to_dict()) and "***" in json.dumps(masked.to_dict())
    assert masked.steps[0].arguments == {"text": "***"} and masked.calls == receipt.calls
    assert receipt.masked([]) is receipt  # nothing to mask: the same receipt
