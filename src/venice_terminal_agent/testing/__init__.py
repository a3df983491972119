"""Scripted fakes shipped with the package, for our tests and anyone's.

`FakeVenice` is a fake OpenAI/Venice server on 127.0.0.1 (real HTTP, real SSE) that plays a
scripted conversation; see `venice_terminal_agent.testing.fake_venice` for the script format.
Imported lazily so `python -m venice_terminal_agent.testing.fake_venice` runs cleanly.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fake_venice import FakeVenice, Seen
    from .replies import ScriptError

__all__ = ["FakeVenice", "ScriptError", "Seen"]


def __getattr__(name: str) -> Any:
    if name in ("FakeVenice", "Seen"):
        from . import fake_venice

        return getattr(fake_venice, name)
    if name == "ScriptError":
        from .replies import ScriptError

        return ScriptError
    raise AttributeError(f"module 'venice_terminal_agent.testing' has no attribute {name!r}")
