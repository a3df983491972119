"""Settings: flag > environment > `.env` > user config > default, with one readable error for a
bad value.

Flags reach `load_settings` as keyword arguments; a flag left at `None` was not given and
never overrides the environment. Secrets are `SecretStr`, so they never print by accident.
The user config file (`venice-agent config set`, `~/.config/venice-agent/config.toml` on
Linux) holds the settings a person sets once, by their `KEYS` name; never a key or a token
(`SECRET_KEYS` are refused with where they go instead).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from .core.defaults import (
    APIFY_MCP_URL,
    APP_NAME,
    COMPACT_AT,
    MAX_ROUNDS,
    MCP_CALL_TIMEOUT,
    MCP_LIST_CACHE_HOURS,
    PAGE_CHARS,
    TOOL_SEARCH_SHARE,
    TOOL_SEARCH_TOOLS,
    TOOL_SEARCH_TOP_K,
    VENICE_BASE_URL,
)
from .core.errors import ConfigError

VENICE_KEY_HELP = (
    "set VENICE_API_KEY (environment or .env); get a key at https://venice.ai/settings/api, "
    "or try the agent without one: venice-agent demo"
)
USER_CONFIG_FILE = "config.toml"

# The user config file's keys (what `config set` takes) and the setting each one is.
KEYS: dict[str, str] = {
    "model": "venice_model",
    "base-url": "venice_base_url",
    "temperature": "venice_temperature",
    "sessions": "venice_agent_sessions",
    "mcp-config": "venice_agent_mcp_config",
    "max-usd": "max_usd",
    "session-max-usd": "session_max_usd",
    "max-completion-tokens": "max_completion_tokens",
    "context-tokens": "context_tokens",
    "compact": "compact",
    "compact-at": "compact_at",
    "max-rounds": "max_rounds",
    "max-tool-result-chars": "max_tool_result_chars",
    "mcp-call-timeout": "mcp_call_timeout",
    "mcp-list-cache-hours": "mcp_list_cache_hours",
    "file-tools": "file_tools",
    "apify-transport": "apify_mcp_transport",
    "apify-tools": "apify_mcp_tools",
    "apify-url": "apify_mcp_url",
    "tool-search": "tool_search",
    "tool-search-tools": "tool_search_tools",
    "tool-search-share": "tool_search_share",
    "tool-search-top-k": "tool_search_top_k",
}
# Never written to the config file: a key or a token stays where it is kept safe.
SECRET_KEYS: dict[str, str] = {
    "venice-api-key": "VENICE_API_KEY stays in the environment or .env, never in the config file",
    "api-key": "VENICE_API_KEY stays in the environment or .env, never in the config file",
    "apify-token": (
        "APIFY_TOKEN stays in the environment or .env (or run venice-agent login apify), "
        "never in the config file"
    ),
}


def user_config_file() -> Path:
    """The user config file (e.g. ~/.config/venice-agent/config.toml), whether it exists or not."""
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False) / USER_CONFIG_FILE


def read_user_config(path: Path | None = None) -> dict[str, Any]:
    """The user config file's values by key ({} when there is none); `ConfigError` if unreadable."""
    path = path or user_config_file()
    if not os.path.lexists(path):
        return {}  # the usual case: nothing to parse, and neither the reader nor the parser is imported
    import tomllib

    from .core.files import read_text

    text = read_text(path, f"the user config {path}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"the user config {path} is not TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"the user config {path} is not TOML: nested too deeply") from None


