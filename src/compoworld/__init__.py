"""CompoWorld: executable, stateful, composable tool environments for LLM agents."""

from compoworld.core.environment import Environment

__all__ = ["Environment"]
__version__ = "0.1.0"
