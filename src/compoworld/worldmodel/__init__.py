"""LLM-simulated tools with validated state updates, and measured fidelity (layer 3, beside the compiler).

May import: `core`, `services`, `compiler`, `llm`.
"""

from compoworld.worldmodel.simulator import (
    SimulationError,
    WorldModel,
    apply_patch,
    configure,
    parse_proposal,
)

__all__ = ["SimulationError", "WorldModel", "apply_patch", "configure", "parse_proposal"]
