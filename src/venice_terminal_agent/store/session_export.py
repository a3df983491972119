"""The session export format: our JSONL, written from a stored session and read back.

A header line (`"type": "venice-agent session"`, the format's version, the session's facts and
its receipts), then one OpenAI-format message per line, exactly as stored. Text in, text out:
the store (`sessions.py`) knows nothing of this format, and `SessionStore.import_session` keeps
what `parse_jsonl` read, under a new id.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.errors import StoreError

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
    """The header, messages and receipts of an `export_jsonl` text; `StoreError` says what is wrong."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        parsed = [json.loads(line) for line in lines]
    except ValueError as error:
        raise StoreError(f"{where} is not JSONL: {error}") from None
    if not parsed or not isinstance(parsed[0], dict) or parsed[0].get("type") != EXPORT_TYPE:
        raise StoreError(
            f"{where} is not a venice-agent session export (its first line is no session header)"
        )
    if parsed[0].get("version") != EXPORT_VERSION:
        raise StoreError(
            f"{where} is an export of version {parsed[0].get('version')}; this venice-agent reads {EXPORT_VERSION}"
        )
    messages = parsed[1:]
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise StoreError(f"{where}: every line after the header must be a message with a role")
    receipts = parsed[0].get("receipts") or []
    return parsed[0], messages, receipts if isinstance(receipts, list) else []
