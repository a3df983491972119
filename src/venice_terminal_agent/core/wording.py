"""The one place for wordings said on several paths: how many of something ("1 call", "2
calls", "The 1 tool call … is"), an empty answer, a call nobody can be asked about, a name
that was nearly right ("did you mean doctor?").

Every count a person reads goes through `plural`, so no message says "1 calls" or "All 1
tool calls". It imports nothing: the loop core uses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

EMPTY_RESPONSE = "(empty response)"

# A call that needs a yes when nobody can be asked (cron, CI, a pipe without /dev/tty): the
# same words for a paid tool as for any other, so the manual can quote them.
NO_TERMINAL = "there is no terminal to ask on"
# Why a call is asked about, on every front (fronts/text.py's consent question, the terminal's).
PAID = "is not known to be free: it may spend money or change things"
LOCAL_DATA = "may send local file contents off this machine"
PAID_REASON = f"it {PAID}"
LOCAL_DATA_REASON = f"it {LOCAL_DATA}"
NO_TERMINAL_CONSENT = f"it needs your consent, and {NO_TERMINAL} (or use --yes)"
NO_TERMINAL_LOCAL = f"{LOCAL_DATA_REASON}, and {NO_TERMINAL} (or use --yes)"
NO_TERMINAL_SAMPLING = f"it needs your yes, and {NO_TERMINAL}"


def shown_answer(answer: str) -> str:
    """An answer as a person reads it: an empty one (or blanks alone) says so, never a blank
    line. The receipt keeps the answer as it came."""
    return answer if answer.strip() else EMPTY_RESPONSE


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`count` and `noun` in agreement: plural(1, "call") -> "1 call", plural(3, "call") -> "3 calls".

    `nouns` is the plural when adding "s" is wrong (plural(2, "entry", "entries"))."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def all_of(count: int, noun: str, nouns: str | None = None) -> str:
    """The whole of a count, as the subject of a sentence: "The 1 tool call", "All 5 tool calls"."""
    return f"{'The' if count == 1 else 'All'} {plural(count, noun, nouns)}"


def verb(count: int, singular: str, plural_form: str) -> str:
    """The verb that agrees with `count`: verb(1, "is", "are") -> "is"."""
    return singular if count == 1 else plural_form


# A 402 from Venice, told apart by its code: what ran out, and what the person can do.
VENICE_API_SETTINGS = "https://venice.ai/settings/api"
PAYMENT_REFUSALS = {
    "INSUFFICIENT_BALANCE": (
        "the account's balance is out",
        f"top up at {VENICE_API_SETTINGS}, or use DIEM",
    ),
    "API_KEY_USD_SPEND_LIMIT_EXCEEDED": (
        "this API key reached its USD spend limit",
        f"the account itself may still have USD: raise the key's USD limit at {VENICE_API_SETTINGS}, "
        "or use another key",
    ),
    "API_KEY_DIEM_SPEND_LIMIT_EXCEEDED": (
        "this API key reached its DIEM spend limit",
        f"the account itself may still have DIEM: raise the key's DIEM limit at {VENICE_API_SETTINGS}, "
        "or use another key",
    ),
}
PAYMENT_REQUIRED = ("the model server asks for payment", f"check the balance at {VENICE_API_SETTINGS}")


def payment_refusal(code: str | None, detail: str) -> str:
    """A 402 in one line: which money ran out (balance, the key's USD or DIEM limit), the
    server's words, and what to do. Never retried: waiting does not refill an account."""
    what, todo = PAYMENT_REFUSALS.get(code or "", PAYMENT_REQUIRED)
    return f"{what} (402 Payment Required: {detail}); {todo}"


def cap_above_balance(cap: float, balance: float) -> str:
    """Said before the question when a money cap could not be spent anyway."""
    return (
        f"--max-usd ${cap:,.2f} is above the account's balance (${balance:,.2f}): "
        "a question may end on an empty balance (402) before the cap"
    )


def near_misses(word: str, names: Iterable[str]) -> list[str]:
    """The names `word` may be a slip of the keys for, nearest first: a letter left out, added
    or changed, or two side by side swapped; one slip in a name of up to 7 letters, two in a
    longer one, and the first letter right (people rarely miss it, and without it every short
    word is near some name). Case and leading dashes or slashes do not count: `--modle` is near
    `--model`, `/recipt` near `/receipt`."""
    typed = word.lstrip("-/").lower()
    found = []
    for name in names:
        bare = name.lstrip("-/").lower()
        if not typed or not bare or typed[0] != bare[0]:
            continue
        slips = _slips(typed, bare)
        if slips <= (1 if len(bare) <= 7 else 2):
            found.append((slips, name))
    return [name for _, name in sorted(found, key=lambda pair: pair[0])]


def did_you_mean(names: Sequence[str]) -> str:
    """The question after a name that was nearly right: "did you mean doctor?", "did you mean
    list or last?"; "" for no name."""
    if not names:
        return ""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"did you mean {listed}?"


def _slips(a: str, b: str) -> int:
    """How many slips turn `a` into `b`: letters left out, added, changed, or swapped side by side
    (the optimal string alignment distance)."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        previous, row = row, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], before[j - 2] + 1)
        before = previous
    return row[len(b)]
