"""One error tree: every failure we expect and can explain in one line is a `VeniceAgentError`.

Each subclass carries the process exit status a command ends with when it is not caught
nearer (`exit_status`); docs/loop.md's table lists them. Exceptions of the libraries below us
(httpx2, mcp, sqlite3) are translated into these where we call them, and only there.
Anything else that escapes is a bug of ours: the command line says so and exits 1 (`CRASH_STATUS`),
it never passes for a model or tool failure.

The old homes of these names (`tools.base.ToolError`, `config.ConfigError`, ...) still import.
"""

from __future__ import annotations

from .exits import EXIT_STATUS, USAGE_ERROR_STATUS, Exit

CRASH_STATUS = 1  # a bug in venice-agent itself
CRASHED = f"{CRASH_STATUS} a crash (a bug in venice-agent: please report it)"  # for help texts


class VeniceAgentError(Exception):
    """The root: `message` is one line for people that says what went wrong and what to do."""

    exit_status: int = USAGE_ERROR_STATUS

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(VeniceAgentError):
    """A missing or bad setting, flag or configuration file, said with what to set."""


class PlanError(VeniceAgentError):
    """A plan file (`venice-agent run PLAN`) that cannot run, said with where and what."""


class StoreError(VeniceAgentError):
    """The store cannot be used: said with the file and what to do."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now (Redis down): try again later; nothing was spent."""


class ModelError(VeniceAgentError):
    """The model API failed; what a retry needs to know rides along (retryable, Retry-After)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after

    @property
    def exit_status(self) -> int:  # type: ignore[override]
        # A rejected key ends as a question's `key_rejected` does, at start-up too; an empty
        # balance is the user's setup to fix; anything else is the model API failing, as a
        # question's `model_error` would be.
        if self.status in (401, 403):
            return EXIT_STATUS[Exit.KEY_REJECTED]
        return USAGE_ERROR_STATUS if self.status == 402 else EXIT_STATUS[Exit.MODEL_ERROR]


class ContextFullError(ModelError):
    """The server said the request is longer than the model's window (its own 400): the
    question ends `context_full`, not `model_error`."""

    @property
    def exit_status(self) -> int:  # type: ignore[override]
        return EXIT_STATUS[Exit.CONTEXT_FULL]


class OutputMaximumError(ModelError):
    """The server refused an output limit above the model's maximum and named the maximum
    (Venice's 400 "max_completion_tokens (8192) exceeds the maximum allowed for model 'm'
    (4096)"): the request is asked again once with `maximum`, which the session keeps."""

    def __init__(self, message: str, *, maximum: int, status: int | None = 400) -> None:
        super().__init__(message, status=status)
        self.maximum = maximum


class PaymentError(ModelError):
    """A 402: the money ran out. `code` says which (Venice's `INSUFFICIENT_BALANCE`,
    `API_KEY_USD_SPEND_LIMIT_EXCEEDED`, `API_KEY_DIEM_SPEND_LIMIT_EXCEEDED`; None: not said).
    Never retried; the person's to fix (exit status 2)."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message, status=402, retryable=False)
        self.code = code


class NoModelError(ModelError):
    """No model was named and the server suggested none: a setup problem, not a failed run."""

    @property
    def exit_status(self) -> int:  # type: ignore[override]
        return USAGE_ERROR_STATUS


class PrivateError(ModelError):
    """A model meant to be used end-to-end encrypted cannot be: its attestation, the key
    exchange or a piece of its answer failed, or nobody can tell it is E2EE. Never retried, and
    nothing is sent in plaintext instead."""

    @property
    def exit_status(self) -> int:  # type: ignore[override]
        return EXIT_STATUS[Exit.PRIVATE_FAILED]


class Refused(ModelError):
    """A model request that something outside the loop would not let go out, and the exit its
    question ends on: a money cap shared by many questions had nothing left (`cost_cap`), or a
    durable run found the request recorded as sent by a worker that died (`interrupted`: it
    may have reached the server, so it is not sent again)."""

    def __init__(self, message: str, *, exit: Exit) -> None:
        super().__init__(message)
        self.exit = exit

    @property
    def exit_status(self) -> int:  # type: ignore[override]
        return EXIT_STATUS[self.exit]


class ToolError(VeniceAgentError):
    """A tool refuses: the message is a readable reason, shown to the person or the model."""

    exit_status = EXIT_STATUS[Exit.TOOL_ERROR]


class ServerError(VeniceAgentError):
    """An MCP server cannot be used (did not start, or its tool list cannot be read)."""


ToolListError = ServerError  # its name before the tree: a tool list that cannot be read

__all__ = [
    "CRASHED",
    "CRASH_STATUS",
    "ConfigError",
    "ContextFullError",
    "ModelError",
    "NoModelError",
    "OutputMaximumError",
    "PaymentError",
    "PlanError",
    "PrivateError",
    "Refused",
    "ServerError",
    "StoreError",
    "StoreUnavailable",
    "ToolError",
    "ToolListError",
    "VeniceAgentError",
]
