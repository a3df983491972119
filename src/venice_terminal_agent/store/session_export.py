"""The session export format: our JSONL, written from a stored session and read back.

A header line (`"type": "venice-agent session"`, the format's version, the session's facts and
its receipts), then one OpenAI-format message per line, exactly as stored. Text in, text out:
the store (`sessions.py`) knows nothing of this format, and `SessionStore.import_session` keeps
what `parse_jsonl` read, under a new id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.context import record_problem
from ..core.errors import StoreError
from ..core.receipt import read_json

if TYPE_CHECKING:
    from .sessions import Session

EXPORT_TYPE = "venice-agent session"
EXPORT_VERSION = 1


def export_jsonl(session: Session) -> str:
    """Our JSONL: a header line (the session, its model and receipts), then one OpenAI-format
    message per line, exactly as stored."""
    header = {
        "type": EXPORT_TYPE,
        "version": EXPORT_VERSION,
        **session.info.to_dict(),
        "receipts": session.receipts,
    }
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [json.dumps(message, ensure_ascii=False) for message in session.messages]
    return "\n".join(lines) + "\n"


def parse_jsonl(text: str, where: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The header, messages and receipts of an `export_jsonl` text; `StoreError` names the line
    and says what is wrong with it (`session_problem`): nothing of a file that has one is kept."""
    numbered = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    parsed = []
    for number, line in numbered:
        try:
            parsed.append(read_json(line))
        except ValueError as error:
            raise StoreError(f"{where}:{number}: not JSON ({error})") from None
    if not parsed or not isinstance(parsed[0], dict) or parsed[0].get("type") != EXPORT_TYPE:
        raise StoreError(
            f"{where} is not a venice-agent session export (its first line is no session header)"
        )
    if parsed[0].get("version") != EXPORT_VERSION:
        raise StoreError(
            f"{where} is an export of version {parsed[0].get('version')}; this venice-agent reads {EXPORT_VERSION}"
        )
    header, messages = parsed[0], parsed[1:]
    receipts = header.get("receipts")
    receipts = [] if receipts is None else receipts
    problem = session_problem(header, messages, receipts)
    if problem is not None:
        at, why = problem
        raise StoreError(
            f"{where}:{numbered[at + 1][0] if at >= 0 else numbered[0][0]}: {why}; nothing was imported"
        )
    return header, messages, receipts


# What the header's fields must be when they are there (an older export may lack some).
def _text(value: Any) -> bool:
    return isinstance(value, str)


def _maybe_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _number(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


HEADER_FIELDS: dict[str, tuple[Any, str]] = {
    "id": (_maybe_text, "text"),
    "folder": (_text, "text"),
    "title": (_text, "text"),
    "model": (_maybe_text, "text"),
    "base_url": (_maybe_text, "text"),
    "created": (_number, "a time in seconds"),
    "updated": (_number, "a time in seconds"),
    "questions": (_count, "a count"),
    "tokens": (_count, "a count"),
    "cost": (_number, "an amount in USD"),
    "cost_unknown": (lambda value: isinstance(value, bool), "true or false"),
    "local_data": (lambda value: isinstance(value, bool), "true or false"),
    "forked_from": (_maybe_text, "text"),
    "pages": (lambda value: _count(value) and value >= 1, "a count from 1"),
}
# A receipt's fields a transcript reads.
RECEIPT_FIELDS: dict[str, tuple[Any, str]] = {
    "stopped_because": (_maybe_text, "text"),
    "partial": (lambda value: value is None or isinstance(value, bool), "true or false"),
    "calls": (lambda value: value is None or _count(value), "a count"),
    "cost_usd": (lambda value: value is None or _number(value), "an amount in USD"),
}


def session_problem(header: dict[str, Any], messages: Sequence[Any], receipts: Any) -> tuple[int, str] | None:
    """Where and why a session (an export's, or a stored one's) cannot be kept, shown, exported
    or resumed: -1 for the header and its receipts, else the message's index; None when it can."""
    for name, (valid, kind) in HEADER_FIELDS.items():
        if header.get(name) is not None and not valid(header[name]):
            return -1, f"the header's {name!r} is {kind}, not {json.dumps(header[name])[:40]}"
    if not isinstance(receipts, list):
        return -1, "the header's 'receipts' is a list"
    for number, item in enumerate(receipts, 1):
        if not isinstance(item, dict) or not isinstance(item.get("receipt", {}), dict | None):
            return -1, f"receipt {number} is an object with a 'receipt' object"
        if not (_maybe_text(item.get("question")) and (item.get("at") is None or _number(item["at"]))):
            return -1, f"receipt {number}'s 'question' is text and its 'at' a time in seconds"
        receipt = item.get("receipt") or {}
        for name, (valid, kind) in RECEIPT_FIELDS.items():
            if not valid(receipt.get(name)):
                return -1, f"receipt {number}'s {name!r} is {kind}"
    return record_problem(messages)
