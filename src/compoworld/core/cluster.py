"""Ray, when one machine is not enough: connect once, and keep Ray an optional import.

`connect("local")` starts a private local cluster (for a laptop or a test), `connect("auto")`
joins the cluster this machine belongs to, and any other value is a cluster address
("ray://head:10001" or "head:6379"). Ray is imported only here, only when a `--ray` option is used.
Here in core because task generation (`tasks.pipeline`) and rollouts (`rollout.cluster`) both use it.
"""

from __future__ import annotations

import os
from typing import Any


def connect(address: str | None = "auto", num_cpus: int | None = None) -> Any:
    """The `ray` module, initialised for `address` (reusing a connection already made)."""
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'compoworld[ray]'") from None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private local cluster needs no tokens
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address in (None, "", "local"):
            kw["num_cpus"] = num_cpus
        else:
            kw["address"] = address
        ray.init(**kw)
    return ray
