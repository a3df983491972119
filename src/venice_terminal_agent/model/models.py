"""What `/models` and Venice's response headers say about a model and the account (pure).

`ModelFacts.from_listing` reads one model's entry of `GET /models`: its prices
(`model_spec.pricing`), its output limit (`model_spec.maxCompletionTokens`) and whether it
calls functions (`model_spec.capabilities.supportsFunctionCalling`), and its context window
(`model_spec.availableContextTokens`, else the entry's `context_length`, or vLLM's
`max_model_len`; llama.cpp's comes from its `/props`, read by discovery.py). A fact a server does
not give is None (unknown), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from ..core.costs import Prices
from ..core.record import Record
from ..core.wording import did_you_mean

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


class ModelFacts(Record):
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
    # The whole entry, read (capabilities, deprecation); not compared: the facts above decide.
    info: ModelInfo | None = field(default=None, compare=False)

    @classmethod
    def from_listing(cls, models: object, model: str) -> ModelFacts:
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
            info=ModelInfo.from_entry(entry) if entry is not None else None,
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


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _window(entry: object, spec: object) -> int | None:
    """The context window an entry of `/models` gives: Venice's, OpenRouter-style, vLLM's."""
    if isinstance(spec, Mapping) and (found := _count(spec.get("availableContextTokens"))):
        return found
    if isinstance(entry, Mapping):
        return _count(entry.get("context_length")) or _count(entry.get("max_model_len"))
    return None


def listed(models: object, model: str) -> bool:
    """`model` may be asked of the server that listed `models`: one of its ids, or a trait one
    of them carries (Venice takes "default"), a feature suffix (`…:enable_web_search=on`) or
    tag (Ollama's `:latest`) aside; True too when there is nothing to check it against (no
    list) or the server answers any name (llama.cpp's own server, one model)."""
    entries = (
        [m for m in models if isinstance(m, Mapping) and m.get("id")] if isinstance(models, list) else []
    )
    if not entries or any(m.get("owned_by") == "llamacpp" for m in entries):
        return True
    bare = model.split(":")[0]
    names = {str(m["id"]) for m in entries} | {str(m["id"]).split(":")[0] for m in entries}
    for m in entries:
        spec = m.get("model_spec")
        traits = spec.get("traits") if isinstance(spec, Mapping) else None
        names.update(t for t in traits or () if isinstance(t, str))
    return model in names or bare in names


def unlisted(model: str, models: object, where: str) -> str:
    """Why `model` is refused: not among the ids `where` lists; the nearest ones named."""
    import difflib  # only on this path

    entries = models if isinstance(models, list | tuple) else ()
    ids = [str(m["id"]) for m in entries if isinstance(m, Mapping) and m.get("id")]
    low = model.lower()
    near = [i for i in ids if low in i.lower() or i.lower() in low]
    near += [i for i in difflib.get_close_matches(model, ids, n=3) if i not in near]
    near = (near or difflib.get_close_matches(model, ids, n=3, cutoff=0.0))[:3]
    return (
        f"{model} is not a model {where} lists: {did_you_mean(near)} (venice-agent models lists "
        f"all {len(ids)}; pass --model or set VENICE_MODEL)"
    )


def props_window(props: object) -> int | None:
    """llama.cpp's window from its `/props`: `n_ctx` (top level or in its default settings)."""
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    inner = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    return _count(props.get("n_ctx")) or _count(inner)


def is_llama_cpp(models: object, model: str) -> bool:
    """The listing is llama.cpp's (`owned_by: llamacpp`): its window is in `/props`."""
    return isinstance(models, list) and any(
        isinstance(m, Mapping) and m.get("id") == model and m.get("owned_by") == "llamacpp" for m in models
    )


def _flag(capabilities: Mapping[str, Any], name: str) -> bool | None:
    value = capabilities.get(name)
    return value if isinstance(value, bool) else None


class ModelInfo(Record):
    """One model of `GET /models` as `venice-agent models` lists it (and the checks before a
    request read it): what it costs, what it can do, whether it goes away. None: not said."""

    id: str
    name: str | None = None
    context_tokens: int | None = None  # model_spec.availableContextTokens (or context_length)
    prices: Prices | None = None
    function_calling: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    reasoning_efforts: tuple[str, ...] = ()  # capabilities.reasoningEffortOptions
    default_effort: str | None = None
    response_schema: bool | None = None
    web_search: bool | None = None
    e2ee: bool | None = None
    tee: bool | None = None
    privacy: str | None = None  # model_spec.privacy: private | anonymized
    traits: tuple[str, ...] = ()
    deprecated_on: str | None = None  # model_spec.deprecation.date
    removed_on: str | None = None  # model_spec.deprecation.removesAt
    replacement: str | None = None  # model_spec.deprecation.replacementModelId
    web_search_usd: float | None = None  # pricing.web_search (per request), when the server says

    @property
    def private(self) -> bool:
        """End-to-end encrypted or run in a TEE: what `--private` filters on."""
        return bool(self.e2ee or self.tee)

    @property
    def deprecated(self) -> bool:
        return bool(self.deprecated_on or self.removed_on or self.replacement)

    def deprecation_line(self) -> str | None:
        """`deprecated since 2026-08-27, removed 2026-08-27; use X instead`, or None."""
        if not self.deprecated:
            return None
        parts = ["deprecated" + (f" since {self.deprecated_on[:10]}" if self.deprecated_on else "")]
        if self.removed_on:
            parts.append(f"removed {self.removed_on[:10]}")
        line = ", ".join(parts)
        return line + (f"; use {self.replacement} instead" if self.replacement else "")

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> ModelInfo:
        spec = entry.get("model_spec")
        spec = spec if isinstance(spec, Mapping) else {}
        caps = spec.get("capabilities")
        caps = caps if isinstance(caps, Mapping) else {}
        context = spec.get("availableContextTokens", entry.get("context_length"))
        efforts = caps.get("reasoningEffortOptions")
        old = spec.get("deprecation")
        old = old if isinstance(old, Mapping) else {}
        pricing = spec.get("pricing")
        search = pricing.get("web_search") if isinstance(pricing, Mapping) else None
        search_usd = search.get("usd") if isinstance(search, Mapping) else search

        def text(value: object) -> str | None:
            return value if isinstance(value, str) and value else None

        return cls(
            id=str(entry.get("id") or ""),
            name=text(spec.get("name")),
            context_tokens=int(context) if isinstance(context, int | float) and context > 0 else None,
            prices=Prices.from_pricing(pricing),
            function_calling=_flag(caps, "supportsFunctionCalling"),
            vision=_flag(caps, "supportsVision"),
            reasoning=_flag(caps, "supportsReasoning"),
            reasoning_efforts=tuple(e for e in efforts if isinstance(e, str))
            if isinstance(efforts, list)
            else (),
            default_effort=text(caps.get("defaultReasoningEffort")),
            response_schema=_flag(caps, "supportsResponseSchema"),
            web_search=_flag(caps, "supportsWebSearch"),
            e2ee=_flag(caps, "supportsE2EE"),
            tee=_flag(caps, "supportsTeeAttestation"),
            privacy=text(spec.get("privacy")),
            traits=tuple(t for t in spec.get("traits") or () if isinstance(t, str)),
            deprecated_on=text(old.get("date")) or text(old.get("startsAt")),
            removed_on=text(old.get("removesAt")),
            replacement=text(old.get("replacementModelId")),
            web_search_usd=float(search_usd)
            if isinstance(search_usd, int | float) and search_usd >= 0
            else None,
        )


def model_infos(models: object) -> list[ModelInfo]:
    """Every model of a `GET /models` listing that has an id, in the server's order."""
    if not isinstance(models, list):
        return []
    return [ModelInfo.from_entry(m) for m in models if isinstance(m, Mapping) and m.get("id")]


def model_info(models: object, model: str) -> ModelInfo | None:
    """`model`'s entry of the listing, or None when the server does not list it."""
    return next((info for info in model_infos(models) if info.id == model), None)


def deprecation_notice(model: str, info: ModelInfo | None, headers: Mapping[str, str]) -> str | None:
    """One line for the start of a session when `model` goes away: what `/models` says of it
    (its dates and replacement), else Venice's `x-venice-model-deprecation-warning`; or None."""
    line = info.deprecation_line() if info is not None else None
    said = deprecation(headers)
    if line is None and said is None:
        return None
    return f"{model} is {line}" if line is not None else f"{model}: {said}"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class Balance(Record):
    """`GET /billing/balance`: what is left (USD, this epoch's DIEM) and what pays next."""

    usd: float | None = None
    diem: float | None = None
    diem_epoch: float | None = None  # the epoch's whole DIEM allocation
    currency: str | None = None  # consumptionCurrency: DIEM or USD
    can_consume: bool | None = None

    @classmethod
    def from_body(cls, body: object) -> Balance | None:
        if not isinstance(body, Mapping) or not isinstance(body.get("balances"), Mapping):
            return None
        balances = body["balances"]
        can = body.get("canConsume")
        currency = body.get("consumptionCurrency")
        return cls(
            usd=_number(balances.get("usd")),
            diem=_number(balances.get("diem")),
            diem_epoch=_number(body.get("diemEpochAllocation")),
            currency=currency if isinstance(currency, str) else None,
            can_consume=can if isinstance(can, bool) else None,
        )

    def line(self) -> str:
        """`$25.00 · 90.5 of 100 DIEM this epoch · paying in DIEM`."""
        parts = []
        if self.usd is not None:
            parts.append(f"${self.usd:,.2f}")
        if self.diem is not None:
            of = f" of {self.diem_epoch:g}" if self.diem_epoch else ""
            parts.append(f"{self.diem:g}{of} DIEM this epoch")
        if self.currency:
            parts.append(f"paying in {self.currency}")
        return " · ".join(parts) or "no balance given"


def _amount(amount: float) -> str:
    return f"{int(amount):,}" if float(amount).is_integer() else f"{amount:,}"


def rate_limit_line(body: object, model: str | None) -> str | None:
    """`GET /api_keys/rate_limits` for `model` in one line: `zai-org-glm-5-2: 500 RPM, 1,000,000
    TPM · tier paid`; None when the body is not that answer."""
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, Mapping):
        return None
    tier = data.get("apiTier")
    tier_id = tier.get("id") if isinstance(tier, Mapping) else None
    limits = [entry for entry in data.get("rateLimits") or () if isinstance(entry, Mapping)]
    mine = next((entry for entry in limits if entry.get("apiModelId") == model), None)
    parts = []
    if mine is not None:
        each = [
            f"{_amount(limit['amount'])} {limit['type']}"
            for limit in mine.get("rateLimits") or ()
            if isinstance(limit, Mapping) and _number(limit.get("amount")) is not None and limit.get("type")
        ]
        parts.append(f"{model}: {', '.join(each) or 'none stated'}")
    elif limits:
        parts.append(f"{len(limits)} models limited, {model or 'the model'} not among them")
    if isinstance(tier_id, str):
        parts.append(f"tier {tier_id}")
    if data.get("accessPermitted") is False:
        parts.append("inference not permitted for this key")
    return " · ".join(parts) or "no limits given"
