"""Which calls need consent: the table the agent's promise "no paid call without a yes" rests on."""

import pytest

from venice_terminal_agent.core.policy import (
    APIFY_ANONYMOUS_TOOLS,
    APIFY_READ_ONLY,
    is_read_only,
    needs_consent,
)

# (tool, apify server?, trusted server?, readOnlyHint, runs without asking?)
TABLE = [
    # Apify: its read-only set runs freely, whatever the trust.
    ("search-actors", True, False, True, True),
    ("search-actors", True, False, None, True),
    ("fetch-apify-docs", True, False, None, True),
    ("get-dataset-items", True, False, True, True),
    ("get-actor-run-log", True, False, True, True),
    ("get-actor-log", True, False, None, True),  # the name before 0.16
    # ... unless the server now says the tool writes.
    ("search-actors", True, False, False, False),
    # Apify tools that spend or change things always ask.
    ("call-actor", True, False, False, False),
    ("call-actor", True, True, None, False),
    ("abort-actor-run", True, False, False, False),
    ("create-schedule", True, False, None, False),
    ("delete-schedule", True, True, False, False),
    ("report-problem", True, False, None, False),
    # Actor tools always ask, even from a trusted server claiming read-only.
    ("apify--rag-web-browser", True, False, False, False),
    ("apify--web-fetch", True, True, True, False),
    ("user--mcp-actor--search", True, True, True, False),
    # Unknown Apify tools ask, unless trusted and annotated read-only.
    ("get-something-new", True, False, True, False),
    ("get-something-new", True, True, True, True),
    # Other servers: read-only only when trusted AND annotated read-only.
    ("get_current_time", False, False, True, False),
    ("get_current_time", False, True, True, True),
    ("get_current_time", False, True, None, False),
    ("get_current_time", False, True, False, False),
    ("delete_everything", False, False, None, False),
    # An untrusted server cannot make an Apify name free by reusing it.
    ("search-actors", False, False, True, False),
]


@pytest.mark.parametrize(("tool", "apify", "trusted", "hint", "free"), TABLE)
def test_consent_table(tool, apify, trusted, hint, free):
    assert is_read_only(tool, apify=apify, trusted=trusted, read_only_hint=hint) is free
    assert needs_consent(tool, apify=apify, trusted=trusted, read_only_hint=hint) is (not free)


def test_every_anonymous_apify_tool_is_read_only():
    # A user with only a Venice key is never asked about the tools they get.
    assert set(APIFY_ANONYMOUS_TOOLS) <= APIFY_READ_ONLY
    assert not {"call-actor", "abort-actor-run"} & APIFY_READ_ONLY
