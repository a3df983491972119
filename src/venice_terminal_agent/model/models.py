"""What `/models` and Venice's response headers say about a model and the account (pure).

`ModelFacts.from_listing` reads one model's entry of `GET /models`: its prices
(`model_spec.pricing`), its output limit (`model_spec.maxCompletionTokens`) and whether it
calls functions (`model_spec.capabilities.supportsFunctionCalling`), and its context window
(`model_spec.availableContextTokens`, else the entry's `context_length`, or vLLM's
`max_model_len`; llama.cpp's comes from its `/props`, read by the client). A fact a server does
not give is None (unknown), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.costs import Prices

BALANCE = {"usd": "x-venice-balance-usd", "diem": "x-venice-balance-diem"}
DEPRECATION = ("x-venice-model-deprecation-warning", "x-venice-model-deprecation-date")
KEPT = (*BALANCE.values(), *DEPRECATION)


def venice_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The response headers the agent uses: the balance and the model's deprecation."""
    found = {key.lower(): value for key, value in headers.items()}
    return {key: found[key] for key in KEPT if found.get(key)}


def balance(headers: Mapping[str, str]) -> dict[str, str] | None:
    """`{"usd": "12.50", "diem": "3"}` from the headers, or None when the server sent neither."""
    found = {unit: headers[key] for unit, key in BALANCE.items() if headers.get(key)}
    return found or None


def deprecation(headers: Mapping[str, str]) -> str | None:
    """Venice's warning that the model goes away, with its date, as one line; or None."""
    warning, date = (headers.get(key) for key in DEPRECATION)
    if not warning and not date:
        return None
    return " ".join(
        part for part in (warning or "this model is deprecated", f"({date})" if date else "") if part
    )


@dataclass(frozen=True)
class ModelFacts:
    prices: Prices | None = None
    max_completion_tokens: int | None = None
    function_calling: bool | None = None  # None: the server did not say
    context_window: int | None = None  # input tokens the model takes; None: unknown
    context_source: str | None = None  # where the window was read ("the model list", …)
    # What else the model takes (`capabilities`), each None when the server did not say.
    e2ee: bool | None = None  # supportsE2EE: used end-to-end encrypted by default
    vision: bool | None = None  # supportsVision: takes image parts
    max_images: int | None = None  # maxImages (1 without supportsMultipleImages)
    response_schema: bool | None = None  # supportsResponseSchema: takes a json_schema response_format
    listing_error: str | None = None  # GET /models failed: nothing about the model is known

    @classmethod
    def from_listing(cls, models: Any, model: str) -> ModelFacts:
        entry = next(
            (m for m in models if isinstance(m, Mapping) and m.get("id") == model),
            None,
        ) if isinstance(models, list) else None  # fmt: skip
        spec = entry.get("model_spec") if entry is not None else None
        window = _window(entry, spec)
        source = "the model list" if window else None
        if not isinstance(spec, Mapping):
            return cls(context_window=window, context_source=source)
        limit = spec.get("maxCompletionTokens")
        capabilities = spec.get("capabilities")
        said = capabilities if isinstance(capabilities, Mapping) else {}

        def flag(name: str) -> bool | None:
            return said[name] if isinstance(said.get(name), bool) else None

        images = said.get("maxImages")
        return cls(
            prices=Prices.from_pricing(spec.get("pricing")),
            max_completion_tokens=limit if isinstance(limit, int) and limit > 0 else None,
            function_calling=flag("supportsFunctionCalling"),
            e2ee=flag("supportsE2EE"),
            vision=flag("supportsVision"),
            max_images=int(images) if isinstance(images, int | float) and images >= 1
            else (1 if said.get("supportsMultipleImages") is False else None),
            response_schema=flag("supportsResponseSchema"),
            context_window=window,
            context_source=source,
        )  # fmt: skip


def e2ee_choice(asked: bool | None, facts: ModelFacts, model: str) -> tuple[bool, str | None]:
    """Whether `model` is used end-to-end encrypted, and why no question may run at all (None:
    they may). `asked`: --e2ee (True), --no-e2ee (False), neither (None: the model's own default,
    `supportsE2EE`). Private or not at all: when E2EE is asked for, or the model may be E2EE
    and the list that would say so cannot be read (Venice names its E2EE models `e2ee-…`),
    nothing is sent rather than plaintext."""
    if asked is False:
        return False, None
    if facts.e2ee is True:
        return True, None
    named = model.startswith("e2ee-")
    if facts.listing_error is not None and (asked or named):
        return False, (
            f"cannot tell whether {model} is end-to-end encrypted: the model list cannot be read "
            f"({facts.listing_error}); nothing was sent in plaintext"
        )
    if asked:
        said = "does not support" if facts.e2ee is False else "is not listed as supporting"
        return False, f"--e2ee: {model} {said} E2EE (/models supportsE2EE); nothing was sent"
    if named and facts.e2ee is None:
        return False, (
            f"cannot tell whether {model} is end-to-end encrypted: the model list does not say "
            "(pass --e2ee or --no-e2ee); nothing was sent in plaintext"
        )
    return False, None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _window(entry: Any, spec: Any) -> int | None:
    """The context window an entry of `/models` gives: Venice's, OpenRouter-style, vLLM's."""
    if isinstance(spec, Mapping) and (found := _count(spec.get("availableContextTokens"))):
        return found
    if isinstance(entry, Mapping):
        return _count(entry.get("context_length")) or _count(entry.get("max_model_len"))
    return None


def props_window(props: Any) -> int | None:
    """llama.cpp's window from its `/props`: `n_ctx` (top level or in its default settings)."""
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    inner = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    return _count(props.get("n_ctx")) or _count(inner)


def is_llama_cpp(models: Any, model: str) -> bool:
    """The listing is llama.cpp's (`owned_by: llamacpp`): its window is in `/props`."""
    return isinstance(models, list) and any(
        isinstance(m, Mapping) and m.get("id") == model and m.get("owned_by") == "llamacpp" for m in models
    )
