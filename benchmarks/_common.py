"""Shared timing helpers for the benchmarks: medians over repeated runs, printed as a table."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_us(
    fn: Callable[[], object], repeat: int = 2000, setup: Callable[[], object] | None = None
) -> float:
    """Median wall time of `fn` in microseconds; `setup` runs untimed before each sample."""
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        t = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t)
    return statistics.median(samples) / 1000


def report(rows: list[tuple[str, float, str, float, str]]) -> None:
    """rows: (figure, value_us, baseline name, baseline_us, target)."""
    print(f"{'figure':34} {'median':>12} {'baseline':38} {'base median':>12} {'ratio':>8}  target")
    for name, value, base_name, base, target in rows:
        ratio = base / value if value else float("inf")
        print(f"{name:34} {value:>10.1f}µs {base_name:38} {base:>10.1f}µs {ratio:>7.1f}x  {target}")
