"""What start-up is waiting for, said on stderr while it waits (on a terminal only):

    ⠋ asking api.venice.ai for models · starting apify, time (1 of 3 ready)

Started before the SDKs are imported, so it shows within a tenth of a second; Rich redraws
it from its own thread, so it keeps turning while an import holds this one. It goes away
before anything else is printed. Piped or redirected, it prints nothing at all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import typer

from ..text import safe


class StartupSpinner:
    def __init__(self, console: Any, *, base_url: str | None, servers: Sequence[str]) -> None:
        self.console = console  # a stderr console: stdout stays for answers
        self.host = (urlsplit(base_url).hostname or base_url) if base_url else None
        self.starting = list(servers)
        self.total = len(self.starting)
        self.ready = 0
        self._status: Any = None

    def text(self) -> str:
        parts = []
        if self.host:
            parts.append(f"asking {self.host} for models")
        if self.starting:
            parts.append(f"starting {', '.join(self.starting)} ({self.ready} of {self.total} ready)")
        return " · ".join(parts)

    def start(self) -> StartupSpinner:
        if self.console.is_terminal and self.text():
            self._status = self.console.status(self.text(), spinner="dots")
            self._status.start()
        return self

    def server(self, status: Any) -> None:
        """`on_status` of the MCP toolbox: a server that is ready or failed is no longer awaited."""
        if status.state != "starting" and status.name in self.starting:
            self.starting.remove(status.name)
            self.ready += status.state == "ready"
            self._update()

    def model_found(self) -> None:
        self.host = None
        self._update()

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _update(self) -> None:
        if self._status is None:
            return
        if self.text():
            self._status.update(self.text())
        else:
            self.stop()


def starting_lines(quiet: bool) -> Callable[[Any], None] | None:
    """One line on stderr as each MCP server starts (a terminal only, not `quiet`); None: silent."""
    if quiet or not sys.stderr.isatty():
        return None

    def show(status: Any) -> None:
        if status.state == "starting":
            typer.echo(f"starting {safe(status.name)} ({safe(status.where)})…", err=True)

    return show
