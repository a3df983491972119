"""Where the OAuth tokens of MCP servers live: one file per server in the user data folder.

The file (`oauth/NAME.json`, mode 0600, folder 0700) holds the server's URL, its tokens, when
the access token expires (a time, not the SDK's "seconds from when it was issued", so a restart
still knows), the client registration the authorisation server gave us, and that server's
(public) metadata, whose token endpoint a refresh after a restart needs. The URL is part of the record: a
server entry pointed somewhere else starts from nothing rather than send one server's token
to another. Tokens are secrets: nothing here prints, logs or returns them outside the SDK's
`TokenStorage` protocol.

A file that cannot be read (not JSON, a field of the wrong shape, no permission) is a
`ServerError` naming the file and the fix, never Python's text: `venice-agent login NAME`
replaces it (`damaged()` says why it is unreadable, `delete()` takes it away).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...core.defaults import APP_NAME
from ...core.errors import ServerError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def token_folder() -> Path:
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / "oauth"


def token_path(server: str, folder: Path | None = None) -> Path:
    """The token file of the server named `server` (its name made safe for a file name)."""
    return (folder or token_folder()) / f"{_UNSAFE.sub('_', server)}.json"


def unreadable(server: str, path: Path, why: str) -> str:
    """The one line for a token file that cannot be read: which file, why, and the fix."""
    return f"{server} cannot start: its sign-in file {path} cannot be read ({why}); run venice-agent login {server} to replace it"


_SHAPES: dict[str, type | tuple[type, ...]] = {
    "tokens": dict, "client_info": dict, "server_metadata": dict, "expires_at": (int, float),
    "dpop_key": str, "token_scheme": str,
}  # fmt: skip


class TokenFile:
    """The SDK's `TokenStorage` for one server, kept in one file only the user can read."""

    def __init__(
        self, server: str, url: str, folder: Path | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.server = server
        self.path = token_path(server, folder)
        self.url = url
        self.clock = clock

    def _read(self) -> dict[str, Any]:
        """The record of this server's URL ({} when there is none); `ServerError` if unreadable."""
        why = self.damaged()
        if why is not None:
            raise ServerError(unreadable(self.server, self.path, why))
        return self._load() or {}

    def _load(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        return data if data.get("url") == self.url else {}  # another URL's record: start afresh

    def damaged(self) -> str | None:
        """Why the file cannot be read (it is there, but not a token file we wrote), or None."""
        try:
            self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            return error.strerror or type(error).__name__
        data = self._load()
        if data is None:
            return "it is not a JSON object"
        for key, shape in _SHAPES.items():
            if data.get(key) is not None and not isinstance(data[key], shape):
                return f"its {key!r} has the wrong shape"
        for key, model in (("tokens", "OAuthToken"), ("client_info", "OAuthClientInformationFull")):
            if data.get(key):
                import mcp.shared.auth
                from pydantic import ValidationError

                try:
                    getattr(mcp.shared.auth, model).model_validate(data[key])
                except ValidationError:
                    return f"its {key!r} has the wrong shape"
        return None

    def _write(self, **fields: Any) -> None:
        data = {**self._read(), **fields, "url": self.url}
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        # Created 0600 from the first byte (never world-readable, not even for a moment), then
        # renamed over the old file so a crash cannot leave half a token file.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            json.dump(data, stream)
        os.replace(temporary, self.path)

    def exists(self) -> bool:
        """Tokens are stored, or an unreadable file is in their place (to report, or replace)."""
        return self.damaged() is not None or bool(self._read().get("tokens"))

    def registered_port(self) -> int | None:
        """The loopback port of the stored registration's redirect URI, if there is one."""
        uris = (self._read().get("client_info") or {}).get("redirect_uris") or []
        port = urlsplit(uris[0]).port if uris and isinstance(uris[0], str) else None
        return port if port and urlsplit(uris[0]).hostname == "127.0.0.1" else None

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self._read().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: Any) -> None:
        lifetime = tokens.expires_in
        self._write(
            tokens=tokens.model_dump(mode="json", exclude_none=True),
            expires_at=self.clock() + lifetime if lifetime is not None else None,
        )

    def seconds_left(self) -> float | None:
        """How long the stored access token has left; None when the server gave no lifetime."""
        expires_at = self._read().get("expires_at")
        return float(expires_at) - self.clock() if isinstance(expires_at, int | float) else None

    def server_metadata(self) -> dict[str, Any] | None:
        """The authorisation server's metadata as it was when the tokens were issued."""
        metadata = self._read().get("server_metadata")
        return metadata if isinstance(metadata, dict) else None

    def set_server_metadata(self, metadata: dict[str, Any]) -> None:
        if self._read().get("server_metadata") != metadata:
            self._write(server_metadata=metadata)

    def dpop_key(self) -> str | None:
        """The private key (PEM) the stored token is bound to (DPoP, dpop.py), if any."""
        key = self._read().get("dpop_key")
        return key if isinstance(key, str) else None

    def set_dpop_key(self, pem: str) -> None:
        self._write(dpop_key=pem)

    def token_scheme(self) -> str | None:
        """How the stored token is presented: "DPoP" (bound to `dpop_key`) or "Bearer"."""
        scheme = self._read().get("token_scheme")
        return scheme if isinstance(scheme, str) else None

    def set_token_scheme(self, scheme: str) -> None:
        self._write(token_scheme=scheme)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        info = self._read().get("client_info")
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def set_client_info(self, client_info: Any) -> None:
        self._write(client_info=client_info.model_dump(mode="json", exclude_none=True))

    def delete(self) -> bool:
        """Forget the server's tokens and registration; True if there was anything to forget."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
            return True
        return False


class MemoryTokens:
    """`TokenStorage` that keeps nothing on disk (tests, and the conformance client)."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None
        self.key: str | None = None
        self.scheme: str | None = None

    def dpop_key(self) -> str | None:
        return self.key

    def set_dpop_key(self, pem: str) -> None:
        self.key = pem

    def token_scheme(self) -> str | None:
        return self.scheme

    def set_token_scheme(self, scheme: str) -> None:
        self.scheme = scheme

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info
