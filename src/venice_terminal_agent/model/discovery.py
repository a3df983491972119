"""Model discovery: which model a session uses and what the server says of it.

`resolve_model` picks the model (the one asked for, checked against the server's list; else
the server's `function_calling_default` trait, its `default` trait, or the only model it
serves); `model_facts` reads its prices, output limit, window and tool support from
`GET /models`, asked at most once per session (llama-server's window from `/props`).
Discovery has `DISCOVERY_TIMEOUT` in all, then start-up gives up with a sentence that says
what to check. It speaks over the client's HTTP connection (`VeniceClient.discovery`), and
every error it raises is masked with the client's secrets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from ..core.errors import ConfigError, ModelError, NoModelError
from .errors import describe, foreign_errors, one_line
from .models import ModelFacts, is_llama_cpp, listed, props_window, unlisted, venice_headers

if TYPE_CHECKING:
    from .wire import OpenAIHttp

MODEL_TRAITS = ("function_calling_default", "default")
DISCOVERY_TIMEOUT = 30.0  # seconds model discovery may take in all, then start-up gives up
T = TypeVar("T")


class ModelDiscovery:
    """The server's models, as one session sees them."""

    def __init__(
        self,
        http: OpenAIHttp,
        base_url: str,
        headers: dict[str, str],
        masked: Callable[[ModelError], ModelError],
        timeout: float = DISCOVERY_TIMEOUT,
    ) -> None:
        """`headers`: the client's latest Venice headers, updated by every answer read here;
        `masked`: the client's secrets taken out of an error's message."""
        self.http, self.base_url, self.headers, self.masked = http, base_url, headers, masked
        self.timeout = timeout
        self._listing: Any = None  # GET /models, asked at most once per session
        self._listing_error: str | None = None  # why GET /models failed, when it did
        self._listing_failure: ModelError | None = None  # and the error itself

    async def resolve_model(self, requested: str | None) -> str:
        """The model to use: `requested` (the --model flag, else VENICE_MODEL), else the
        server's `function_calling_default` trait, else its `default` trait, else the only
        model it serves. Raises `NoModelError` when none resolves, and `ConfigError` (naming
        the nearest ids) when `requested` is not a model the server lists."""
        if requested and requested.strip():
            await self._check_listed(requested.strip())
            return requested.strip()
        return await self._within_discovery(self._discover())

    async def model_facts(self, model: str, *, strict: bool = False) -> ModelFacts:
        """Prices, output limit and tool support of `model`, from `GET /models` (asked once).

        A listing that fails leaves every fact unknown: the question still runs, uncapped.
        `strict`: the server must answer, as discovery asks it to (`serve` checks a pinned
        model's server at start so): a failure is the same `ModelError` discovery's is."""
        await self._models(strict=strict)
        facts = ModelFacts.from_listing(self._listing, model)
        if facts.context_window is None and is_llama_cpp(self._listing, model):
            facts = await self._llama_cpp_window(facts)
        return facts.replace(listing_error=self._listing_error) if self._listing_error else facts

    async def check(self) -> None:
        """A `ModelError` unless the server answers its model listing now (what start-up asks)."""
        await self._within_discovery(self._get_data("models", required=True))

    async def list_models(self) -> list[Any]:
        """The server's models (`GET /models`): Venice's carry `model_spec.capabilities`."""
        models = await self._get_data("models", required=True)
        return models if isinstance(models, list) else []

    async def _check_listed(self, model: str) -> None:
        """`ConfigError` when the server lists its models and `model` is none of them, nor a
        name Venice also takes for one (a trait, a compatibility mapping's). A server whose
        list cannot be read, or lists nothing, is taken at its word (as before any check)."""
        listing = await self._models()
        if listed(listing, model):
            return
        for path in ("models/traits", "models/compatibility_mapping"):  # asked only on a miss
            try:
                names = await self._get_data(path)
            except ModelError:
                names = None
            if isinstance(names, dict) and model.split(":")[0] in names:
                return
        raise ConfigError(unlisted(model, listing, self.base_url))

    async def _models(self, *, strict: bool = False) -> Any:
        """`GET /models`, asked at most once per session: [] when it failed (and why is kept).
        `strict`: a failure is raised, as discovery's is."""
        if self._listing is None:
            try:
                self._listing = await self._within_discovery(self._get_data("models", required=True)) or []
            except ModelError as error:
                self._listing, self._listing_error, self._listing_failure = [], error.message, error
        if strict and self._listing_failure is not None:
            raise self._listing_failure
        return self._listing

    async def _within_discovery(self, asking: Awaitable[T]) -> T:
        try:
            async with asyncio.timeout(self.timeout):
                return await asking
        except TimeoutError:
            host = urlsplit(self.base_url).hostname or self.base_url
            raise ModelError(
                f"{host} did not answer the request for its models within {self.timeout:g} s; "
                "check VENICE_BASE_URL, or pass --model"
            ) from None

    async def _discover(self) -> str:
        traits = await self._get_data("models/traits")
        if isinstance(traits, dict):
            for trait in MODEL_TRAITS:
                chosen = traits.get(trait)
                if isinstance(chosen, str) and chosen:
                    return chosen
        models = self._listing = await self._get_data("models", required=True)
        ids = (
            [m["id"] for m in models if isinstance(m, dict) and m.get("id")]
            if isinstance(models, list)
            else []
        )
        if len(ids) == 1:
            return str(ids[0])
        offered = f"; it serves {', '.join(ids[:8])}" + (" …" if len(ids) > 8 else "") if ids else ""
        raise self.masked(
            NoModelError(
                f"no model chosen and {self.base_url} suggests none: pass --model or set VENICE_MODEL{offered}"
            )
        )

    async def _llama_cpp_window(self, facts: ModelFacts) -> ModelFacts:
        """llama-server says its window (`n_ctx`) at `/props`, at the server's root, not under /v1."""
        parts = urlsplit(self.base_url)
        failures: tuple[type[BaseException], ...] = (ValueError, *foreign_errors())
        try:
            props = (await self.http.get(f"{parts.scheme}://{parts.netloc}/props")).json()
        except failures:
            return facts  # unknown, said as unknown
        window = props_window(props)
        if window is None:
            return facts
        return facts.replace(context_window=window, context_source="llama.cpp's /props")

    async def _get_data(self, path: str, *, required: bool = False) -> Any:
        """`data` of a GET, or None when the server does not have that route (not Venice).
        `required`: every OpenAI-compatible server has it (`/models`), so a 404 means the base
        URL is wrong, said with the URL asked."""
        try:
            # The whole response, for its headers (Venice may say the balance on any answer).
            response = await self.http.get(path)
            self.headers.update(venice_headers(response.headers))
            answer = response.json()
        except ValueError:
            return None  # not JSON: not an OpenAI-compatible listing
        except foreign_errors() as error:
            problem = self.masked(describe(error, self.base_url))
            if problem.status in (404, 405) and not required:
                return None
            raise ModelError(
                one_line(f"cannot list models: {problem.message}"), status=problem.status
            ) from None
        return answer.get("data") if isinstance(answer, dict) else None
