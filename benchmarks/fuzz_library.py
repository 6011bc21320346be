"""Hostile fuzz of every compiled tool of the corpus: the engine's invariants under attack.

For every tool that runs as code, seeded hostile calls: valid arguments, then each of them mutated
(a field dropped, a wrong type, huge and non-finite numbers, 1e308 for integers, unknown ids, long and
control-character strings, nested junk, unknown fields). Each call must:
- return one envelope (success with data, or an error whose code is 400/404/409/422, never 500);
- change nothing when it fails (the service's hash is unchanged);
- leave state that validates against the service's own model when it succeeds;
- keep every stored value inside the enum the spec states for its field (seeded and written).

Prints the calls made, each kind of violation (all should be 0) and the throughput, against the
throughput of the same number of valid calls (the baseline: what the fuzz's hostility costs).

    python benchmarks/fuzz_library.py [SPECS_FOLDER] [--sample N] [--calls-per-tool K] [--seed S]

CI does not run this (tests/compiler samples it); it covers the whole corpus.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from compoworld.compiler import compile_spec, load_spec, service_from_manifest
from compoworld.compiler.compiler import unique_service_names
from compoworld.compiler.runtime import off_enum
from compoworld.compiler.values import NoValue, valid_args, wrong_type
from compoworld.core.envelope import is_envelope
from compoworld.core.environment import Environment

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "mcp-specs"
AGENT_CODES = {400, 404, 409, 422}
HOSTILE_VALUES: list[Any] = [
    1e308,
    -1e308,
    math.inf,
    float("nan"),
    2**63,
    -(2**70),
    0,
    -1,
    "",
    " ",
    "x" * 20_000,
    "\x00\x1b[31m\u202e",
    "../../etc/passwd",
    "'; DROP TABLE x; --",
    None,
    True,
    [],
    [None, {"a": [1, {"b": None}]}],
    {"$gt": ""},
    {"__proto__": {"admin": True}},
    "UNKNOWN-ID-000000",
]


def _hostile(args: dict[str, Any], schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    props = schema.get("properties") or {}
    out = dict(args)
    kind = rng.randrange(5)
    keys = sorted(set(out) | set(props))
    if kind == 0 and out:
        out.pop(rng.choice(sorted(out)))
    elif kind == 1 and keys:
        k = rng.choice(keys)
        try:
            out[k] = wrong_type(props.get(k) or {})
        except NoValue:  # the parameter accepts any type
            out[k] = rng.choice(HOSTILE_VALUES)
    elif kind == 2:
        out["unexpected_" + str(rng.randrange(100))] = rng.choice(HOSTILE_VALUES)
    elif kind == 3 and keys:
        for k in rng.sample(keys, min(len(keys), rng.randint(1, 3))):
            out[k] = rng.choice(HOSTILE_VALUES)
    elif keys:
        out[rng.choice(keys)] = rng.choice(HOSTILE_VALUES)
    return out


def _off_enum(svc: Any, manifest: dict[str, Any], where: str) -> int:
    """Records holding a value outside the enum the spec states for that field."""
    n = 0
    for rname, r in manifest["resources"].items():
        for rec in svc.table(r["table"]).values():
            bad = off_enum(r, rec)
            if bad:
                n += 1
                print(
                    f"off-enum ({where}): {manifest['service']}.{rname}.{bad[0]} = {bad[1]!r}",
                    file=sys.stderr,
                )
    return n


def fuzz_service(
    manifest: dict[str, Any], calls_per_tool: int, seed: int
) -> tuple[Counter[str], float, float]:
    """(counts, hostile seconds, valid seconds) for one compiled service."""
    cls = service_from_manifest(manifest)
    env = Environment([cls], seed=seed, size="small")
    svc = env.services[cls.name]
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    counts["off_enum_seeds"] += _off_enum(svc, manifest, "seed")
    hostile_s = valid_s = 0.0
    for t in manifest["tools"]:
        if t["status"] != "compiled":
            continue
        name = f"{cls.name}__{t['name']}"
        schema = t["input_schema"]
        for _ in range(calls_per_tool):
            env.reset()
            try:
                base = valid_args(svc, t, rng, optional=rng.random() < 0.5)
            except NoValue:
                base = {}
            t0 = time.perf_counter()
            env.call(name, base)
            valid_s += time.perf_counter() - t0
            env.reset()
            args = _hostile(base, schema, rng)
            before = env.service_hashes()
            t0 = time.perf_counter()
            try:
                r = env.call(name, args)
            except Exception:  # the engine must never raise out of a call
                counts["raised"] += 1
                continue
            finally:
                hostile_s += time.perf_counter() - t0
            counts["calls"] += 1
            if not is_envelope(r):
                counts["not_an_envelope"] += 1
                continue
            if r["success"]:
                counts["succeeded"] += 1
                counts["off_enum_writes"] += min(1, _off_enum(svc, manifest, name))
                bad = [v for v in env.validate().values() if v is not None]
                if bad:
                    counts["success_left_invalid_state"] += 1
                    print(f"invalid state: {name} {str(args)[:120]}: {str(bad[0])[:160]}", file=sys.stderr)
            else:
                code = r["error"]["code"]
                if code not in AGENT_CODES:
                    counts[f"error_code_{code}"] += 1
                    print(
                        f"code {code}: {name} {str(args)[:120]}: {r['error']['message'][:160]}",
                        file=sys.stderr,
                    )
                if env.service_hashes() != before:
                    counts["failed_call_changed_state"] += 1
                    print(f"changed state on failure: {name} {str(args)[:120]}", file=sys.stderr)
    return counts, hostile_s, valid_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--sample", type=int, default=0, help="Only the first N spec files (0: all).")
    ap.add_argument("--calls-per-tool", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    files = sorted(a.specs.rglob("*.json"))[: a.sample or None]
    files = [f for f in files if f.name != "README.json"]
    if not files:
        sys.exit(f"error: no *.json specs under {a.specs}")
    names = unique_service_names(files, set())
    total: Counter[str] = Counter()
    hostile_s = valid_s = 0.0
    crashes = 0
    for f in files:
        try:
            load_spec(f)
            m = compile_spec(f, names[f])
        except Exception as e:
            crashes += 1
            print(f"compile crash: {f.name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        c, h, v = fuzz_service(m, a.calls_per_tool, a.seed)
        total.update(c)
        hostile_s += h
        valid_s += v
    calls = total["calls"]
    violations = {
        k: total[k]
        for k in (
            "raised",
            "not_an_envelope",
            "failed_call_changed_state",
            "success_left_invalid_state",
            "off_enum_writes",
            "off_enum_seeds",
        )
    }
    violations.update({k: v for k, v in total.items() if k.startswith("error_code_")})
    print(
        f"specs {len(files)}; compile crashes {crashes}; hostile calls {calls} ({total['succeeded']} succeeded)"
    )
    for k, v in violations.items():
        print(f"  {k:32} {v}")
    print(f"{'figure':34} {'value':>10} {'baseline':30} {'base':>10} {'ratio':>7}")
    hostile_rate = calls / hostile_s if hostile_s else 0.0
    valid_rate = calls / valid_s if valid_s else 0.0
    print(
        f"{'hostile calls per second':34} {hostile_rate:10.0f} {'valid calls per second':30} "
        f"{valid_rate:10.0f} {hostile_rate / valid_rate if valid_rate else 0:7.2f}"
    )
    sys.exit(1 if any(violations.values()) or crashes else 0)


if __name__ == "__main__":
    main()
