"""Settings: flag > environment > `.env` > default, with one readable error for a bad value.

Flags reach `load_settings` as keyword arguments; a flag left at `None` was not given and
never overrides the environment. Secrets are `SecretStr`, so they never print by accident.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .core.defaults import MAX_ROUNDS, PAGE_CHARS
from .core.errors import ConfigError

VENICE_BASE_URL = "https://api.venice.ai/api/v1"
APIFY_MCP_URL = "https://mcp.apify.com"
VENICE_KEY_HELP = "set VENICE_API_KEY (environment or .env); get a key at https://venice.ai/settings/api"
APIFY_TOKEN_HELP = "set APIFY_TOKEN; get one at https://console.apify.com/settings/integrations"
MCP_CALL_TIMEOUT = 300.0  # seconds an MCP tool call may take before it ends with that reason


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
    auto_approve_tools: bool = False
    file_tools: bool = True  # FILE_TOOLS=0 (or --no-files) leaves read_file and list_files out
    save_history: bool = False
    venice_agent_db: str | None = None
    venice_agent_verbose: bool = False  # MCP servers' log messages on stderr
    # Money: caps in USD (per question, per REPL session) and the output limit sent with requests.
    max_usd: float | None = Field(default=None, gt=0)
    session_max_usd: float | None = Field(default=None, gt=0)
    max_completion_tokens: int | None = Field(default=None, ge=1)

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
        key = self.venice_api_key.get_secret_value().strip() if self.venice_api_key else ""
        if not key:
            raise ConfigError(f"no Venice API key: {VENICE_KEY_HELP}")
        return key

    def apify_token_value(self) -> str | None:
        token = self.apify_token.get_secret_value().strip() if self.apify_token else ""
        return token or None


def load_settings(**overrides: Any) -> Settings:
    """Settings from flags (non-None keyword arguments), the environment, `.env`, defaults."""
    given = {name: value for name, value in overrides.items() if value is not None}
    try:
        return Settings(**given)
    except ValidationError as error:
        raise ConfigError(_explain(error)) from None


def _explain(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "settings"
        problems.append(f"{name.upper()}: {item['msg'].removeprefix('Value error, ')}")
    return "bad setting: " + "; ".join(problems)
