"""venice-agent: a terminal agent on a deterministic loop.

The loop and its values are imported eagerly (they are pure and light); everything that
talks to a model, MCP servers, SQLite or the terminal is imported only when first used.
"""

from typing import TYPE_CHECKING, Any

from .loop import Outcome, Planner, Stop, run_loop
from .receipt import EXIT_STATUS, Answer, Call, Exit, Receipt, Step
from .tools.base import ToolError

if TYPE_CHECKING:
    from .bot import Bot

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
    if name == "Bot":
        from .bot import Bot

        return Bot
    raise AttributeError(f"module 'venice_terminal_agent' has no attribute {name!r}")
