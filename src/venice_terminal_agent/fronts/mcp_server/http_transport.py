"""`venice-agent mcp --http`: the front over Streamable HTTP, behind serve's Host and Origin rule
(`EdgeRules`) and, with a token, a bearer check (`Bearer`). Loopback only without a token (the
command checks that before it starts)."""

import hmac
import socket
import sys
from typing import Any


async def serve_http(server: Any, sock: socket.socket, token: str | None) -> None:
    """Serve `server` (the SDK's `MCPServer`) on `sock` (`listening.listen`'s) at /mcp until stopped."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from ..http_edge import EdgeRules
    from ..listening import hosts_for

    bound, port = sock.getsockname()[:2]  # the address a name stands for; the port chosen for 0
    # One rule for Host and Origin, serve's (EdgeRules); the SDK's own copy of it is off.
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False), host=bound
    )
    guarded: Any = EdgeRules(Bearer(app, token), hosts_for(bound, port, []))
    shown = f"[{bound}]" if ":" in bound else bound
    who = "bearer token" if token else "loopback, no token"
    print(f"venice-agent mcp: http://{shown}:{port}/mcp ({who})", file=sys.stderr, flush=True)
    config = uvicorn.Config(guarded, log_level="warning", access_log=False, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


class Bearer:
    """ASGI middleware: with a token, every request carries `Authorization: Bearer TOKEN`."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.token is not None:
            from starlette.datastructures import Headers
            from starlette.responses import JSONResponse

            given = Headers(scope=scope).get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self.token.encode()
            ):
                response = JSONResponse(
                    {"error": "this server needs 'Authorization: Bearer TOKEN'"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
