"""The model side: OpenAI-compatible streaming client, model discovery, stream assembly, LLM planner.

Importing this package does not import httpx2; the client loads it when one is created (it
never loads the openai SDK: `wire.py` says why).
"""

from ..core.errors import ModelError, NoModelError
from .client import VeniceClient
from .planner import LLMPlanner
from .retry import RetryPolicy
from .stream import Assembler, Completion

__all__ = [
    "Assembler",
    "Completion",
    "LLMPlanner",
    "ModelError",
    "NoModelError",
    "RetryPolicy",
    "VeniceClient",
]
