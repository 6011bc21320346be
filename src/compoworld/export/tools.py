"""The tool list an episode saw, rebuilt from service declarations (no environment needed)."""

from __future__ import annotations

from typing import Any

from compoworld.agents.prompt import FINISH_TOOL
from compoworld.core.environment import full_name, tool_entry
from compoworld.core.gateway import Gateway
from compoworld.services import registry


def episode_tools(services: list[str], mode: str) -> list[dict[str, Any]]:
    if mode == "gateway":
        tools = [tool_entry(name, spec, "openai") for name, spec in Gateway.specs.items()]
    else:
        tools = [
            tool_entry(full_name(s, t), spec, "openai")
            for s in services
            for t, spec in registry()[s].tool_specs.items()
        ]
    return [*tools, FINISH_TOOL]
