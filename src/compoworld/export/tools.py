"""The tool list an episode saw, rebuilt from service declarations (no environment needed).

`episode_tools(services, mode)` is the list an episode of that mode is offered: the four meta-tools
of a gateway mode plus `finish`, or, in direct mode, every tool of the services (the task's and its
distractors) plus `finish`. `tools_named(names, mode)` rebuilds an episode's recorded list by name.
"""

from __future__ import annotations

from typing import Any

from compoworld.core.environment import Environment, full_name, tool_entry
from compoworld.core.gateway import COMPAT_SPECS, SPECS
from compoworld.services import with_interfaces
from compoworld.tasks.prompt import FINISH, FINISH_TOOL

# Chat Completions takes at most 128 tools a request: a row listing more cannot be served as trained.
MAX_OPENAI_TOOLS = 128


def _meta_specs(mode: str):
    return COMPAT_SPECS if mode == "gateway-compat" else SPECS


def episode_tools(services: list[str], mode: str) -> list[dict[str, Any]]:
    if mode in ("gateway", "gateway-compat"):
        tools = [tool_entry(name, spec, "openai") for name, spec in _meta_specs(mode).items()]
    else:
        tools = [
            tool_entry(full_name(s, t), spec, "openai")
            for s in services
            for t, spec in with_interfaces()[s].tool_specs.items()
        ]
    return [*tools, FINISH_TOOL]


def tools_named(names: list[str], mode: str) -> list[dict[str, Any]]:
    """The schemas of the tools an episode recorded as offered, in its order."""
    meta = _meta_specs(mode) if mode in ("gateway", "gateway-compat") else {}
    reg = with_interfaces()
    out = []
    for name in names:
        if name == FINISH:
            out.append(FINISH_TOOL)
        elif name in meta:
            out.append(tool_entry(name, meta[name], "openai"))
        else:
            svc, _, tool = name.partition("__")
            spec = reg[svc].tool_specs.get(tool) if svc in reg else None
            if spec is None:
                raise ValueError(
                    f"tool {name!r} of the episode is not in this library (was the run made with another one?)"
                )
            out.append(tool_entry(name, spec, "openai"))
    return out


class Catalog:
    """What the gateway's discovery tools read (services, their tools and schemas), without state:
    `Gateway(Catalog(services))` answers `list_services`, `list_tools` and `describe_tool` exactly as
    it does over a live environment of those services."""

    _unknown_tool_message = Environment._unknown_tool_message

    def __init__(self, services: list[str]) -> None:
        reg = with_interfaces()
        self.services = {s: reg[s] for s in services}
        self._specs = {
            full_name(s, t): spec for s, cls in self.services.items() for t, spec in cls.tool_specs.items()
        }

    @property
    def tool_names(self) -> list[str]:
        return list(self._specs)

    def tool_spec(self, name: str):
        return self._specs.get(name) if isinstance(name, str) else None
