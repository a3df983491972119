"""Each MCP server's tool list as it was last listed, kept on disk, so that a one-shot question's
first request need not wait for the servers to start (issue 21).

A Python stdio server takes over a second to answer `initialize` (mcp-server-time: 1.3 s on an
idle machine, twice our whole plain question), and talking to it needs the mcp SDK, whose import
is another second of CPU. The first request to the model needs only the tools' names,
descriptions and schemas. So `venice-agent "question"` spawns the servers as before and sends
that request with the lists cached here; nothing else is taken from the cache:

- before any call of a reply runs, the servers are started and listed for real (the loop's
  `settle`), and the call, its consent and the catalogue all go by what the servers say now;
- a list that changed is said in one line, the model gets the new one from its next request,
  and a call to a tool that is gone is refused like any unknown tool;
- an answer without calls never starts the SDK: the spawned servers are stopped unused.

An entry is used while it is younger than `MCP_LIST_CACHE_HOURS` (24 by default; 0: never), or
than the `ttlMs` a 2026-07-28 server sent with its list, whichever is shorter. A server that
listed skills or resources, an Apify server, an OAuth server and one in memory are always
started first: what they add to a request is more than a list. The key is a hash of the entry
(command, arguments, environment, URL, headers): a changed entry is a new server, and no
secret is written (only the tools' own JSON and the server's instructions are).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from ..core.defaults import APP_NAME
from ..core.record import Record

FORMAT = 1  # bumped when an entry's shape changes: older entries are then not read
HOUR = 3600.0


class Annotations(Record):
    read_only_hint: bool | None = None


class ListedTool(Record):
    """A tool as listed, read back from the cache: the fields the catalogue reads of an SDK `Tool`."""

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    annotations: Annotations | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ListedTool:
        hints = data.get("annotations")
        return cls(
            name=str(data["name"]),
            title=data.get("title"),
            description=data.get("description"),
            input_schema=data.get("inputSchema") or {},
            annotations=Annotations(hints.get("readOnlyHint")) if isinstance(hints, Mapping) else None,
        )


def tool_json(tool: Any) -> dict[str, Any]:
    """An SDK `Tool` as the server sent it (its JSON names), for the cache."""
    dump = getattr(tool, "model_dump", None)
    if dump is None:
        return {"name": tool.name}
    return dict(dump(by_alias=True, mode="json", exclude_none=True))


class Entry(Record):
    tools: tuple[ListedTool, ...]
    instructions: str | None
    listed_at: float


def cacheable(config: Any) -> bool:
    """Servers whose lists may stand in for them until a call: what else they add to a request
    (Apify's account line, an OAuth sign-in, an object in this process) needs them started."""
    return not (
        config.apify or config.oauth is not None or config.transport == "memory" or config.unavailable
    )


def server_key(config: Any) -> str:
    """A stable name for the entry `config`: every field that could change what it lists."""
    identity = [
        config.name,
        config.command,
        list(config.args),
        sorted(config.env.items()),
        config.cwd,
        config.url,
        sorted(config.headers.items()),
        config.protocol,
    ]
    return hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()[:32]


class ListCache:
    """The folder of cached tool lists; `clock` is injectable (seconds, like `time.time`)."""

    def __init__(
        self, folder: Path, *, max_age: float, clock: Callable[[], float] = time.time, write: bool = True
    ) -> None:
        self.folder = folder
        self.max_age = max_age  # seconds
        self.clock = clock
        self.writes = write  # False: read only (--private: nothing of the run is written)

    def path(self, config: Any) -> Path:
        return self.folder / f"{server_key(config)}.json"

    def read(self, config: Any) -> Entry | None:
        """The fresh entry of `config`'s server, or None (none, too old, unreadable, or not cacheable)."""
        if self.max_age <= 0 or not cacheable(config):
            return None
        try:
            data = json.loads(self.path(config).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or data.get("uses_more"):
                return None
            listed_at = float(data["listed_at"])
            ttl = data.get("ttl_ms")
            age = self.clock() - listed_at
            if not 0 <= age < min(self.max_age, ttl / 1000 if isinstance(ttl, int | float) else self.max_age):
                return None
            tools = tuple(ListedTool.from_json(tool) for tool in data["tools"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # a missing or damaged entry: the server is started first, as without a cache
        instructions = data.get("instructions")
        return Entry(tools, instructions if isinstance(instructions, str) else None, listed_at)

    def write(
        self,
        config: Any,
        tools: Sequence[Any],
        instructions: str | None,
        *,
        ttl_ms: int | None = None,
        uses_more: bool = False,
    ) -> None:
        """Keep what `config`'s server listed just now. `uses_more`: it listed skills or resources,
        so its list alone cannot stand in for it. Never fails the question: a folder that cannot
        be written only means no cache next time."""
        if not self.writes or self.max_age <= 0 or not cacheable(config):
            return
        entry = {
            "format": FORMAT,
            "server": config.name,
            "listed_at": self.clock(),
            "ttl_ms": ttl_ms,
            "uses_more": uses_more,
            "instructions": instructions,
            "tools": [tool_json(tool) for tool in tools],
        }
        path = self.path(config)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        with contextlib.suppress(OSError, TypeError, ValueError):
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, path)  # whole or not at all: a reader never sees half an entry
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)


def default_cache(hours: float, *, write: bool = True) -> ListCache:
    """The user's cache folder (e.g. ~/.cache/venice-agent/tool-lists)."""
    from platformdirs import user_cache_path

    return ListCache(
        user_cache_path(APP_NAME, appauthor=False) / "tool-lists", max_age=hours * HOUR, write=write
    )
