"""The quality gates. Each kept task passes all of them; `compoworld tasks check` re-runs them.

- well_formed: every service's initial state fits its state model (a planted record with a field
  its model lacks would make that service's own tools fail on it).
- initial_unsatisfied: V(s0) = 0, and doing nothing earns no partial credit (score 0).
- grounded: replayed turn by turn, no reference call uses an identifying value that the system
  prompt, the instruction or an earlier turn's observation has not shown.
- adversarial: every built-in adversary (`tasks.adversaries`) gets V = 0.
- solvable: replaying the reference solution on s0 gives V = 1.
- necessary: for each mutating reference step, replaying without it makes some check fail.
- deterministic: replays give identical hashes, s0 hashes to its recorded hash, and regenerating
  from the recorded seed gives byte-identical task data.
- no_leak: no fact passed along an edge appears in the instruction.
"""

from __future__ import annotations

from typing import Any

from compoworld.core.environment import Environment
from compoworld.core.service import Service
from compoworld.tasks.model import Task
from compoworld.verify.verifier import Verdicts, verify, verify_checks

GATES = (
    "well_formed",
    "initial_unsatisfied",
    "solvable",
    "grounded",
    "necessary",
    "deterministic",
    "no_leak",
    "interfaces",
    "adversarial",
)


def replay(
    env: Environment,
    calls: list[dict[str, Any]],
    skip: set[int] = frozenset(),
    marks: dict[int, dict[str, Any]] | None = None,
    track: bool = True,
    quiet: set[int] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[int]]:
    """Run reference calls (except `skip`) from the environment's current state: the final snapshot,
    the envelopes, and the indices of the calls that really wrote (changed non-UI state; a shell
    `grep` is declared mutating but only reads; none unless `track`). `marks` collects the state
    before each mutating call (snapshots are persistent values); `quiet` the calls declared
    read-only that changed nothing at all (not even a UI table or a counter)."""
    results = []
    writes = []
    for i, c in enumerate(calls):
        if i in skip:
            continue
        mutates = _mutates(env, c["tool"])
        before = env.snapshot() if (track or marks is not None) and mutates else None
        if marks is not None and before is not None:
            marks[i] = before
        if quiet is not None and not mutates:
            was = env.snapshot()
            results.append(env.call(c["tool"], c["arguments"]))
            if _untouched(was, env.snapshot()):
                quiet.add(i)
        else:
            results.append(env.call(c["tool"], c["arguments"]))
        if track and before is not None and _wrote(env, before):
            writes.append(i)
    return env.snapshot(), results, writes


