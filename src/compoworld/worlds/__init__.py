"""WildAWM-style worlds: personas living through replayable days."""

from compoworld.worlds.builder import build_days, build_world, check_world, plan_day
from compoworld.worlds.persona import Persona, make_personas, similarity

__all__ = ["Persona", "build_days", "build_world", "check_world", "make_personas", "plan_day", "similarity"]
