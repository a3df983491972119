"""How many tokens something will take, estimated before it is sent (pure).

No tokenizer is loaded: each model has its own, and the agent must decide before a request
whether it fits. The estimate errs high: English prose runs about 4 characters a token, JSON
(tool schemas, arguments, results) about 3, so dividing by 3 over-counts prose and is about
right for schemas. The server's `prompt_tokens` says the truth after the request.
"""

from __future__ import annotations

import json
import math
from typing import Any

CHARS_PER_TOKEN = 3.0


def estimate_tokens(value: Any) -> int:
    """At least about as many tokens as `value` takes: a str as is, anything else as the
    compact JSON it is sent as (tool schemas: `[spec.openai_function() for spec in specs]`)."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    )
    return math.ceil(len(text) / CHARS_PER_TOKEN)