def write_user_config(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write `values` (key: string, number or boolean) as the user config file, whole, through
    a temporary file, so a reader never sees half of it."""
    import json

    path = path or user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# venice-agent settings (venice-agent config set KEY VALUE); no key or token here"]
    for key, value in values.items():
        # A JSON string is a TOML basic string; booleans and numbers are written alike.
        lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


class UserConfigSource(PydanticBaseSettingsSource):
    """The user config file, between `.env` and the defaults; its secrets are never read."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ gives every value at once

    def __call__(self) -> dict[str, Any]:
        found = read_user_config()
        return {KEYS[key]: value for key, value in found.items() if key in KEYS}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )

    venice_api_key: SecretStr | None = None
    venice_model: str | None = None
    venice_base_url: str = VENICE_BASE_URL
    venice_temperature: float | None = Field(default=None, ge=0.0, le=2.0)

    apify_token: SecretStr | None = None
    apify_mcp_transport: Literal["http", "stdio"] = "http"
    apify_mcp_tools: str | None = None
    apify_mcp_url: str = APIFY_MCP_URL

    max_rounds: int = Field(default=MAX_ROUNDS, ge=1, le=40)
    max_tool_result_chars: int = Field(default=PAGE_CHARS, ge=1_000)
    mcp_call_timeout: float = Field(default=MCP_CALL_TIMEOUT, gt=0)
    # How long a server's tool list, cached, may open a one-shot question (mcp/list_cache.py); 0: never.
    mcp_list_cache_hours: float = Field(default=MCP_LIST_CACHE_HOURS, ge=0)
    auto_approve_tools: bool = False
    file_tools: bool = True  # FILE_TOOLS=0 (or --no-files) leaves read_file and list_files out
    save_history: bool = False
    venice_agent_db: str | None = None
    venice_agent_sessions: bool = False  # keep conversations (`config set sessions on`, --save)
    venice_agent_mcp_config: str | None = None  # the MCP servers file when --mcp-config is not given
    venice_agent_verbose: bool = False  # MCP servers' log messages on stderr
    # Money: caps in USD (per question, per REPL session) and the output limit sent with requests.
    # Finite: an infinite cap (`--max-usd 1e400` reads as inf) would cap nothing, silently.
    max_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    session_max_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    # Context: the model's window when the server does not say (or less of it), and compaction.
    context_tokens: int | None = Field(default=None, ge=1_000)
    compact: bool = True  # COMPACT=0 (or --no-compact): never compact on its own
    compact_at: float = Field(default=COMPACT_AT, gt=0.1, lt=1.0)
    # Tool search (tools/search.py): a big catalogue searched instead of sent whole.
    tool_search: Literal["auto", "on", "off"] = "auto"
    tool_search_tools: int = Field(default=TOOL_SEARCH_TOOLS, ge=1)
    tool_search_share: float = Field(default=TOOL_SEARCH_SHARE, gt=0, le=1)
    tool_search_top_k: int = Field(default=TOOL_SEARCH_TOP_K, ge=1, le=50)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # flag > environment > .env > user config > default
        user_config = UserConfigSource(settings_cls)
        return init_settings, env_settings, dotenv_settings, user_config, file_secret_settings

    @field_validator("venice_base_url", "apify_mcp_url")
    @classmethod
    def _an_http_url(cls, value: str, info: ValidationInfo) -> str:
        # Caught here, before any request: a malformed URL is a setting to fix, not a server
        # failing (which would be retried and end as a model error).
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            example = VENICE_BASE_URL if info.field_name == "venice_base_url" else APIFY_MCP_URL
            raise ValueError(f"{value!r} is not an http(s) URL, e.g. {example}")
        return value.strip()

    def require_venice_key(self) -> str:
        key = self.venice_key_value()
        if key is None:
            raise ConfigError(f"no Venice API key: {VENICE_KEY_HELP}")
        return key

    def venice_key_value(self) -> str | None:
        key = self.venice_api_key.get_secret_value().strip() if self.venice_api_key else ""
        return key or None

    def apify_token_value(self) -> str | None:
        token = self.apify_token.get_secret_value().strip() if self.apify_token else ""
        return token or None

    def secrets(self, servers: Iterable[Any] = ()) -> list[str]:
        """Every secret a run holds, to mask wherever a server's text is shown or kept: the Venice
        key, the Apify token, and each MCP server's headers, env and `${NAME}` values."""
        found = [self.venice_key_value(), self.apify_token_value()]
        return [value for value in found if value] + [v for server in servers for v in server.secret_values()]