def _untouched(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same state: the clock, and every table (and database image) the very same object."""
    if a.get("clock") != b.get("clock"):
        return False
    for name, x in a["services"].items():
        y = b["services"].get(name)
        if x is y:
            continue
        if not isinstance(x, dict) or not isinstance(y, dict) or x.keys() != y.keys():
            return False
        for t, v in x.items():
            w = y[t]
            if v is not w and not (isinstance(v, dict) and isinstance(w, dict) and v == w and "image" in v):
                return False
    return True


def _wrote(env: Environment, before: dict[str, Any]) -> bool:
    """Whether `env.diff(before, now)` names a change outside UI tables, without building it: a
    table shared by copy-on-write is unchanged, another compares as a dict (records by identity
    first); an engine with its own diff (SQL rows, not image bytes) is asked as before."""
    after = env.snapshot()
    if before.get("clock") != after.get("clock"):
        return True
    for name, svc in env.services.items():
        a, b = before["services"].get(name), after["services"].get(name)
        if a is b:
            continue
        a, b = a or {}, b or {}
        ui = svc.ephemeral_tables
        if type(svc).diff is not Service.diff:
            if any(ch.path.split("/", 1)[0] not in ui for ch in svc.diff(a, b)):
                return True
            continue
        for t in a.keys() | b.keys():
            ta, tb = a.get(t), b.get(t)
            if ta is not tb and t not in ui and (ta or {}) != (tb or {}):
                return True
    return False


def run_gates(
    task: Task, regenerate: bool = True, stop_early: bool = False, checkpoint: Any = None
) -> dict[str, str | None]:
    """Gate -> None when it passes, else why it failed; `adversary:NAME` entries give each
    adversary's result (None: it got V = 0). With `stop_early` (the pipeline, which reports only
    the first failing gate in `GATES` order) it returns once that gate is known, the later ones
    unrun (None). `checkpoint`: the `generator.Checkpoint` the task's generation recorded (the
    pipeline's): the regeneration stops where the build ends if it drew the same."""
    from compoworld.tasks.adversaries import ADVERSARIES, attack
    from compoworld.tasks.grounding import ground, ground_key, tool_enums
    from compoworld.tasks.prompt import task_system_prompt

    out: dict[str, str | None] = {g: None for g in GATES}
    out.update({f"adversary:{a}": None for a in ADVERSARIES})
    env = task.environment()
    if env.state_hash() != task.initial_state_hash:
        out["deterministic"] = "the initial state does not hash to initial_state_hash"
    broken = {k: v for k, v in env.validate().items() if v}
    if broken:
        name, why = next(iter(broken.items()))
        where = ": ".join(x.strip() for x in why.splitlines()[1:3])
        out["well_formed"] = f"the initial state of {name} does not fit its model: {where}"
    s0 = env.initial
    v0 = _initially(task, s0)  # V and the score
    if v0.passed:
        out["initial_unsatisfied"] = "the initial state already satisfies every check"
    elif v0.score > 0:
        out["initial_unsatisfied"] = f"doing nothing earns partial credit {v0.score}"
    calls = [c.model_dump() for c in task.reference_solution]
    marks: dict[int, dict[str, Any]] = {}
    quiet: set[int] = set()
    final, results, mutating = replay(env, calls, marks=marks, quiet=quiet)
    enums = {c["tool"]: tool_enums(env, c["tool"]) for c in calls}
    composed = task.meta.get("composed", [])
    system = task_system_prompt(task)
    grounded = getattr(checkpoint, "grounded", None)
    if grounded and grounded[0] == ground_key(system, task.instruction, calls, results, enums, composed):
        problems = grounded[1]  # the generation grounded exactly this (a pure function of it)
    else:
        _, problems = ground(system, task.instruction, calls, results, enums, composed)
    if problems:
        out["grounded"] = problems[0]
    bad = [r for r in results if not r["success"]]
    verdicts = Verdicts(task)  # V alone for the states below: it stops at the first failing check
    if bad or not verdicts.passed(final, task.answer):
        why = (
            bad[0]["error"]["message"]
            if bad
            else "; ".join(
                f"{c.id}: {c.detail}" for c in verify(task, final, task.answer).checks if not c.passed
            )
        )
        out["solvable"] = f"replaying the reference fails: {why}"
    if stop_early and any(out[g] for g in GATES[:4]):
        return out
    h1 = env.state_hash()
    for i in mutating:
        # the calls before step i are the reference's own: start from its state before step i (a
        # replay is deterministic, and `deterministic` below checks that) instead of replaying them;
        # the reads that changed nothing in the reference are left out too (their envelopes are
        # not used here, and a read-only tool that wrote nothing there is no write)
        rest = [c for k, c in enumerate(calls) if k > i and k not in quiet]
        rest = [c for c in rest if not env.inert(c["tool"], c["arguments"])]
        final_i = _without(env, calls[i], marks[i], final, rest)
        if verdicts.passed(final_i, task.answer, goals_first=True, kind="necessary"):  # lacks work, not care
            out["necessary"] = f"step {calls[i]['step']} ({calls[i]['tool']}) can be skipped and V is still 1"
            break
    if stop_early and out["necessary"]:
        return out
    # two runs of the reference end in the same state: the generation's (when it left this one)
    # and the replay above, else a second replay
    if getattr(checkpoint, "final_hash", None) != h1:
        env.reset()
        replay(env, calls, track=False)
        if env.state_hash() != h1 and out["deterministic"] is None:
            out["deterministic"] = "two replays of the reference end in different states"
    if stop_early and out["deterministic"]:
        return out
    if out["solvable"] is None:
        for name, why in attack(
            task, env, final, verdicts, results, _reached(env, calls, marks, quiet)
        ).items():
            out[f"adversary:{name}"] = why
            if why and out["adversarial"] is None:
                out["adversarial"] = f"{name}: {why}"
    if regenerate and out["deterministic"] is None and "seed" in task.meta:
        from compoworld.tasks.generator import Rejected, SameBuild, generate_task, settings_from

        m = task.meta
        settings = settings_from(m)
        try:
            again = Task.model_validate(generate_task(m["seed"], m["index"], settings, checkpoint))
            # what generation adds after the generator (gate verdicts, curriculum weights, judges'
            # results, a realised instruction: its original is kept) is not regenerated
            added = ("gates", "curriculum", "judges", "realised")
            mine = task.model_copy(update={"meta": {k: v for k, v in task.meta.items() if k not in added}})
            if "realised" in m:
                mine.instruction = m["realised"]["original"]
            if again.to_json() != mine.to_json():
                out["deterministic"] = "regenerating from the same seed gives different task data"
        except SameBuild:
            pass  # the same draws: what follows them is a pure function of them
        except Rejected as e:
            out["deterministic"] = f"regenerating from the same seed was rejected: {e}"
    if task.meta.get("interfaces"):  # XAI: the reference really crosses every declared interface
        from compoworld.tasks.generator import interface_of

        used = [interface_of(c.tool.split("__", 1)[0]) for c in task.reference_solution]
        missing = set(task.meta["interfaces"]) - set(used)
        if missing:
            out["interfaces"] = f"the reference solution never uses {sorted(missing)}"
    text = task.instruction.casefold()
    facts = [e.fact.value for e in task.dependency_graph.edges] + list(task.meta.get("facts", []))
    leaked = [f for f in facts if f and len(f) > 2 and f.casefold() in text]
    if leaked:
        out["no_leak"] = f"the instruction names intermediate facts: {leaked}"
    return out


