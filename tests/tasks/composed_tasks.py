"""What the composed themes' tests share: the first `n` tasks a theme keeps at some settings."""

from __future__ import annotations

import contextlib

from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import Task


def composed_tasks(settings: Settings, n: int, seed: int) -> list[Task]:
    """Up to `n` kept tasks from the first 4n indices (a rejected index is skipped, as the pipeline does)."""
    out, i = [], 0
    while len(out) < n and i < 4 * n:
        with contextlib.suppress(Rejected):
            out.append(Task.model_validate(generate_task(seed, i, settings)))
        i += 1
    return out
