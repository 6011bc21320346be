"""Agent loops: chat-completions tool calling (direct tools or gateway), and built-in baselines."""

from compoworld.agents.loop import Episode, Limits, run_episode
from compoworld.agents.policies import LLMAgent, NoopAgent, OracleAgent

__all__ = ["Episode", "LLMAgent", "Limits", "NoopAgent", "OracleAgent", "run_episode"]
