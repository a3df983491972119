"""A Streamable HTTP MCP server on 127.0.0.1 that is its own OAuth authorisation server.

    python oauth_server.py PORT EVENTS_FILE

Built on the mcp SDK's server side (`MCPServer(auth=..., auth_server_provider=...)`): metadata
discovery, dynamic registration, authorisation with PKCE, tokens, refresh and revocation. Its
`/authorize` approves at once and redirects back to the client, as a user clicking "Allow"
would. Every token request and revocation is written to EVENTS_FILE as one line
(`TOKEN grant_type`, `REVOKED kind`) so a test can see what the client did. A POST to
`/expire-access-tokens` makes every access token issued so far invalid, as time would (the
refresh tokens stay good); with a second argument PATH the token endpoint is served at PATH
(and named so in the metadata) instead of the SDK's `/token`. Its tools `refuse` and `fail`
repeat the caller's access token, as careless servers do: in a JSON-RPC error and in an
`is_error` result.
"""

import secrets
import sys
import time
from pathlib import Path

import uvicorn
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.auth import OAuthToken


def event(line: str) -> None:
    with Path(sys.argv[2]).open("a") as events:
        events.write(line + "\n")


class Provider:
    def __init__(self) -> None:
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
        )  # fmt: skip
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _issue(self, client_id, scopes, resource) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, resource=resource)
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(access_token=access, refresh_token=refresh, expires_in=3600, scope=" ".join(scopes))

    async def exchange_authorization_code(self, client, authorization_code):
        event("TOKEN authorization_code")
        del self.codes[authorization_code.code]
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        event("TOKEN refresh_token")
        del self.refresh[refresh_token.token]
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        return self.access.get(token)

    async def revoke_token(self, token):
        kind = "refresh" if isinstance(token, RefreshToken) else "access"
        event(f"REVOKED {kind}")
        (self.refresh if kind == "refresh" else self.access).pop(token.token, None)


def build(port: int, provider: Provider) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    settings = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
        validate_token_resource=False,
    )
    server = MCPServer("signed", version="1.0", auth=settings, auth_server_provider=provider)

    @server.tool()
    def whoami() -> str:
        """Say that the caller is signed in."""
        return "signed in"

    @server.tool()
    def refuse() -> str:
        """Refuse, repeating the caller's token in a JSON-RPC error."""
        raise MCPError(code=-32602, message=f"token {get_access_token().token} may not do this")

    @server.tool()
    def fail() -> str:
        """Fail, repeating the caller's token in an is_error result."""
        raise ToolError(f"token {get_access_token().token} has expired")

    return server


def public_revocation(app):
    """The SDK's /revoke wants a `client_secret` field even from a public client, which RFC 7009
    §2.1 lets send its `client_id` alone: an empty one is added where none was sent."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/revoke":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if b"client_secret=" not in body:
            body += b"&client_secret="

        async def replay():
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return wrapped


def test_controls(app, provider: Provider, token_path: str):
    """`/expire-access-tokens`, and the token endpoint moved to `token_path`."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/expire-access-tokens":
            provider.access.clear()
            event("EXPIRED access tokens")
            await send({"type": "http.response.start", "status": 204, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        if scope["type"] == "http" and scope["path"] in ("/token", token_path) and token_path != "/token":
            if scope["path"] == "/token":  # the SDK's guess when it has no metadata: not here
                await send({"type": "http.response.start", "status": 404, "headers": []})
                return await send({"type": "http.response.body", "body": b"not here"})
            scope = {**scope, "path": "/token", "raw_path": b"/token"}
        if scope["type"] == "http" and scope["path"] == "/.well-known/oauth-authorization-server":
            return await app(scope, receive, renamed_token_endpoint(send, token_path))
        return await app(scope, receive, send)

    return wrapped


def renamed_token_endpoint(send, token_path: str):
    body = []

    async def sending(message):
        if message["type"] == "http.response.start":
            body.append(message)
            return None
        body.append(message.get("body", b""))
        if message.get("more_body"):
            return None
        start, content = body[0], b"".join(body[1:]).replace(b'/token"', token_path.encode() + b'"')
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(content)).encode()))
        await send({**start, "headers": headers})
        return await send({"type": "http.response.body", "body": content})

    return sending


if __name__ == "__main__":
    port = int(sys.argv[1])
    provider = Provider()
    token_path = sys.argv[3] if len(sys.argv) > 3 else "/token"
    app = test_controls(public_revocation(build(port, provider).streamable_http_app()), provider, token_path)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")
