"""Why a run stops (`Exit`) and the process exit status of each: the table every help text,
the receipt and the error tree read.

A module of its own, apart from `receipt.py`, because `venice-agent --help` writes these
statuses into its text and needs nothing else of a run: the receipt's dataclasses, its costs
(Decimal) and its JSON cost --help about 10 ms it has no use for (issue 21). `receipt.py`
re-exports every name, so `from .receipt import Exit` still works.
"""

from __future__ import annotations

from enum import StrEnum


class Exit(StrEnum):
    """Why a run stopped. The first four are the loop's own, tested in this order."""

    ANSWERED = "answered"
    REPEATED_CALL = "repeated_call"
    BUDGET = "budget"
    TOOL_ERROR = "tool_error"
    # Runs planned by a model add these.
    MAX_ROUNDS = "max_rounds"
    MODEL_ERROR = "model_error"
    CANCELLED = "cancelled"
    COST_CAP = "cost_cap"  # the next model request could pass the money cap (checked before it)
    CONTEXT_FULL = "context_full"  # the next request cannot fit the model's window (checked before it)
    # A model used end-to-end encrypted could not be used so (attestation, key, a piece of the
    # answer): the question stopped, and nothing went out in plaintext.
    PRIVATE_FAILED = "private_failed"
    SCHEMA_MISMATCH = "schema_mismatch"  # the answer did not match --schema, asked twice
    OUTPUT_LIMIT = "output_limit"  # the answer was cut at the output limit: partial
    KEY_REJECTED = "key_rejected"  # the model server refused the API key (401/403): setup to fix
    # A durable run (`batch`) found a request or call recorded as sent and never answered (its
    # worker died): it may have reached the server, so it is not sent again and its reserved
    # money stays charged.
    INTERRUPTED = "interrupted"


# The process exit status of a one-shot command for each exit; 2 is kept for usage and
# configuration errors, 1 for a crash (a bug), 130 follows the shell's Ctrl+C convention.
EXIT_STATUS: dict[Exit, int] = {
    Exit.ANSWERED: 0,
    Exit.BUDGET: 3,
    Exit.REPEATED_CALL: 4,
    Exit.TOOL_ERROR: 5,
    Exit.MAX_ROUNDS: 6,
    Exit.MODEL_ERROR: 7,
    Exit.CANCELLED: 130,
    Exit.COST_CAP: 8,
    Exit.OUTPUT_LIMIT: 9,
    Exit.CONTEXT_FULL: 10,
    Exit.PRIVATE_FAILED: 11,
    Exit.SCHEMA_MISMATCH: 12,
    Exit.KEY_REJECTED: 13,  # also a key refused at start-up, before any question
    Exit.INTERRUPTED: 14,
}
USAGE_ERROR_STATUS = 2
# `batch`: every question has its receipt, and not every one ends `answered` (the receipts say why).
UNANSWERED_STATUS = 15


def exit_statuses(*exits: Exit) -> str:
    """`0 answered, 3 budget, …` for help texts, from `EXIT_STATUS` (every exit when none given),
    so no help text copies the table by hand."""
    chosen = sorted(exits or EXIT_STATUS, key=EXIT_STATUS.__getitem__)
    return ", ".join(f"{EXIT_STATUS[exit]} {exit}" for exit in chosen)
