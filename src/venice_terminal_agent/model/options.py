"""What a question asks of Venice beyond the conversation: web search, reasoning effort,
thinking off. Checked against the model's `/models` entry before any request (pure).

Venice does not map an effort a model does not take (an unsupported `reasoning_effort` is a
400 from upstream, Grok refuses the field at all), so a level is checked against the model's
`reasoningEffortOptions` and a model that lists none gets none sent: refused here, with the
levels it takes. `venice_parameters` go only to a server that takes them (not OpenAI's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.defaults import WEB_SEARCH_USD
from ..core.errors import ConfigError
from .models import ModelInfo

WEB_SEARCH = ("off", "on", "auto")  # venice_parameters.enable_web_search
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")  # swagger's reasoning_effort


@dataclass(frozen=True)
class RequestOptions:
    web_search: str = "off"
    reasoning_effort: str | None = None
    no_thinking: bool = False

    def checked(self, model: str, info: ModelInfo | None, *, venice: bool) -> dict[str, Any]:
        """The request fields these options add, for `model` (its `/models` entry, None when the
        server did not list it); `ConfigError` for an option the model or server cannot take."""
        fields: dict[str, Any] = {}
        venice_parameters: dict[str, Any] = {}
        if self.web_search != "off":
            if not venice:
                raise ConfigError(
                    "--web-search is Venice's (venice_parameters), and this server is not Venice"
                )
            if info is not None and info.web_search is False:
                raise ConfigError(f"{model} does not support web search (venice-agent models shows which do)")
            # Citations ask the model to mark what it drew on with ^1^, the list under the answer.
            venice_parameters.update(enable_web_search=self.web_search, enable_web_citations=True)
        if self.reasoning_effort is not None:
            if self.no_thinking:
                raise ConfigError("--reasoning-effort and --no-thinking contradict each other: give one")
            if info is not None:
                takes = info.reasoning_efforts
                if not takes:
                    why = "it does not reason" if info.reasoning is False else "it lists no effort levels"
                    raise ConfigError(f"{model} takes no --reasoning-effort ({why}); leave it out")
                if self.reasoning_effort not in takes:
                    raise ConfigError(
                        f"{model} takes --reasoning-effort {'|'.join(takes)}, not {self.reasoning_effort}"
                    )
            fields["reasoning_effort"] = self.reasoning_effort
        if self.no_thinking and (info is None or info.reasoning is not False):
            if not venice:
                raise ConfigError(
                    "--no-thinking is Venice's (venice_parameters), and this server is not Venice"
                )
            # Venice: "on supported reasoning models, will disable thinking"; a model that does
            # not reason has nothing to turn off, and gets nothing sent.
            venice_parameters["disable_thinking"] = True
        if venice_parameters:
            fields["venice_parameters"] = venice_parameters
        return fields

    def search_usd(self, info: ModelInfo | None) -> float:
        """The most one request's web search can cost: the price `/models` gives, else ours."""
        if self.web_search == "off":
            return 0.0
        given = info.web_search_usd if info is not None else None
        return given if given is not None else WEB_SEARCH_USD