def load_settings(**overrides: Any) -> Settings:
    """Settings from flags (non-None keyword arguments), the environment, `.env`, defaults."""
    given = {name: value for name, value in overrides.items() if value is not None}
    if os.path.exists(".env") and not os.path.isfile(".env") and not os.path.isdir(".env"):
        # pydantic-settings reads a FIFO (for `<(…)`) and would wait for a writer for ever; a
        # folder (a virtual environment named .env) or no file is skipped, as it skips them.
        from .core.files import read_bytes

        read_bytes(".env", ".env")  # says what it is, in one line
    try:
        return Settings(**given)
    except ValidationError as error:
        raise ConfigError(_explain(error, given)) from None


# The flags whose name is not the setting's own (`--max-usd` is max_usd's): what a bad value
# given on the command line is named by.
_FLAGS = {
    "venice_model": "--model",
    "venice_base_url": "--base-url",
    "apify_mcp_transport": "--transport",
    "apify_mcp_tools": "--tools",
    "venice_agent_db": "--db",
}


def _explain(error: ValidationError, flags: Iterable[str] = ()) -> str:
    """One line for what pydantic found: each setting named as it was given (its flag when
    `flags` holds its field, else its environment variable) and why, in our words."""
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "settings"
        name = _FLAGS.get(field, "--" + field.replace("_", "-")) if field in flags else field.upper()
        problems.append(f"{name}: {_reason(item)}")
    return "bad setting: " + "; ".join(problems)


def _reason(item: Any) -> str:
    """Why pydantic refused a value, said plainly, with the value given."""
    limits = {
        key: f"{value:g}" if isinstance(value, float) else value
        for key, value in (item.get("ctx") or {}).items()
    }
    given = item.get("input")
    shown = f"{given:g}" if isinstance(given, float) else str(given)
    plain = {
        "greater_than": f"must be more than {limits.get('gt')}, not {shown}",
        "greater_than_equal": f"must be {limits.get('ge')} or more, not {shown}",
        "less_than": f"must be less than {limits.get('lt')}, not {shown}",
        "less_than_equal": f"must be {limits.get('le')} or less, not {shown}",
        "bool_parsing": f"must be on or off (also true/false, yes/no, 1/0), not {shown!r}",
        "int_parsing": f"must be a whole number, not {shown!r}",
        "float_parsing": f"must be a number, not {shown!r}",
        "finite_number": f"must be a finite number, not {shown}",
    }.get(item["type"])
    return plain if plain is not None else str(item["msg"]).removeprefix("Value error, ")


@cache
def _one_value() -> type[Settings]:
    """Settings from the given values alone: a value checked without the environment's.

    Built on first use (`config set`): a subclass is a second pydantic model, its schema and
    validator built again for every field, which a question never needs (issue 21)."""

    class _OneValue(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return (init_settings,)

    return _OneValue


def check_value(key: str, value: str) -> Any:
    """`value` for `key` as the settings read it (typed: a number, a boolean, a full path);
    `ConfigError` for a key that is unknown or secret, or a value the setting refuses."""
    if key in SECRET_KEYS or key.endswith(("key", "-token", "secret")) or key == "token":
        secret = (
            f"{key} would be a secret, and secrets stay in the environment or .env, never in the config file"
        )
        raise ConfigError(SECRET_KEYS.get(key, secret))
    if key not in KEYS:
        raise ConfigError(f"no setting {key!r}; the settings are: {', '.join(KEYS)}")
    field = KEYS[key]
    if field == "venice_agent_mcp_config":  # a relative path would mean another file in each folder
        value = os.path.realpath(os.path.expanduser(value))  # os.path: no raising on ~nobody
    try:
        given: dict[str, Any] = {field: value}
        checked = _one_value()(**given)
    except ValidationError as error:
        raise ConfigError(_explain(error).replace(field.upper(), key, 1)) from None
    return getattr(checked, field)


def env_name(key: str) -> str:
    """The environment variable of a `KEYS` key (VENICE_MODEL for model)."""
    return KEYS[key].upper()


def origin(key: str, dotenv: dict[str, str | None], user: dict[str, Any]) -> str:
    """Where the value of `key` comes from: environment, .env, user config or default."""
    name = env_name(key)
    if any(variable.upper() == name for variable in os.environ):
        return f"environment ({name})"
    if any(variable.upper() == name for variable in dotenv):
        return f".env ({name})"
    if key in user:
        return "user config"
    return "default"
