"""World-model prompt size per library service at the default size: the fitted prompt (tables the
tool can touch, named records, a bounded sample) against the whole-state prompt it replaced.

Tokens are estimated (one per 3 characters, `compoworld.llm.estimate_tokens`), over every tool of
each service with schema-valid random arguments (ids drawn from existing records). Prints the
largest and mean prompt per service and the ratio of the old largest to the new.

    .venv/bin/python benchmarks/worldmodel_prompt.py [--size default] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from compoworld.compiler.values import NoValue
from compoworld.core.environment import Environment
from compoworld.core.state import META
from compoworld.llm.client import LLMConfig
from compoworld.llm.profiles import estimate_tokens
from compoworld.services import registry
from compoworld.worldmodel.fidelity import random_args
from compoworld.worldmodel.simulator import SYSTEM, WorldModel


def whole_state_tokens(svc, spec, args) -> int:
    """The prompt before: the tool's spec and arguments plus every table (up to 50 records each)."""
    state = {t: dict(list(v.items())[:50]) for t, v in svc.store.tables.items() if t != META}
    user = {"tool": {"name": spec.name, "inputSchema": spec.input_schema}, "arguments": args, "state": state}
    return estimate_tokens(SYSTEM + json.dumps(user, default=str))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="default")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    wm = WorldModel(LLMConfig(base_url="http://127.0.0.1:9/v1", model="none"))
    rng = random.Random(a.seed)
    rows = []
    for name in sorted(registry()):
        env = Environment([name], seed=a.seed, size=a.size)
        svc = env.services[name]
        new, old = [], []
        for spec in svc.tool_specs.values():
            try:
                args = random_args(svc, spec, rng)
            except NoValue:
                continue
            new.append(wm.prompt_tokens_of(svc, spec, args))
            old.append(whole_state_tokens(svc, spec, args))
        if new:
            rows.append((name, max(new), sum(new) // len(new), max(old)))
    print(f"{'service':<12} {'max':>7} {'mean':>7} {'whole-state max':>16} {'ratio':>7}")
    for name, mx, mean, old in rows:
        print(f"{name:<12} {mx:>7} {mean:>7} {old:>16} {old / mx:>6.1f}x")
    worst = max(r[1] for r in rows)
    print(f"largest fitted prompt {worst} tokens (limit 8000); whole-state largest {max(r[3] for r in rows)}")
    return 0 if worst <= 8000 else 1


if __name__ == "__main__":
    sys.exit(main())
