"""Signing in to MCP servers over HTTP with OAuth: the mcp SDK's providers, wired to our config.

The protocol (discovery, registration, PKCE, scopes, step-up, refresh) is the SDK's
`OAuthClientProvider` and its client-credentials siblings; this module only chooses one
from the entry's `oauth` object (DESIGN §1), keeps its tokens in `oauth_store`, listens for
the browser's redirect on a loopback port, and says in one line what went wrong.

Who can sign in is a `SignIn`: `open_url` shows the authorisation URL to a person (and opens
their browser). Without one (no terminal, the bot) a server asking for a browser sign-in is
skipped with "NAME needs a sign-in: run venice-agent login NAME"; tokens stored by an earlier
`login` are still used, and client credentials need no person at all.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...core.errors import ServerError
from ..server_config import ServerConfig
from .redirect import LoopbackRedirect, SignInRefused
from .token_store import TokenFile

CLIENT_NAME = "venice-agent"
CLIENT_CREDENTIALS = "client_credentials"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523: workload identity (SEP-1933)
SIGN_IN_TIMEOUT = 300.0  # how long a browser sign-in may take before the server is given up
# The SDK logs a failed flow with its traceback; the one-line reason reaches the user instead.
logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())
logging.getLogger("mcp.client.auth").propagate = False

OpenUrl = Callable[[str, str], Awaitable[None]]  # (server name, authorisation URL)


def needs_sign_in(server: str) -> str:
    """The one line said when a server wants a browser sign-in and nobody is there to do it."""
    return f"{server} needs a sign-in: run venice-agent login {server}"


class SignInNeeded(Exception):
    """A browser sign-in is needed and there is no person to do it."""


@dataclass(frozen=True)
class SignIn:
    """Who completes a browser sign-in: `open_url` shows the URL to a person; None: nobody."""

    open_url: OpenUrl | None = None
    storage: Callable[[ServerConfig], Any] = field(
        default=lambda config: TokenFile(config.name, config.url or "")
    )
    timeout: float = SIGN_IN_TIMEOUT


class ServerAuth:
    """The SDK provider of one server, remembering why a sign-in failed, in one line.

    `waiting` is true while a person is asked to sign in, so the session's start-up timeout
    does not cut them off. `httpx()` is what the server's HTTP client is given as `auth`.
    """

    def __init__(self, config: ServerConfig, sign_in: SignIn) -> None:
        self.config = config
        self.sign_in = sign_in
        self.problem: str | None = None
        self.waiting = False
        oauth = config.oauth or {}
        browser = oauth.get("grant_type") not in (CLIENT_CREDENTIALS, JWT_BEARER) and not oauth.get(
            "idp_id_token"
        )
        storage = self.storage = _Remembered(sign_in.storage(config))
        self._remembered: Any = None  # the server metadata last written beside the tokens
        # Bound now (the redirect URI goes into the registration), listened on only when needed;
        # the port registered before is taken again when free.
        port = getattr(storage, "registered_port", lambda: None)()
        self._redirect = LoopbackRedirect(port) if browser else None
        self.provider = _provider(config, storage, self)
        from .dpop import Dpop

        self._dpop = Dpop(self.provider, storage)

    def secrets(self) -> list[str]:
        """Every token obtained, refreshed or loaded for this server (and a client secret a
        registration gave us): masked wherever the server's text is shown, like `mcp.json`'s."""
        return sorted(self.storage.seen)

    def httpx(self) -> Any:
        import httpx2  # here, not at the top: `--help` must not load the HTTP stack

        owner = self

        class Auth(httpx2.Auth):
            requires_response_body = True

            def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[Any, Any]:
                return owner.flow(request)

        return Auth()

    async def flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        flow = self.provider.async_auth_flow(request)
        dpop = self._dpop
        try:
            outgoing = await flow.__anext__()
            while True:
                dpop.prepare(outgoing)
                response = yield outgoing
                if await dpop.wants_nonce(outgoing, response):  # once, with the nonce it sent
                    dpop.prepare(outgoing)
                    response = yield outgoing
                outgoing = await flow.asend(await dpop.received(outgoing, response))
        except StopAsyncIteration:
            self._remember_metadata()
            return
        except SignInNeeded:
            self.problem = needs_sign_in(self.config.name)
            raise
        except ServerError as error:  # the token file cannot be read: it says which and the fix
            self.problem = error.message
            raise
        except Exception as error:
            if self.problem is None:
                self.problem = f"{self.config.name}: sign-in failed: {_one_line(error)}"
            raise
        finally:
            await flow.aclose()

    def _remember_metadata(self) -> None:
        """Keep the authorisation server's metadata beside the tokens once both are known: a
        refresh after a restart needs its token endpoint (see oauth_provider.py)."""
        context: Any = getattr(self.provider, "context", None)
        metadata = getattr(context, "oauth_metadata", None)
        if metadata is None or metadata is self._remembered or context.current_tokens is None:
            return
        self._remembered = metadata
        if hasattr(self.storage, "set_server_metadata"):
            self.storage.set_server_metadata(metadata.model_dump(mode="json", exclude_none=True))

    # The SDK calls these two for the browser flow (`redirect_handler`, `callback_handler`).
    async def _show(self, url: str) -> None:
        if self.sign_in.open_url is None:
            raise SignInNeeded(needs_sign_in(self.config.name))
        assert self._redirect is not None
        self.waiting = True
        await self._redirect.listen()  # before the browser can come back
        await self.sign_in.open_url(self.config.name, url)

    async def _wait(self) -> Any:
        assert self._redirect is not None
        try:
            return await asyncio.wait_for(self._redirect.wait(), self.sign_in.timeout)
        except TimeoutError:
            self.problem = (
                f"{self.config.name}: the sign-in was not finished within {self.sign_in.timeout:g} s"
            )
            raise
        except SignInRefused as error:
            self.problem = f"{self.config.name}: the sign-in was refused: {_one_line(error)}"
            raise
        finally:
            self.waiting = False

    def close(self) -> None:
        if self._redirect is not None:
            self._redirect.close()


def http_auth(config: ServerConfig, sign_in: SignIn | None) -> ServerAuth | None:
    """The auth for an HTTP server's client, or None when the entry carries its own token."""
    if config.transport != "http" or any(key.lower() == "authorization" for key in config.headers):
        return None
    return ServerAuth(config, sign_in or SignIn())


