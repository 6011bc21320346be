"""Does the verifier read the work? Attacks a careful user rejects, and honest variants it must accept.

On fresh seeds, three sets of generated tasks (each candidate that passes every non-adversarial gate):
- default: the hand-built workflow families;
- persona: tasks starting from persona worlds (`worlds build`, then `tasks generate --world`);
- compiled: families over services compiled from MCP specs (`--families compiled`);
- composed: composed work at depth (`--difficulty medium`: K >= 4 stages wired output to input);
- hard: hard composed work (`--k 5 --difficulty hard`: policies with versions, fallbacks, approvals).

For each task it runs the attack suite of `tasks.adversaries` (the built-in adversaries plus gutted
text, near-miss values, an extra cc, hedged / refused / wrong-unit / dumped answers, deleting an
allowed record; and, from `tasks.work_attacks`, a mixed-up or extra log row, a touched or
left-alone record moved to another state, the wrong person mentioned) and the honest variants of
`tasks.variants` (extra reads, reordered writes, paraphrased text with the same facts, other number
and date forms, labelled context, a documented optional field, people by @-mention or first name,
log rows in another order and cell format). It prints, per set and overall:
- the share of tasks where some rejected end state still passes (target <= 5%);
- the share of honest variants that fail (target <= 2%);
and, as the baseline measured in the same run, the same attacks against the checks the families
declare alone (nothing derived from the reference's effects), with the ratio.

    python benchmarks/verifier_attacks.py --n 40 --seed 5151
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT.parent / "shared" / "mcp-specs"
COMPILED = {
    "klavis_shopify.json": "shopify",
    "klavis_linear.json": "linear",
    "klavis_mailchimp.json": "mailchimp",
    "corpus/klavis_resend.json": "resend",
    "bamboohr.json": "bamboohr",
}


def _declared_only(task):
    """The task with only the checks its family declared (the baseline verifier)."""
    rubric = []
    for r in task.rubric:
        if r.check.get("predicate") in ("text_carries", "recipients_only", "rows_written", "field_kept"):
            continue
        check = {k: v for k, v in r.check.items() if k not in ("currency", "unit")}
        rubric.append(r.model_copy(update={"check": check}))
    return task.model_copy(update={"rubric": rubric})


def measure(name: str, seed: int, n: int, settings) -> dict:
    from compoworld.tasks.adversaries import attack
    from compoworld.tasks.gates import replay, run_gates
    from compoworld.tasks.generator import Rejected, generate_task
    from compoworld.tasks.model import Task
    from compoworld.tasks.variants import honest_variants, run_variant
    from compoworld.tasks.work_attacks import work_attacks

    tasks = holes = base_holes = variants = failed = 0
    by_attack: Counter = Counter()
    by_variant: Counter = Counter()
    tried: Counter = Counter()  # the work attacks (issue 23's follow-ups) and the variants, as run
    variants_run: Counter = Counter()
    failures: list[str] = []
    i = 0
    while tasks < n and i < n * 4:
        i += 1
        try:
            task = Task.model_validate(generate_task(seed, i, settings))
        except Rejected:
            continue
        gates = run_gates(task, regenerate=False)
        if any(why for g, why in gates.items() if not g.startswith("adversar")):
            continue  # not a task (unsolvable, leaky, ...): nothing to attack
        tasks += 1
        passed = [g.split(":", 1)[1] for g, why in gates.items() if g.startswith("adversary:") and why]
        by_attack.update(passed)
        holes += bool(passed)
        base = _declared_only(task)
        env = base.environment()
        final, _, _ = replay(env, [c.model_dump() for c in base.reference_solution])
        env.reset()
        base_holes += any(attack(base, env, final).values())
        env = task.environment()
        final, _, _ = replay(env, [c.model_dump() for c in task.reference_solution])
        tried.update({a for a, _why, _state in work_attacks(task, final)})
        env.reset()
        for vname, (calls, answer) in honest_variants(task, env).items():
            ok, why = run_variant(task, calls, answer)
            variants += 1
            variants_run[vname] += 1
            if not ok:
                failed += 1
                by_variant[vname] += 1
                failures.append(f"{task.meta.get('family')} {vname}: {why[:160]}")
    return {
        "set": name,
        "tasks": tasks,
        "rejected_end_state_passes": holes,
        "baseline_rejected_end_state_passes": base_holes,
        "honest_variants": variants,
        "honest_variants_failing": failed,
        "by_attack": dict(by_attack),
        "by_variant": dict(by_variant),
        "work_attacks_run": dict(tried),
        "variants_run": dict(variants_run),
        "variant_failures": failures[:10],
    }


def _share(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="tasks per set")
    ap.add_argument("--seed", type=int, default=5151)
    ap.add_argument("--sets", default="default,persona,compiled,composed,hard")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from compoworld.tasks.generator import Settings

    wanted = args.sets.split(",")
    results = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        if "default" in wanted:
            results.append(measure("default", args.seed, args.n, Settings()))
        if "composed" in wanted:
            results.append(measure("composed", args.seed, args.n, Settings(difficulty="medium")))
        if "hard" in wanted:
            results.append(measure("hard", args.seed, args.n, Settings(k=5, difficulty="hard")))
        if "persona" in wanted:
            import subprocess

            folder = Path(tmp) / "worlds"
            cmd = "from compoworld.cli.main import app; app()"
            build = ["worlds", "build", "--personas", "4", "--days", "3", "--seed", str(args.seed)]
            subprocess.run(
                [sys.executable, "-c", cmd, *build, "--out", str(folder), "--workers", "1"],
                check=True,
                capture_output=True,
            )
            results.append(measure("persona", args.seed, args.n, Settings(world=str(folder))))
        if "compiled" in wanted and SPECS.is_dir():
            from compoworld.compiler import compile_spec

            man = Path(tmp) / "manifests"
            man.mkdir()
            for spec, svc in COMPILED.items():
                (man / f"{svc}.json").write_text(json.dumps(compile_spec(SPECS / spec, svc, 0)))
            from compoworld.compiler.library import library_for
            from compoworld.core import library

            library.use(library_for(str(man)))  # what `compoworld --manifests` runs on
            _clear_library()
            results.append(measure("compiled", args.seed, args.n, Settings(families=("compiled",))))
    total = {
        k: sum(r[k] for r in results)
        for k in (
            "tasks",
            "rejected_end_state_passes",
            "baseline_rejected_end_state_passes",
            "honest_variants",
            "honest_variants_failing",
        )
    }
    if args.json:
        print(json.dumps({"sets": results, "total": total}, indent=2))
        return
    print(f"verifier attacks, seed {args.seed}, {time.perf_counter() - t0:.0f} s")
    print(f"{'set':<10}{'tasks':>6}{'rejected passes':>17}{'baseline':>10}{'honest failing':>16}")
    for r in [*results, {"set": "all", **total}]:
        print(
            f"{r['set']:<10}{r['tasks']:>6}"
            f"{_share(r['rejected_end_state_passes'], r['tasks']):>17}"
            f"{_share(r['baseline_rejected_end_state_passes'], r['tasks']):>10}"
            f"{_share(r['honest_variants_failing'], r['honest_variants']):>16}"
            f"  ({r['honest_variants_failing']}/{r['honest_variants']} variants)"
        )
    hb, h = total["baseline_rejected_end_state_passes"], total["rejected_end_state_passes"]
    print(
        f"rejected end states passing: {h}/{total['tasks']} vs {hb}/{total['tasks']} with the declared checks alone",
        end="",
    )
    print(f" ({hb / h:.1f}x fewer)" if h else " (none pass)")
    for r in results:
        print(f"  {r['set']} tasks each work attack ran on: {r['work_attacks_run']}")
        new = {k: v for k, v in r["variants_run"].items() if k in ("mention_forms", "rows_reformatted")}
        print(f"  {r['set']} tasks with the new honest variants: {new}")
        if r["by_attack"]:
            print(f"  {r['set']} attacks that passed: {r['by_attack']}")
        for f in r["variant_failures"]:
            print(f"  {r['set']} honest variant failing: {f}")


def _clear_library() -> None:
    from compoworld.tasks.families import compiled

    compiled._families_for.cache_clear()
    compiled._survey.cache_clear()


if __name__ == "__main__":
    main()
