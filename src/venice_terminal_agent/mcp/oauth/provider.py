"""The SDK's browser-flow provider, told what the token file remembers across a restart.

The SDK keeps a token's expiry and the authorisation server's metadata in memory only: a
stored token carries `expires_in` (seconds from when it was issued), which says nothing a day
later. Loaded after a restart, an expired token would count as valid until the server answered
401, and a 401 starts a new browser sign-in rather than a refresh (with no terminal, the server
is skipped). So the token file keeps the expiry as a time and the server's metadata (whose
token endpoint a refresh needs; the SDK's guess, `/token` on the MCP server's host, is often
wrong), and the provider is given both when it loads the tokens. A token that expires within
`REFRESH_EARLY` seconds is refreshed with the refresh token before the first request.

Imported only where a provider is built (it imports the mcp SDK).
"""

from __future__ import annotations

import time

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthMetadata
from pydantic import ValidationError

REFRESH_EARLY = 60.0  # seconds: a token this close to its expiry is refreshed before use


class RestartSafeProvider(OAuthClientProvider):
    async def _initialize(self) -> None:  # the SDK's hook for loading stored tokens
        await super()._initialize()
        storage, context = self.context.storage, self.context
        left = storage.seconds_left() if hasattr(storage, "seconds_left") else None
        if context.current_tokens is not None and left is not None:
            # The SDK compares with time.time(); `left` is by the storage's own clock.
            context.token_expiry_time = time.time() + left - REFRESH_EARLY
        metadata = storage.server_metadata() if hasattr(storage, "server_metadata") else None
        if context.oauth_metadata is None and metadata is not None:
            try:
                context.oauth_metadata = OAuthMetadata.model_validate(metadata)
            except ValidationError:
                pass  # unreadable: the SDK discovers it again on the next 401