def _provider(config: ServerConfig, storage: Any, auth: ServerAuth) -> Any:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    from .provider import RestartSafeProvider

    oauth = dict(config.oauth or {})
    url = config.url or ""
    client_id, secret = oauth.get("client_id"), oauth.get("client_secret")
    scope = oauth.get("scope")
    if oauth.get("grant_type") == CLIENT_CREDENTIALS:
        return _client_credentials(url, storage, oauth)
    if oauth.get("grant_type") == JWT_BEARER:  # a workload's own identity token: no browser
        from .grants import WorkloadIdentityAuth

        return WorkloadIdentityAuth(url, storage, oauth)
    if oauth.get("idp_id_token"):  # cross-app access: an identity provider vouches, no browser
        from .grants import CrossAppAuth

        return CrossAppAuth(url, storage, oauth)
    fixed = None
    if client_id:  # pre-registered: no registration, the configured id (and secret) are used
        fixed = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=secret,
            redirect_uris=None,
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
            # The authorisation server it was registered with: the SDK presents it there only
            # (SEP-2352), and registers afresh with any other.
            issuer=oauth.get("issuer"),
        )
    # With nobody to sign in, the stored registration is kept whatever its port: a refresh
    # needs no redirect, and a browser flow could not happen anyway.
    redirect = auth._redirect.uri if auth._redirect and auth.sign_in.open_url else None
    storage = _Registration(storage, fixed, redirect)
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[auth._redirect.uri] if auth._redirect else None,  # type: ignore[list-item]  # pydantic makes it an AnyUrl
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
        scope=scope,
    )
    return RestartSafeProvider(
        url,
        metadata,
        storage,
        redirect_handler=auth._show,
        callback_handler=auth._wait,
        client_metadata_url=oauth.get("client_metadata_url"),
    )


def _client_credentials(url: str, storage: Any, oauth: dict[str, str]) -> Any:
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    client_id = oauth.get("client_id") or ""
    with warnings.catch_warnings():  # no `issuer` in our config: the server's own one is used
        warnings.simplefilter("ignore")
        if oauth.get("private_key_pem"):
            signer = SignedJWTParameters(
                issuer=client_id,
                subject=client_id,
                signing_key=oauth["private_key_pem"],
                signing_algorithm=oauth.get("signing_algorithm") or "RS256",
            )
            return PrivateKeyJWTOAuthProvider(
                url, storage, client_id, signer.create_assertion_provider(), scope=oauth.get("scope")
            )
        return ClientCredentialsOAuthProvider(
            url, storage, client_id, oauth.get("client_secret") or "", scope=oauth.get("scope")
        )


class _Remembered:
    """The token storage, remembering each secret that passes through it: whatever provider
    (browser, client credentials, cross-app) obtains or refreshes a token stores it here, and
    loads stored ones from here."""

    def __init__(self, storage: Any) -> None:
        self._storage = storage
        self.seen: set[str] = set()

    def __getattr__(self, name: str) -> Any:  # the rest of the storage (expiry, metadata) as is
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._storage, name)

    def _keep(self, *values: Any) -> None:
        self.seen.update(value for value in values if isinstance(value, str) and value)

    async def get_tokens(self) -> Any:
        tokens = await self._storage.get_tokens()
        if tokens is not None:
            self._keep(tokens.access_token, tokens.refresh_token)
        return tokens

    async def set_tokens(self, tokens: Any) -> None:
        self._keep(tokens.access_token, tokens.refresh_token)
        await self._storage.set_tokens(tokens)

    async def get_client_info(self) -> Any:
        info = await self._storage.get_client_info()
        self._keep(getattr(info, "client_secret", None))
        return info

    async def set_client_info(self, client_info: Any) -> None:
        self._keep(getattr(client_info, "client_secret", None))
        await self._storage.set_client_info(client_info)


class _Registration:
    """The storage as the provider sees it: the registration from `mcp.json` when there is one;
    else the stored one, unless it was made for another loopback port (a server matching
    redirect URIs exactly would refuse it: the client registers afresh instead)."""

    def __init__(self, storage: Any, fixed: Any, redirect_uri: str | None) -> None:
        self._storage, self._fixed, self._redirect_uri = storage, fixed, redirect_uri

    def __getattr__(self, name: str) -> Any:  # the rest of the storage (expiry, metadata) as is
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._storage, name)

    async def get_tokens(self) -> Any:
        return await self._storage.get_tokens()

    async def set_tokens(self, tokens: Any) -> None:
        await self._storage.set_tokens(tokens)

    async def get_client_info(self) -> Any:
        if self._fixed is not None:
            return self._fixed
        info = await self._storage.get_client_info()
        registered = [str(uri) for uri in (info.redirect_uris or [])] if info is not None else []
        if registered and self._redirect_uri is not None and self._redirect_uri not in registered:
            return None
        return info

    async def set_client_info(self, client_info: Any) -> None:
        if self._fixed is None:
            await self._storage.set_client_info(client_info)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]
