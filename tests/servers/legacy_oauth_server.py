"""An MCP server on 127.0.0.1 signing clients in the 2025-03-26 way: no protected-resource metadata.

    python legacy_oauth_server.py PORT EVENTS_FILE ISSUER_PATH

The authorisation server is `oauth_server.py`'s (the mcp SDK's server side), with its metadata
at the origin's well-known URL, `/.well-known/oauth-authorization-server`, where a 2025-03-26
client looks. Its `issuer` is the origin followed by ISSUER_PATH: "" is a server as RFC 8414
wants it; "/oauth" is the conformance suite's back-compat mock, whose metadata names an issuer
other than the one its URL belongs to. The endpoints work under ISSUER_PATH, so a client that
used that document anyway would get all the way through. Every request is written to
EVENTS_FILE as `METHOD path` (and the token requests as `TOKEN grant_type`).
"""

import sys

import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from oauth_server import Provider, event


def build(port: int, issuer_path: str):
    settings = AuthSettings(
        issuer_url=f"http://127.0.0.1:{port}{issuer_path}",
        resource_server_url=None,  # no protected-resource metadata: the 2025-03-26 layout
        client_registration_options=ClientRegistrationOptions(enabled=True),
        validate_token_resource=False,
    )
    server = MCPServer("legacy", version="1.0", auth=settings, auth_server_provider=Provider())

    @server.tool()
    def whoami() -> str:
        """Say that the caller is signed in."""
        return "signed in"

    app = server.streamable_http_app()

    async def logged(scope, receive, send):
        if scope["type"] == "http":
            event(f"{scope['method']} {scope['path']}")
            if issuer_path and scope["path"].startswith(issuer_path + "/"):
                path = scope["path"][len(issuer_path) :]
                scope = {**scope, "path": path, "raw_path": path.encode()}
        return await app(scope, receive, send)

    return logged


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(build(port, sys.argv[3]), host="127.0.0.1", port=port, log_level="info")
