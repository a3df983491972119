"""Scripted fakes shipped with the package, for our tests and anyone's (the `testing` extra).

`MockVenice` plays a scripted model API in process, as an `httpx2.MockTransport` handler (give
`VeniceClient(http_client=fake.http_client())`); `FakeVenice` plays the same script on a real
socket on 127.0.0.1 (real HTTP, real SSE), for commands run as processes. Both check every
request the same way; see `venice_terminal_agent.testing.fake_venice` for the script format.
Imported lazily so `python -m venice_terminal_agent.testing.fake_venice` runs cleanly.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fake_venice import FakeVenice
    from .mock_venice import MockVenice
    from .replies import ScriptError
    from .scripted import Seen

__all__ = ["FakeVenice", "MockVenice", "ScriptError", "Seen"]

_HOME = {
    "FakeVenice": "fake_venice",
    "MockVenice": "mock_venice",
    "ScriptError": "replies",
    "Seen": "scripted",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'venice_terminal_agent.testing' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{home}"), name)
