"""`venice-agent models`: the server's models, what each costs and can do, and which go away.

One `GET /models` (Venice lets anyone read it: the key is sent only when there is one), read
by `model.models.ModelInfo`, the same reading the checks before a request use. Filters keep
the models that have every capability asked for; `--json` prints them for scripts.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import VeniceAgentError
from ..fronts.failures import fail
from ..fronts.text import safe

if TYPE_CHECKING:
    from ..config import Settings


@dataclass(frozen=True)
class Filters:
    tools: bool = False
    vision: bool = False
    reasoning: bool = False
    private: bool = False  # E2EE or TEE
    search: str | None = None

    def keep(self, info: Any) -> bool:
        if self.tools and not info.function_calling:
            return False
        if self.vision and not info.vision:
            return False
        if self.reasoning and not info.reasoning:
            return False
        if self.private and not info.private:
            return False
        if self.search:
            wanted = self.search.casefold()
            return wanted in info.id.casefold() or wanted in (info.name or "").casefold()
        return True


def models_main(base_url: str | None, filters: Filters, *, json_output: bool) -> int:
    from ..fronts.settings_load import Flags, settings_from

    try:
        settings = settings_from(Flags(base_url=base_url))
        infos = asyncio.run(_listing(settings))
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status)
    shown = [info for info in infos if filters.keep(info)]
    if json_output:
        print(json.dumps([as_json(info) for info in shown], ensure_ascii=False, indent=2))
        return 0
    if not infos:
        return fail(f"{settings.venice_base_url} lists no models", 0)
    if not shown:
        return fail(f"none of the {len(infos)} models matches these filters", 0)
    for line in table(shown):
        print(safe(line))
    return 0


async def _listing(settings: Settings) -> list[Any]:
    from ..model.client import VeniceClient
    from ..model.models import model_infos

    key = settings.venice_key_value() or ""
    async with VeniceClient(key, base_url=settings.venice_base_url) as client:
        return model_infos(await client.discovery.list_models())


def can(info: Any) -> list[str]:
    """What a model supports, in the words of the table."""
    found = []
    if info.function_calling:
        found.append("tools")
    if info.vision:
        found.append("vision")
    if info.reasoning:
        efforts = "|".join(info.reasoning_efforts)
        found.append(f"reasoning ({efforts})" if efforts else "reasoning")
    if info.response_schema:
        found.append("schema")
    if info.web_search:
        found.append("web search")
    if info.e2ee:
        found.append("E2EE")
    if info.tee:
        found.append("TEE")
    return found


def _tokens(count: int | None) -> str:
    from ..core.context import short

    return "?" if count is None else short(count)


def _price(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}" if value >= 0.1 else f"{value:.3g}"


def table(infos: list[Any]) -> list[str]:
    """One line per model (id, context, USD per million tokens in, cached in and out, what it
    can do), and under a deprecated one the date it goes and what replaces it."""
    rows = [("MODEL", "CONTEXT", "IN $/M", "CACHED", "OUT $/M", "SUPPORTS")]
    for info in infos:
        prices = info.prices
        rows.append(
            (
                info.id,
                _tokens(info.context_tokens),
                _price(prices.input if prices else None),
                _price(prices.cache_input if prices else None)
                if prices and prices.cache_input is not None
                else "-",
                _price(prices.output if prices else None),
                ", ".join(can(info)) or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for number, row in enumerate(rows):
        head = [row[0].ljust(widths[0]), *(cell.rjust(widths[i]) for i, cell in enumerate(row[1:5], 1))]
        lines.append("  ".join([*head, row[5]]).rstrip())
        info = infos[number - 1] if number else None
        if info is not None and (line := info.deprecation_line()):
            lines.append(f"  ! {line}")
    return lines


def as_json(info: Any) -> dict[str, Any]:
    prices = info.prices
    return {
        "id": info.id,
        "name": info.name,
        "context_tokens": info.context_tokens,
        "usd_per_million_tokens": (
            {"input": prices.input, "cache_input": prices.cache_input, "output": prices.output}
            if prices
            else None
        ),
        "function_calling": info.function_calling,
        "vision": info.vision,
        "reasoning": info.reasoning,
        "reasoning_efforts": list(info.reasoning_efforts),
        "default_reasoning_effort": info.default_effort,
        "response_schema": info.response_schema,
        "web_search": info.web_search,
        "e2ee": info.e2ee,
        "tee": info.tee,
        "privacy": info.privacy,
        "traits": list(info.traits),
        "deprecation": (
            {"date": info.deprecated_on, "removes_at": info.removed_on, "replacement": info.replacement}
            if info.deprecated
            else None
        ),
    }
