"""Redirects of an HTTP MCP server, followed below the SDK (which follows them only within the
origin), with credentials kept to the origin each request was made for."""

from __future__ import annotations

from typing import Any

from .server_config import ServerConfig

MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}


def redirecting_transport(config: ServerConfig) -> Any:
    """The HTTP transport of `config`'s client: it follows the server's redirects, to another
    origin too, and sends the configured headers and any `Authorization` (a configured token,
    one OAuth obtained, a client's credentials at a token endpoint) only to the origin the
    request was made for: a hop to another origin goes without them.

    The SDK follows a redirect only within the origin and fails on any other ("Redirect to … not
    followed"); below it, a redirect is followed here before the SDK sees a response. A redirect
    that would turn a POST into a GET (301/302/303) is not followed: the message would be lost.
    """
    import httpx2

    private = {"authorization", "cookie", *(name.lower() for name in config.headers)}

    class Redirects(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            body, home = await request.aread(), request.url.origin
            for _ in range(MAX_REDIRECTS):
                response = await self.inner.handle_async_request(request)
                location = response.headers.get("location")
                keeps_method = response.status_code in (307, 308) or request.method == "GET"
                if response.status_code not in _REDIRECTS or not location or not keeps_method:
                    return response
                await response.aread()
                await response.aclose()
                url = request.url.join(location)
                headers = httpx2.Headers(request.headers)
                headers["host"] = url.netloc.decode("ascii")
                if url.origin != home:
                    for name in private:
                        headers.pop(name, None)
                request = httpx2.Request(
                    request.method, url, headers=headers, content=body, extensions=request.extensions
                )
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Redirects()