def _initially(task: Task, s0: dict[str, Any]) -> Any:
    """V(s0) and its score, as `verify_checks` gives them (`passed`, `score`). Where every goal
    check fails on s0, V is 0 and so is the score whatever the guards say (the score is the share
    of goals that pass), so the guards are not run; otherwise every check is."""
    goals = [i for i in task.rubric if (i.kind or "goal") == "goal"]
    if goals:
        v = verify_checks(goals, task.initial_state, s0, None, explain=False)
        if not any(c.passed for c in v.checks):
            return v  # passed False, score 0.0: as with the guards
    return verify_checks(task.rubric, task.initial_state, s0, None, explain=False)


def _without(
    env: Environment,
    call: dict[str, Any],
    before: dict[str, Any],
    final: dict[str, Any],
    rest: list[dict[str, Any]],
) -> dict[str, Any]:
    """The state the reference reaches without `call`: the `rest` of its calls replayed from the
    state `before` it. Where `call` and every one of them run in their own service alone
    (`_alone`) and the clock never moved, a service other than `call`'s ends as the reference left
    it (its calls and its state are the reference's), so only `call`'s service replays its calls,
    from its state before `call`: the same state, the other services' tables the reference's own."""
    name = call["tool"].split("__", 1)[0]
    if _alone(env, [call, *rest]) and before.get("clock") == final.get("clock"):
        env.restore(final)
        env.services[name].restore(before["services"][name])
        return replay(env, [c for c in rest if c["tool"].split("__", 1)[0] == name], track=False)[0]
    env.restore(before)
    return replay(env, rest, track=False)[0]


def _alone(env: Environment, calls: list[dict[str, Any]]) -> bool:
    return all(env.isolated(c["tool"]) for c in calls)


def _reached(
    env: Environment, calls: list[dict[str, Any]], marks: dict[int, dict[str, Any]], quiet: set[int]
) -> dict[int, dict[str, Any]]:
    """The state after the reference's first j writes alone, by j, taken from the replay's marks
    (the state before each write): the same state while every read before it changed nothing at
    all (a read that touched a UI table or a counter ends the run of them)."""
    out: dict[int, dict[str, Any]] = {}
    j = 0
    for i, c in enumerate(calls):
        if _mutates(env, c["tool"]):
            out[j] = marks[i]
            j += 1
        elif i not in quiet:
            break
    return out


def _mutates(env: Environment, tool: str) -> bool:
    spec = env.tool_spec(tool)
    return bool(spec and spec.mutates)
