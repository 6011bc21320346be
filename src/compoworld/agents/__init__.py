"""Agent loops (layer 5, with `rollout` and `rewards`): chat-completions tool calling (direct tools or
gateway), and built-in baselines.

May import: `core` through layer 4 (`tasks`, `verify`), `llm`, `rewards`. Never `serve`, `export`,
`integrations` or `cli`.
"""

from compoworld.agents.loop import Episode, Limits, run_episode
from compoworld.agents.policies import LLMAgent, NoopAgent, OracleAgent

__all__ = ["Episode", "LLMAgent", "Limits", "NoopAgent", "OracleAgent", "run_episode"]
