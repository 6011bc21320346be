"""WildAWM's gates that need models, over collected trajectories (`compoworld tasks judge`).

For each task, from the finished episodes of the given run directories (ours, or trajectories
imported from other harnesses in the same format):

- **judge consistency**: on each judged episode the program verifier (V, recomputed on the replayed
  final state), the LLM judge and the agent judge must agree. Judge errors are recorded, never
  counted. Any disagreement sends the task to revision; disagreement on most episodes rejects it.
- **difficulty**: hint-free successes (V = 1) out of the first k = 3 hint-free attempts: hard
  (<= 1), medium (2), too easy (3: returned for revision); fewer than k attempts: insufficient.
- **counterfactual probing**: the agent judge sees the first judged episode again with a false
  claim about its outcome; a verdict that changes under the claim fails the probe (revision).

The results go into each task's `meta["judges"]`, with a `status`: pass, revise, reject, or
unjudged (no trajectory, or no judge gave a verdict).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from compoworld.agents.judge import agent_judge, false_claim
from compoworld.llm.client import LLMClient
from compoworld.tasks.model import Task
from compoworld.verify.judges import llm_judge
from compoworld.verify.verifier import verify

K_ATTEMPTS = 3


def collect(run_dirs: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """Finished episodes per task id, hint-free ones first, in run then sample order; each carries
    `hinted` (the run or the episode gave the agent the hint)."""
    from compoworld.rollout.runner import load_run

    out: dict[str, list[dict[str, Any]]] = {}
    for d in run_dirs:
        config, episodes, _ = load_run(d)
        for e in sorted(episodes, key=lambda e: (e["task_id"], e["sample"])):
            hinted = any(_shown(x) for x in (config.get("hints"), e.get("hints"), e.get("hinted")))
            out.setdefault(e["task_id"], []).append({**e, "hinted": hinted, "run": str(d)})
    for eps in out.values():
        eps.sort(key=lambda e: e["hinted"])  # stable: hint-free first, then the rest in order
    return out


def _shown(hints: Any) -> bool:
    """A run's `hints` field showed the agent something (`eval --hints`: "hint" or "subtasks")."""
    return hints not in (None, False, "", "none")


def final_state(task: Task, steps: list[dict[str, Any]], mode: str = "direct") -> dict[str, Any]:
    """The episode's final state, by replaying its calls on s0 (tools are deterministic)."""
    env = task.environment()
    for s in steps:
        if mode in ("gateway", "gateway-compat") and s.get("tool") in env.gateway_for(mode).specs:
            env.gateway_for(mode).call(s["tool"], s.get("arguments"))
        else:
            env.call(s.get("tool", ""), s.get("arguments"))
    return env.snapshot()


_YES = {"true", "yes", "pass", "passed", "met", "success", "satisfied", "done", "1"}
_NO = {"false", "no", "fail", "failed", "not met", "failure", "unsatisfied", "0"}


def criteria_agreement(judged: dict[str, Any], truth: dict[str, bool]) -> float | None:
    """The share of the rubric's checks on which a judge's per-criterion answer matches the
    program verifier's (answers it did not give, or gave in no readable form, are not compared)."""
    same = n = 0
    for cid, want in truth.items():
        got = judged.get(cid)
        if isinstance(got, dict):  # {"c1": {"passed": true, ...}}
            got = next((got[k] for k in ("passed", "pass", "met", "verdict", "result") if k in got), None)
        if isinstance(got, str):
            low = got.strip().lower()
            got = True if low in _YES else False if low in _NO else None
        if isinstance(got, bool):
            n += 1
            same += got == want
    return round(same / n, 4) if n else None


def difficulty(episodes: list[dict[str, Any]], k: int = K_ATTEMPTS) -> dict[str, Any]:
    free = [e for e in episodes if not e["hinted"]][:k]
    wins = sum(int(bool(e.get("V"))) for e in free)
    if len(free) < k:
        return {"attempts": len(free), "successes": wins, "level": "insufficient", "status": "pass"}
    level = "hard" if wins <= 1 else "medium" if wins == 2 else "too_easy"
    return {
        "attempts": k,
        "successes": wins,
        "level": level,
        "status": "revise" if level == "too_easy" else "pass",
    }


