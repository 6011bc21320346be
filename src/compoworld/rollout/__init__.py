"""Running episodes at scale: the resumable runner, metrics and reports."""

from compoworld.rollout.metrics import pass_at_k, pass_hat_k
from compoworld.rollout.runner import RunConfig, load_run, run_eval

__all__ = ["RunConfig", "load_run", "pass_at_k", "pass_hat_k", "run_eval"]
