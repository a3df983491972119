"""The client under test for the MCP conformance suite: our session code, driven by its runner.

    conformance client --command "python conformance_client.py" --scenario tools_call

The runner appends the test server's URL and sets MCP_CONFORMANCE_SCENARIO, and for some
scenarios MCP_CONFORMANCE_CONTEXT (JSON: client credentials, keys), which becomes the entry's
`oauth` object as a user would write it in mcp.json; exit 0 is a pass. The "browser" of a
sign-in is an HTTP client that follows the authorisation URL back to our loopback listener.
"""

import asyncio
import json
import os
import sys

import httpx2

from venice_terminal_agent.mcp.features import ClientFeatures, Form
from venice_terminal_agent.mcp.oauth.auth import SignIn
from venice_terminal_agent.mcp.oauth.token_store import MemoryTokens
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.servers_file import OAUTH_KEYS
from venice_terminal_agent.mcp.session import SessionHooks
from venice_terminal_agent.mcp.toolbox import McpToolbox

# The URL-based client id the suite expects where its server supports client metadata documents.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def person(form: Form) -> tuple[str, dict]:
    """Accepts every form leaving each field as offered: Enter on every line of the terminal form."""
    print(f"{form.server} asks: {form.message} ({[f.name for f in form.fields]})", file=sys.stderr)
    return "accept", {}


async def browser(server: str, url: str) -> None:
    print(f"sign in to {server}: {url}", file=sys.stderr)
    async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as http:
        await http.get(url)


def oauth_entry() -> dict[str, str]:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = {key: str(value) for key, value in context.items() if key in OAUTH_KEYS}
    if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("auth/client-credentials"):
        oauth["grant_type"] = "client_credentials"  # a script's entry: no browser, no person
    return {"client_metadata_url": CLIENT_METADATA_URL, **oauth}


async def main(url: str, scenario: str) -> int:
    storage = MemoryTokens()
    server = ServerConfig("conformance", url=url, oauth=oauth_entry())
    sign_in = SignIn(open_url=browser, storage=lambda config: storage)
    hooks = SessionHooks(client_options=ClientFeatures(elicitor=person).client_options)
    async with McpToolbox.open(
        [server], startup_timeout=60, call_timeout=60, sign_in=sign_in, hooks=hooks
    ) as box:
        if box.failures:
            print("\n".join(box.failures), file=sys.stderr)
            return 1
        names = [spec.name for spec in box.specs()]
        print(f"tools: {names}")
        if scenario == "tools_call":
            result = await box.call("add_numbers", {"a": 5, "b": 3})
            print(f"add_numbers: {result}")
            return 0 if "8" in result else 1
        if scenario != "initialize" and names:  # the scenario's checks happen around a call
            print(f"{names[0]}: {await box.call(names[0], {})}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))))