async def judge_task(
    client: LLMClient,
    task: Task,
    episodes: list[dict[str, Any]],
    k: int = K_ATTEMPTS,
    budget: int = 12000,
    agent_turns: int = 6,
    log: Callable[[dict[str, Any]], None] | None = None,
    agent_mode: str = "direct",
) -> dict[str, Any]:
    """The judges' results for one task (what goes into `meta["judges"]`)."""
    judged = episodes[:k]
    rows, errors, disagree, counted = [], 0, 0, 0
    baseline: tuple[dict[str, Any], dict[str, Any], Any] | None = None
    for e in judged:
        final = final_state(task, e.get("steps") or [], e.get("mode", "direct"))
        v = verify(task, final, e.get("answer"))
        program = "success" if v.passed else "failure"
        env = task.environment()
        changes = env.diff(task.initial_state, final)
        lj = await llm_judge(client, task, e.get("steps") or [], changes, e.get("answer"), budget)
        aj = await agent_judge(client, task, final, e.get("answer"), None, agent_turns, agent_mode)
        row = {
            "run": e["run"],
            "sample": e["sample"],
            "hinted": e["hinted"],
            "program": program,
            "recorded_V": e.get("V"),
            "llm": lj.record(),
            "agent": aj.record(),
        }
        truth = {c.id: c.passed for c in v.checks}
        row["criteria_agreement"] = {j.judge: criteria_agreement(j.criteria, truth) for j in (lj, aj)}
        verdicts = [j.verdict for j in (lj, aj) if j.verdict is not None]
        errors += sum(j.verdict is None for j in (lj, aj))
        if verdicts:
            counted += 1
            row["agree"] = all(x == program for x in verdicts)
            disagree += not row["agree"]
        else:
            row["agree"] = None  # no judge gave a verdict: nothing to count
        rows.append(row)
        if log:
            log({"task_id": task.id, **row})
        if baseline is None:
            baseline = (row, final, aj)
    if not judged:
        consistency = {"episodes": 0, "agree": 0, "disagree": 0, "status": "no_trajectories"}
    elif not counted:
        consistency = {"episodes": len(judged), "agree": 0, "disagree": 0, "status": "no_verdicts"}
    else:
        status = "pass" if not disagree else "reject" if disagree * 2 > counted else "revise"
        consistency = {
            "episodes": len(judged),
            "agree": counted - disagree,
            "disagree": disagree,
            "status": status,
        }
    probe: dict[str, Any] = {"status": "not_run"}
    if baseline is not None:
        row, final, before = baseline
        claim = false_claim(row["program"])
        after = await agent_judge(
            client, task, final, judged[0].get("answer"), claim, agent_turns, agent_mode
        )
        if after.verdict is None:
            errors += 1
        probe = {
            "claim": claim,
            "before": before.verdict,
            "after": after.verdict,
            "after_detail": after.record(),
        }
        if before.verdict is None or after.verdict is None:
            probe["status"] = "judge_error"
        else:
            probe["status"] = "fail" if after.verdict != before.verdict else "pass"
        if log:
            log({"task_id": task.id, "counterfactual": probe})
    diff = difficulty(episodes, k)
    statuses = [consistency["status"], diff["status"], "revise" if probe["status"] == "fail" else "pass"]
    overall = "reject" if "reject" in statuses else "revise" if "revise" in statuses else "pass"
    if overall == "pass" and consistency["status"] in ("no_trajectories", "no_verdicts"):
        overall = "unjudged"  # nothing was counted: no verdict says the task is sound
    return {
        "model": client.config.model,
        "status": overall,
        "consistency": consistency,
        "difficulty": diff,
        "counterfactual": probe,
        "judge_errors": errors,
        "episodes": rows,
    }


async def judge_tasks(
    client: LLMClient,
    tasks: list[Task],
    run_dirs: list[Path],
    k: int = K_ATTEMPTS,
    budget: int = 12000,
    agent_turns: int = 6,
    on_task: Callable[[Task, dict[str, Any]], None] | None = None,
    log: Callable[[dict[str, Any]], None] | None = None,
    agent_mode: str = "direct",
) -> list[Task]:
    """The tasks with `meta["judges"]` set from the runs' trajectories."""
    by_task = collect(run_dirs)
    out = []
    for t in tasks:
        res = await judge_task(client, t, by_task.get(t.id, []), k, budget, agent_turns, log, agent_mode)
        t = t.model_copy(update={"meta": {**t.meta, "judges": res}})
        out.append(t)
        if on_task:
            on_task(t, res)
    return out
