"""Metrics over a run: pass@k, pass^k, mean score, error classes, and breakdowns."""

from __future__ import annotations

from collections import defaultdict
from math import comb
from typing import Any


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k samples (of n, c correct) passes."""
    if k > n:
        raise ValueError(f"k={k} > n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): the chance that all of k samples pass."""
    if k > n:
        raise ValueError(f"k={k} > n={n}")
    return comb(c, k) / comb(n, k)


def summarize(episodes: list[dict[str, Any]], k: int) -> dict[str, Any]:
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in episodes:
        by_task[e["task_id"]].append(e)
    n_tasks = len(by_task)
    errors: dict[str, int] = defaultdict(int)
    for e in episodes:
        errors[e["error_class"]] += 1
    out: dict[str, Any] = {
        "tasks": n_tasks,
        "episodes": len(episodes),
        "mean_score": _mean(e["score"] for e in episodes),
        "mean_V": _mean(e["V"] for e in episodes),
        "error_classes": dict(sorted(errors.items())),
        # calls to simulated tools with no world model configured (503): the environment's gap,
        # counted apart from agent and server errors
        "world_model_unavailable": _unavailable(episodes),
    }
    for kk in sorted({1, k}):
        groups = [g for g in by_task.values() if len(g) >= kk]
        out[f"pass@{kk}"] = _mean(pass_at_k(len(g), sum(e["V"] for e in g), kk) for g in groups)
        out[f"pass^{kk}"] = _mean(pass_hat_k(len(g), sum(e["V"] for e in g), kk) for g in groups)
    return out


def _unavailable(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    calls: dict[str, int] = defaultdict(int)
    hit = 0
    for e in episodes:
        mine = 0
        for st in e.get("steps") or []:
            err = (st.get("envelope") or {}).get("error") if isinstance(st, dict) else None
            if isinstance(err, dict) and err.get("type") == "world_model_unavailable":
                calls[str(st.get("tool"))] += 1
                mine += 1
        hit += mine > 0
    return {"calls": sum(calls.values()), "episodes": hit, "tools": dict(sorted(calls.items()))}


def breakdown(episodes: list[dict[str, Any]], key: str) -> dict[str, dict[str, float]]:
    """Pass rate and mean score per value of `key` (a list field counts each value)."""
    acc: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in episodes:
        vals = e.get(key)
        for v in vals if isinstance(vals, list) else [vals]:
            acc[str(v)].append(e)

    def order(v: str) -> tuple[bool, float, str]:
        num = v.lstrip("-").replace(".", "", 1).isdigit()
        return (not num, float(v) if num else 0.0, v)

    return {
        v: {
            "episodes": len(es),
            "pass_rate": _mean(e["V"] for e in es),
            "mean_score": _mean(e["score"] for e in es),
        }
        for v, es in sorted(acc.items(), key=lambda kv: order(kv[0]))
    }


def _mean(xs) -> float:
    xs = list(xs)
    return round(sum(xs) / len(xs), 4) if xs else 0.0
