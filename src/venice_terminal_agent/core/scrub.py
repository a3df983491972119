"""Text from servers made fit to print, keep and send back (pure; stdlib only).

Two faults arrive with such text. A server may echo a secret we sent it (a 401 body that
repeats the API key): `redact` masks every secret we hold, whoever wrote the text. And text
may be cut inside a character: JSON's `"\\ud83d"` is half of an emoji, as a stream split
between chunks or JavaScript's `slice` leaves it, and a lone half cannot be encoded as UTF-8,
so printing, storing or sending it crashes. `well_formed` joins the halves that belong
together and replaces a lone one with U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"
MIN_SECRET = 6  # shorter values are not secrets, and masking them would blank out words
_SURROGATE = re.compile("[\ud800-\udfff]")


def redact(text: str | None, secrets: Iterable[str]) -> str | None:
    """`text` with each secret (and a bearer header's bare token) replaced by `***`."""
    if not text:
        return text
    found = {part for secret in secrets for part in (secret, secret.removeprefix("Bearer "))}
    parts = sorted((part for part in found if len(part) >= MIN_SECRET), key=len, reverse=True)
    for part in parts:
        text = text.replace(part, MASK)
    if text.endswith("…"):  # a line cut short may end in the start of a secret
        for part in parts:
            start = next((n for n in range(len(part) - 1, 3, -1) if text[:-1].endswith(part[:n])), 0)
            if start:
                return text[: -1 - start] + MASK + "…"
    return text


def well_formed(text: str) -> str:
    """`text` with surrogate pairs joined into their character and lone halves as U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_all(value: object) -> Any:
    """`well_formed` applied to every string inside lists and dicts (keys included)."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed_all(k): well_formed_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [well_formed_all(v) for v in value]
    return value


def writes_utf8(stream: object) -> bool:
    """Whether a text stream encodes as UTF-8 (not under an ISO-8859 locale or `PYTHONUTF8=0`):
    where it does not, what we print is made to fit it (cli/start.py, the --json receipt)."""
    import codecs

    encoding = getattr(stream, "encoding", None)
    try:
        return encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def is_high_surrogate(char: str) -> bool:
    """The first half of a pair: its second half may come in the next piece of a stream."""
    return "\ud800" <= char <= "\udbff"


def redact_all(value: object, secrets: Iterable[str]) -> Any:
    """`redact` applied to every string inside lists and dicts (what is kept on disk)."""
    secrets = list(secrets)
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: redact_all(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_all(item, secrets) for item in value]
    return value
