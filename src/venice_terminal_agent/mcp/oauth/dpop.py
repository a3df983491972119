"""DPoP (RFC 9449, MCP SEP-1932): tokens bound to a key of ours, so a stolen token is useless.

The mcp SDK has no DPoP; its providers speak Bearer. This sits between a provider and the wire
(`ServerAuth.flow`): when the authorisation server advertises DPoP (ES256), every token request
carries a proof signed by the server's key, and a token issued as `DPoP` is presented as
`Authorization: DPoP …` with a fresh proof (bound to the token by `ath`) on each request.
A `use_dpop_nonce` answer (from the authorisation server or the MCP server) is retried once
with the nonce it sent. The key is kept beside the tokens (the token file), since a token is
useless without it after a restart; the SDK is told the token is a Bearer one (its model knows
no other type) and never sees the difference.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ALGORITHM = "ES256"
NONCE_ERROR = "use_dpop_nonce"


def _htu(url: Any) -> str:
    """The proof's `htu`: the request's URL without query or fragment (RFC 9449 §4.2)."""
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _origin(url: Any) -> str:
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}"


class Dpop:
    """The DPoP state of one server: its key, whether its token is bound, the nonces seen."""

    def __init__(self, provider: Any, storage: Any) -> None:
        self.provider, self.storage = provider, storage
        self._key: Any = None
        self._nonces: dict[str, str] = {}
        self._algorithms: list[str] = []
        scheme = getattr(storage, "token_scheme", lambda: None)()
        self.bound = scheme == "DPoP"

    def _metadata(self) -> Any:
        return getattr(getattr(self.provider, "context", None), "oauth_metadata", None)

    def _offered(self) -> bool:
        # The SDK's metadata model drops `dpop_signing_alg_values_supported`: read off the wire
        # (`received`). A token already bound says the server wants proofs on a refresh too.
        return self.bound or ALGORITHM in self._algorithms

    def _is_token_request(self, request: Any) -> bool:
        metadata = self._metadata()
        endpoint = getattr(metadata, "token_endpoint", None)
        return request.method == "POST" and endpoint is not None and _htu(request.url) == _htu(endpoint)

    def _private_key(self) -> Any:
        if self._key is None:
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec

            stored = getattr(self.storage, "dpop_key", lambda: None)()
            if stored:
                self._key = serialization.load_pem_private_key(stored.encode(), password=None)
            else:
                self._key = ec.generate_private_key(ec.SECP256R1())
                pem = self._key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                ).decode()
                if hasattr(self.storage, "set_dpop_key"):
                    self.storage.set_dpop_key(pem)
        return self._key

    def _proof(self, request: Any, token: str | None) -> str:
        import jwt
        from jwt.algorithms import ECAlgorithm

        key = self._private_key()
        public = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
        claims: dict[str, Any] = {
            "jti": str(uuid.uuid4()), "htm": request.method, "htu": _htu(request.url), "iat": int(time.time()),
        }  # fmt: skip
        if token is not None:
            digest = hashlib.sha256(token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        nonce = self._nonces.get(_origin(request.url))
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, key, algorithm=ALGORITHM, headers={"typ": "dpop+jwt", "jwk": public})

    def prepare(self, request: Any) -> None:
        """Give `request` its proof (and the DPoP scheme) where DPoP applies to it."""
        if self._is_token_request(request):
            if self._offered():
                request.headers["DPoP"] = self._proof(request, None)
            return
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if self.bound and token and scheme.lower() in ("bearer", "dpop"):
            request.headers["Authorization"] = f"DPoP {token}"
            request.headers["DPoP"] = self._proof(request, token)

    async def wants_nonce(self, request: Any, response: Any) -> bool:
        """The server asked for a nonce it now sent: remember it; True to send the request again."""
        nonce = response.headers.get("DPoP-Nonce")
        if nonce is None or "DPoP" not in request.headers:
            return False
        asked = NONCE_ERROR in response.headers.get("WWW-Authenticate", "")
        if not asked and response.status_code == 400:
            try:
                asked = json.loads(await response.aread()).get("error") == NONCE_ERROR
            except (ValueError, AttributeError):
                asked = False
        fresh = self._nonces.get(_origin(request.url)) != nonce
        self._nonces[_origin(request.url)] = nonce
        return asked and fresh and response.status_code in (400, 401)

    async def received(self, request: Any, response: Any) -> Any:
        """A token response issuing a DPoP token: remembered as bound, and shown to the SDK as
        a Bearer one (its token model knows no other type)."""
        if request.method == "GET" and "/.well-known/" in request.url.path and response.status_code == 200:
            try:
                algorithms = json.loads(await response.aread()).get("dpop_signing_alg_values_supported")
            except (ValueError, AttributeError):
                algorithms = None
            if isinstance(algorithms, list):
                self._algorithms = [str(a) for a in algorithms]
            return response
        if "DPoP" not in request.headers or not self._is_token_request(request):
            return response
        if response.status_code != 200:
            return response
        try:
            body = json.loads(await response.aread())
        except ValueError:
            return response
        if not isinstance(body, dict):
            return response
        self.bound = str(body.get("token_type", "")).lower() == "dpop"
        if hasattr(self.storage, "set_token_scheme"):
            self.storage.set_token_scheme("DPoP" if self.bound else "Bearer")
        if not self.bound:
            return response
        import httpx2

        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-length", "content-encoding")
        }
        return httpx2.Response(
            response.status_code,
            headers=headers,
            content=json.dumps({**body, "token_type": "Bearer"}).encode(),
            request=response.request,
        )
