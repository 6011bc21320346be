"""Running episodes at scale (layer 5, with `agents` and `rewards`): the resumable runner, Ray actors,
metrics and reports.

May import: `core` through layer 4, `agents`, `rewards`, `llm`, `interfaces`. Never layer 6 or `cli`.
"""

from compoworld.rollout.metrics import pass_at_k, pass_hat_k
from compoworld.rollout.runner import RunConfig, load_run, run_eval

__all__ = ["RunConfig", "load_run", "pass_at_k", "pass_hat_k", "run_eval"]
