"""Which tool calls need the user's consent: one pure function, tested with a table.

A tool runs without asking only when it is known to be read-only:
- on Apify's server, when its name is in Apify's read-only set (names from the server's own
  `readOnlyHint` annotations). Every Actor tool (`user--actor`) asks, trusted or not: Actors
  run on Apify and bill the user. Other unknown Apify tools ask unless the server is trusted
  and annotates them read-only, as below;
- on any other server, when the server says `readOnlyHint: true` *and* the user marked that
  server trusted in the config. An untrusted server's hint is a claim, not a promise.
Everything else asks. Built-in tools (files under the root, pages) never ask; they are not
MCP tools and carry their own `read_only`.
"""

from __future__ import annotations

# Apify's tools annotated `readOnlyHint: true` (@apify/actors-mcp-server 0.16, and the names
# they had before: `get-actor-log` became `get-actor-run-log` in 0.16). Apps-mode widgets too.
APIFY_READ_ONLY: frozenset[str] = frozenset(
    {
        "search-actors",
        "fetch-actor-details",
        "search-apify-docs",
        "fetch-apify-docs",
        "get-actor-run",
        "get-actor-run-list",
        "get-actor-run-log",
        "get-actor-log",
        "get-dataset",
        "get-dataset-items",
        "get-dataset-list",
        "get-dataset-schema",
        "get-key-value-store",
        "get-key-value-store-keys",
        "get-key-value-store-list",
        "get-key-value-store-record",
        "get-actor-task",
        "get-schedule",
        "search-actors-widget",
        "fetch-actor-details-widget",
        "get-actor-run-widget",
    }
)

# The tools Apify serves without a token: what a user with only a Venice key gets.
APIFY_ANONYMOUS_TOOLS: tuple[str, ...] = (
    "search-actors",
    "fetch-actor-details",
    "search-apify-docs",
    "fetch-apify-docs",
)


def is_read_only(tool: str, *, apify: bool, trusted: bool, read_only_hint: bool | None) -> bool:
    """True when `tool` may run without asking; False means the user must say yes first.

    `apify`: the tool comes from Apify's MCP server. `trusted`: the user marked the server
    trusted in the config. `read_only_hint`: the server's `readOnlyHint` annotation (None when
    the server gave none).
    """
    if apify:
        if "--" in tool:
            return False  # an Actor (or a tool proxied through one): it runs, and bills, on Apify
        if tool in APIFY_READ_ONLY:
            # A known name is not enough if the server itself now says the tool writes.
            return read_only_hint is not False
    return trusted and read_only_hint is True


def is_paid(tool: str, *, apify: bool) -> bool:
    """True for the tools known to cost money: Apify's Actor tools and `call-actor`."""
    return apify and ("--" in tool or tool == "call-actor")


def needs_consent(tool: str, *, apify: bool, trusted: bool, read_only_hint: bool | None) -> bool:
    """The opposite of `is_read_only`, for call sites that read better this way."""
    return not is_read_only(tool, apify=apify, trusted=trusted, read_only_hint=read_only_hint)
