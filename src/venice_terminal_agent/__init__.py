"""venice-agent: a terminal agent on a deterministic loop.

Every public name is imported on first use: the loop pulls in asyncio (~60 ms), which
`venice-agent --help` has no use for, and everything that talks to a model, MCP servers,
SQLite or the terminal is heavier still.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bot.bot import Bot
    from .core.errors import ToolError
    from .core.loop import Outcome, Planner, Stop, run_loop
    from .core.receipt import EXIT_STATUS, Answer, Call, Exit, Receipt, Step

_HOME = {
    "Outcome": "core.loop", "Planner": "core.loop", "Stop": "core.loop", "run_loop": "core.loop",
    "EXIT_STATUS": "core.receipt", "Answer": "core.receipt", "Call": "core.receipt",
    "Exit": "core.receipt", "Receipt": "core.receipt", "Step": "core.receipt",
    "ToolError": "core.errors", "Bot": "bot.bot",
}  # fmt: skip

__all__ = [
    "EXIT_STATUS",
    "Answer",
    "Bot",
    "Call",
    "Exit",
    "Outcome",
    "Planner",
    "Receipt",
    "Step",
    "Stop",
    "ToolError",
    "run_loop",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is not None:
        from importlib import import_module

        value = getattr(import_module(f"{__name__}.{home}"), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'venice_terminal_agent' has no attribute {name!r}")
