"""OAuth steps the SDK leaves to its caller: revoking tokens at sign-out (RFC 7009), and the
identity-provider leg of cross-app access (SEP-990: an ID token exchanged for an ID-JAG,
RFC 8693). Discovery and client authentication are the SDK's; only these POSTs are ours.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


async def discover(http: Any, url: str) -> tuple[str | None, Any]:
    """The MCP server's authorisation server: its issuer (from protected-resource metadata)
    and its metadata, either None where the server publishes none."""
    from mcp.client.auth.utils import (
        build_oauth_authorization_server_metadata_discovery_urls,
        build_protected_resource_metadata_discovery_urls,
        create_oauth_metadata_request,
        handle_auth_metadata_response,
        handle_protected_resource_response,
    )

    issuer = None
    for where in build_protected_resource_metadata_discovery_urls(None, url):
        resource = await handle_protected_resource_response(
            await http.send(create_oauth_metadata_request(where))
        )
        if resource is not None and resource.authorization_servers:
            issuer = str(resource.authorization_servers[0])
            break
    for where in build_oauth_authorization_server_metadata_discovery_urls(issuer, url):
        ok, metadata = await handle_auth_metadata_response(
            await http.send(create_oauth_metadata_request(where))
        )
        if not ok:
            break
        if metadata is not None:
            return issuer or str(metadata.issuer), metadata
    return issuer, None


async def revoke(url: str, storage: Any) -> bool:
    """Ask the authorisation server to revoke the stored tokens; True when it took them all."""
    import httpx2
    from mcp.client.auth.oauth2 import OAuthContext
    from mcp.shared.auth import OAuthClientMetadata

    tokens, client_info = await storage.get_tokens(), await storage.get_client_info()
    if tokens is None:
        return False
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(20)) as http:
        _, metadata = await discover(http, url)
        if metadata is None or metadata.revocation_endpoint is None:
            return False
        context = OAuthContext(url, OAuthClientMetadata(redirect_uris=None), storage, None, None)
        context.client_info = client_info
        done = True
        for token, hint in ((tokens.refresh_token, "refresh_token"), (tokens.access_token, "access_token")):
            if not token:
                continue
            data = {"token": token, "token_type_hint": hint}
            if client_info is not None:
                data["client_id"] = client_info.client_id
            data, headers = context.prepare_token_auth(data, {})
            answer = await http.post(str(metadata.revocation_endpoint), data=data, headers=headers)
            done = done and answer.status_code == 200
        return done


class CrossAppAuth:
    """The SDK's `IdentityAssertionOAuthProvider`, built once the authorisation server is known
    (it is configuration for the SDK; here it is discovered from the MCP server), with the
    identity provider's token exchange as its assertion source."""

    def __init__(self, url: str, storage: Any, oauth: Mapping[str, str]) -> None:
        self.url, self.storage, self.oauth = url, storage, dict(oauth)
        self._provider: Any = None

    async def async_auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        if self._provider is None:
            import httpx2
            from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

            async with httpx2.AsyncClient(timeout=httpx2.Timeout(20)) as http:
                issuer, _ = await discover(http, self.url)
            if issuer is None:
                raise RuntimeError(f"{self.url} names no authorisation server for cross-app access")
            self._provider = IdentityAssertionOAuthProvider(
                self.url, self.storage, self.oauth.get("client_id") or "", self.oauth.get("client_secret") or "",
                issuer, self._id_jag, scope=self.oauth.get("scope"), token_endpoint_auth_method="client_secret_basic",
            )  # fmt: skip
        flow = self._provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                outgoing = await flow.asend((yield outgoing))
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    async def _id_jag(self, audience: str, resource: str) -> str:
        """The identity provider's ID-JAG for this authorisation server (RFC 8693 token exchange)."""
        import httpx2

        form = {
            "grant_type": TOKEN_EXCHANGE, "subject_token": self.oauth.get("idp_id_token") or "",
            "subject_token_type": ID_TOKEN, "requested_token_type": ID_JAG, "audience": audience,
            "resource": resource, "client_id": self.oauth.get("idp_client_id") or "",
        }  # fmt: skip
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(20)) as http:
            answer = await http.post(self.oauth.get("idp_token_endpoint") or "", data=form)
        if answer.status_code != 200:
            raise RuntimeError(f"the identity provider refused the token exchange ({answer.status_code})")
        return str(answer.json()["access_token"])


JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class WorkloadIdentityAuth:
    """The workload-identity grant (RFC 7523 JWT bearer, SEP-1933): the workload's own token
    (`assertion` in the entry, e.g. `${WORKLOAD_TOKEN}`) exchanged for an access token at the
    MCP server's authorisation server. The SDK has no provider for it (its identity-assertion
    one needs a client secret). A refusal is said once, as the server said it: it is not
    retried, nor tried with another grant."""

    requires_response_body = True

    def __init__(self, url: str, storage: Any, oauth: Mapping[str, str]) -> None:
        self.url, self.storage, self.oauth = url, storage, dict(oauth)
        self._token: str | None = None
        self._loaded = False

    async def async_auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        if not self._loaded:
            self._loaded = True
            stored = await self.storage.get_tokens()
            self._token = stored.access_token if stored is not None else None
        if self._token:
            request.headers["Authorization"] = f"Bearer {self._token}"
        response = yield request
        if response.status_code != 401:
            return
        self._token = await self._exchange(response)
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request

    async def _exchange(self, challenge: Any) -> str:
        import httpx2
        from mcp.client.auth.utils import extract_scope_from_www_auth
        from mcp.shared.auth import OAuthToken
        from mcp.shared.auth_utils import resource_url_from_server_url

        async with httpx2.AsyncClient(timeout=httpx2.Timeout(20)) as http:
            _, metadata = await discover(http, self.url)
            if metadata is None:
                raise RuntimeError(f"{self.url} names no authorisation server for the workload identity")
            form = {
                "grant_type": JWT_BEARER, "assertion": self.oauth.get("assertion") or "",
                "client_id": self.oauth.get("client_id") or "", "resource": resource_url_from_server_url(self.url),
            }  # fmt: skip
            scope = self.oauth.get("scope") or extract_scope_from_www_auth(challenge)
            if scope:
                form["scope"] = scope
            answer = await http.post(str(metadata.token_endpoint), data=form)
        if answer.status_code != 200:
            try:
                said = answer.json()
                reason = " ".join(str(said.get(k) or "") for k in ("error", "error_description")).strip()
            except ValueError:
                reason = ""
            raise RuntimeError(
                f"the authorisation server refused the workload identity ({answer.status_code}"
                + (f": {reason})" if reason else ")")
            )
        tokens = OAuthToken.model_validate_json(answer.content)
        await self.storage.set_tokens(tokens)
        return tokens.access_token
