"""Fidelity: how far the world model drifts from real implementations, tool by tool.

N random valid calls are drawn over the given services. Each runs twice from the same state: the real
(deterministic) implementation, and the world model in its place. Per tool we report the agreement on
success / error, the exact match of the state diff, and the share of the observation's fields that
match. The state then moves on with the real result, so later calls see realistic states.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from compoworld.compiler.values import NoValue, sample
from compoworld.core.environment import Environment
from compoworld.worldmodel.simulator import WorldModel

FAIL_FAST = 3  # endpoint failures before the first success that stop a fidelity run


class FidelityError(RuntimeError):
    """No figure can be given: the world model never answered."""


def random_args(svc: Any, spec: Any, rng: random.Random) -> dict[str, Any]:
    """Schema-valid arguments; id-like parameters name records that exist in the service."""
    schema = spec.input_schema
    props = schema.get("properties", {})
    args: dict[str, Any] = {}
    for p in schema.get("required", []):
        s = props.get(p, {})
        if re.search(r"(^id$|_id$|Id$|^key$|_key$|_gid$)", p) and s.get("type", "string") in (
            "string",
            "integer",
        ):
            stem = re.sub(r"(_?id|_?key|_gid|Id)$", "", p).lower()
            tables = [
                t for t in svc.store.tables if not t.startswith("_") and t.rstrip("s").endswith(stem or "#")
            ]
            pool = [
                k
                for t in (tables or [t for t in svc.store.tables if not t.startswith("_")])
                for k in svc.table(t)
            ]
            if pool:
                k = sorted(map(str, pool))[rng.randrange(len(pool))]
                args[p] = int(k) if s.get("type") == "integer" and k.isdigit() else k
                continue
        args[p] = sample(s, p, rng)
    return args


def _field_match(real: Any, sim: Any) -> float:
    if isinstance(real, dict) and isinstance(sim, dict):
        if not real:
            return 1.0 if not sim else 0.0
        return sum(1 for k, v in real.items() if k in sim and sim[k] == v) / len(real)
    return 1.0 if real == sim else 0.0


def measure(
    env: Environment,
    wm: WorldModel,
    calls: int,
    seed: int = 0,
    tools: list[str] | None = None,
    on_progress: Callable[[int, WorldModel], None] | None = None,
) -> dict[str, Any]:
    """Agreement per tool over `calls` random valid calls. Raises `FidelityError` when the world
    model gave no proposal at all (figures from zero model calls would be meaningless), and stops
    after `FAIL_FAST` endpoint failures before any success (a dead endpoint fails in seconds)."""
    rng = random.Random(seed)
    names = sorted(env.tool_names)
    if tools:
        unknown = [t for t in tools if t not in names]
        if unknown:
            raise KeyError(f"unknown tool(s) {', '.join(unknown)}")
        names = sorted(tools)
    per: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"calls": 0, "success_agree": 0, "diff_exact": 0, "field_match": 0.0, "sim_errors": 0}
    )
    samples: list[dict[str, Any]] = []
    made = 0
    attempts = 0
    while made < calls and attempts < calls * 20:
        attempts += 1
        name = names[rng.randrange(len(names))]
        svc, spec = env.services[name.split("__", 1)[0]], env.tool_spec(name)
        try:
            args = random_args(svc, spec, rng)
        except NoValue:
            continue
        s0 = env.snapshot()
        real = env.call(name, args)
        s_real = env.snapshot()
        real_diff = sorted(map(tuple, env.diff(s0, s_real)), key=repr)
        env.restore(s0)
        sim = wm.simulate(svc, spec, args)
        s_sim = env.snapshot()
        sim_diff = sorted(map(tuple, env.diff(s0, s_sim)), key=repr)
        env.restore(s_real)  # the run goes on from the real result
        row = per[name]
        row["calls"] += 1
        # no valid proposal (malformed, invalid against the state model, the endpoint failed): the model
        # said nothing about this call, so it agrees on nothing, even where the real call changed nothing
        valid = sim["success"] or sim["error"]["type"] != "simulation_error"
        row["valid"] = row.get("valid", 0) + valid
        agree = valid and real["success"] == sim["success"]
        exact = valid and real_diff == sim_diff
        if not valid:
            fm = 0.0
        elif real["success"] and sim["success"]:
            fm = _field_match(real["data"], sim["data"])
        elif not real["success"] and not sim["success"]:
            fm = 1.0 if real["error"]["code"] == sim["error"]["code"] else 0.0
        else:
            fm = 0.0
        row["success_agree"] += agree
        row["diff_exact"] += exact
        row["field_match"] += fm
        if not sim["success"] and sim["error"]["type"] == "simulation_error":
            row["sim_errors"] += 1
        samples.append(
            {
                "tool": name,
                "arguments": args,
                "real_success": real["success"],
                "simulated_success": sim["success"],
                "diff_exact": exact,
                "field_match": fm,
                "valid_proposal": valid,
            }
        )
        made += 1
        if on_progress:
            on_progress(1, wm)
        if wm.failures >= FAIL_FAST and wm.calls + wm.cache_hits == 0:
            raise FidelityError(
                f"the world model endpoint failed {wm.failures} time(s) and never answered; "
                f"no figures. Last error: {wm.last_error}"
            )
    if wm.calls + wm.cache_hits == 0:
        raise FidelityError(
            f"no world-model call succeeded ({wm.failures} failed"
            f"{'; last error: ' + wm.last_error if wm.last_error else ''}); no figures"
        )
    tools = {}
    for name, r in sorted(per.items()):
        n = r["calls"]
        tools[name] = {
            "calls": n,
            "success_agreement": r["success_agree"] / n,
            "diff_exact": r["diff_exact"] / n,
            "field_match": r["field_match"] / n,
            "simulation_errors": r["sim_errors"],
            "valid_proposals": r.get("valid", 0),
        }
    total = sum(t["calls"] for t in tools.values())

    def mean(k: str) -> float:
        return sum(t[k] * t["calls"] for t in tools.values()) / total if total else 0.0

    per_service: dict[str, list[int]] = defaultdict(list)
    for svc_name, n in wm.prompt_tokens:
        per_service[svc_name].append(n)
    prompt_tokens = {
        name: {"max": max(ns), "mean": round(sum(ns) / len(ns)), "prompts": len(ns)}
        for name, ns in sorted(per_service.items())
    }
    return {
        "calls": total,
        "valid_proposals": sum(t["valid_proposals"] for t in tools.values()),
        "model_calls": wm.calls,
        "cache_hits": wm.cache_hits,
        "endpoint_failures": wm.failures,
        "prompt_tokens": prompt_tokens,
        "max_tokens": wm.max_tokens,
        "success_agreement": mean("success_agreement"),
        "diff_exact": mean("diff_exact"),
        "field_match": mean("field_match"),
        "tools": tools,
        "samples": samples,
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        "# World-model fidelity",
        "",
        f"{report['calls']} calls ({report['model_calls']} model calls, {report.get('cache_hits', 0)} from the "
        f"cache, {report.get('endpoint_failures', 0)} endpoint failures); {report.get('valid_proposals', 0)} of "
        f"{report['calls']} had a valid proposal (the rest count as disagreements). "
        f"Success/error agreement {report['success_agreement']:.3f}, state diff exact {report['diff_exact']:.3f}, "
        f"observation fields {report['field_match']:.3f}.",
        "",
    ]
    if report.get("prompt_tokens"):
        lines += [
            f"Prompt sizes (estimated tokens; max_tokens {report.get('max_tokens')} per proposal):",
            "",
            "| service | max | mean | prompts |",
            "|---|---:|---:|---:|",
        ]
        lines += [
            f"| {name} | {p['max']} | {p['mean']} | {p['prompts']} |"
            for name, p in report["prompt_tokens"].items()
        ]
        lines.append("")
    lines += [
        "| tool | calls | success agreement | diff exact | field match | simulation errors |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t in report["tools"].items():
        lines.append(
            f"| {name} | {t['calls']} | {t['success_agreement']:.2f} | {t['diff_exact']:.2f} | "
            f"{t['field_match']:.2f} | {t['simulation_errors']} |"
        )
    return "\n".join(lines) + "\n"
