"""The engine (layer 1, the bottom): services and `@tool`, envelopes and error codes, clock, ids and
rng, state hashing and diffs, and `Environment`, composed over a `Library` it is given (`core.library`).

May import: nothing else of compoworld. Never the service library, the compiler or tasks: the package
root registers how a library is loaded, lazily, so `import compoworld.core` loads only core.
"""

from compoworld.core.clock import IdFactory, SimClock, derive_rng, format_time, parse_time
from compoworld.core.company import Company, make_company
from compoworld.core.envelope import (
    Conflict,
    InvalidArguments,
    NotFound,
    RuleViolation,
    ToolError,
    failure,
    is_envelope,
    ok,
)
from compoworld.core.environment import Environment
from compoworld.core.service import SeedContext, Service, check_arg
from compoworld.core.state import Change, canonical_json, hash_value
from compoworld.core.tool import ToolSpec, tool

__all__ = [
    "Change",
    "Company",
    "Conflict",
    "Environment",
    "IdFactory",
    "InvalidArguments",
    "NotFound",
    "RuleViolation",
    "SeedContext",
    "Service",
    "SimClock",
    "ToolError",
    "ToolSpec",
    "canonical_json",
    "check_arg",
    "derive_rng",
    "failure",
    "format_time",
    "hash_value",
    "is_envelope",
    "make_company",
    "ok",
    "parse_time",
    "tool",
]
