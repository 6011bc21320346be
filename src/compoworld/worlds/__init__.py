"""WildAWM-style worlds (layer 4, with `tasks` and `verify`): personas living through long, replayable
histories.

May import: the layers below (`core`, `services`, `compiler`, `llm`). Never `tasks` or anything above.
"""

from compoworld.worlds.builder import build_days, build_world, check_world, live
from compoworld.worlds.persona import Persona, make_personas, similarity
from compoworld.worlds.planner import plan_day
from compoworld.worlds.store import World, locate, open_world, pack, unpack

__all__ = [
    "Persona",
    "World",
    "build_days",
    "build_world",
    "check_world",
    "live",
    "locate",
    "make_personas",
    "open_world",
    "pack",
    "plan_day",
    "similarity",
    "unpack",
]
