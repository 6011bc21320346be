"""The task author: a model writes tasks, the engine holds them to every gate of the generator.

One authoring session per task index:

1. SKELETON: a walk over K services plus D distractors, sampled as the generator samples it
   (`plan_walk` over the services' moves; a plain covering walk where no typed walk exists), on the
   same seeded base world (`generator.base_world`).
2. EXPLORE: the model calls the real tools of the composed environment (a scratch copy: whatever it
   writes is thrown away).
3. DESIGN: it proposes a task as data (`propose_task`): an instruction; edits to s0 as typed tool
   calls or planting operations (`{"insert": {service, table, record}}`, validated against the
   service's state model); a reference solution; a rubric drawn only from the registered
   predicates; traps, an answer, a hint and subtasks.
4. PROBE: the plant runs, s0 is fixed, the reference runs for real, and the task is derived the way
   workflow tasks are (walk, information edges, record-level collateral, trap guards); then every
   gate and adversary of `tasks.gates.run_gates` applies, grounded and no_leak included.
5. SUBMIT: a task that passes is kept; a rejected proposal goes back to the model with the
   diagnostics, for at most R revision rounds.

Nothing the model writes is executed: a proposal is JSON data, its tool calls go through the
environment's typed tools, and its checks are predicate names with arguments. Reference arguments
may name earlier results (`${plant.0.id}`, `${ref.2.messages.0.id}`): a data lookup into the
envelopes, resolved before the reference runs, so the task on disk holds only literal calls.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compoworld.core.clock import derive_rng
from compoworld.core.company import make_company
from compoworld.llm.client import ContextOverflow, EndpointError, LLMClient
from compoworld.llm.replies import call_arguments, first_json_object
from compoworld.services import registry
from compoworld.tasks.generator import (
    GENERATOR_VERSION,
    WORLD_BLOCK,
    base_world,
    collateral_check,
    environment_for,
    trap_guards,
)

PROPOSE = "propose_task"
AUTHOR_VERSION = "1.0"
# causes a proposal can be rejected for before the gates run (then the gates' own names)
CAUSES = ("format", "rubric", "plan", "labels", "solvable", "walk", "traps", "grounded")


@dataclass(frozen=True)
class AuthorSettings:
    k: int = 2
    distractors: int = 2
    walk_min: int = 3
    walk_max: int = 6
    rounds: int = 2  # R: revision rounds after the first proposal
    explore_turns: int = 8  # model turns of exploration before a proposal is demanded
    mode: str = "direct"  # the tools the author sees: direct, or the gateway's meta-tools
    size: str = "small"
    pool: tuple[str, ...] = ()  # draw the K services from these only


@dataclass
class Skeleton:
    services: list[str]
    distractors: list[str]
    walk: list[str]
    moves: list[str]
    world_seed: int


@dataclass
class Outcome:
    index: int
    task: dict[str, Any] | None
    rounds: list[dict[str, Any]] = field(default_factory=list)  # per proposal: causes and details
    cause: str | None = None  # why the session ended without a task
    requests: int = 0


class Reject(Exception):
    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause, self.detail = cause, detail


# ---- 1. the skeleton -----------------------------------------------------------------------
def skeleton(seed: int, index: int, s: AuthorSettings) -> Skeleton:
    """K services, D distractors and a walk that covers the K, never repeats a service on adjacent
    steps and revisits one: a pure function of (seed, index, settings)."""
    from compoworld.tasks.moves import moves_by_service
    from compoworld.tasks.walk import plan_walk

    rng = derive_rng(seed, "author", index)
    world_seed = derive_rng(seed, "world", index // WORLD_BLOCK).randrange(2**31)
    moves = moves_by_service()
    lib = registry()
    pool = [x for x in (s.pool or sorted(moves)) if x in lib]
    if s.k > len(pool):
        raise ValueError(f"--k {s.k} is more than the {len(pool)} services to draw from")
    services = sorted(rng.sample(pool, s.k))
    length = rng.randrange(max(s.walk_min, s.k + 1), max(s.walk_max, s.k + 1) + 1)
    planned = plan_walk(rng, services, moves, length) if all(x in moves for x in services) else None
    if planned is not None:
        walk, names = [p.service for p in planned], [f"{p.service}.{p.move.name}" for p in planned]
    else:  # cover every service, then revisit, never the same one twice in a row
        walk = rng.sample(services, len(services))
        while len(walk) < length:
            walk.append(rng.choice([x for x in services if x != walk[-1]]))
        names = list(walk)
    rest = sorted(x for x in lib if x not in services)
    distractors = sorted(rng.sample(rest, min(s.distractors, len(rest))))
    return Skeleton(services, distractors, walk, names, world_seed)


# ---- prompts -------------------------------------------------------------------------------
def predicate_catalogue() -> list[dict[str, Any]]:
    """Every registered predicate with its argument fields (what a rubric may use)."""
    from compoworld.verify.predicates import PREDICATES

    out = []
    for name, (model, _fn) in sorted(PREDICATES.items()):
        args = {
            ("from" if k == "from_" else k): ("required" if f.is_required() else "optional")
            for k, f in model.model_fields.items()
        }
        out.append({"predicate": name, "arguments": args})
    return out


PROPOSE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": PROPOSE,
        "description": "Submit the task you designed (it is then probed: planted, solved for real and gated).",
        "parameters": {
            "type": "object",
            "properties": {
                "instruction": {"type": "string", "description": "The request, in the user's words."},
                "plant": {
                    "type": "array",
                    "description": 'Edits to the initial state: {"tool": name, "arguments": {...}} or '
                    '{"insert": {"service": s, "table": t, "record": {...}, "key": "id"}}.',
                    "items": {"type": "object"},
                },
                "reference": {
                    "type": "array",
                    "description": 'The solution, turn by turn: {"tool": name, "arguments": {...}, "turn": n}.',
                    "items": {"type": "object"},
                },
                "rubric": {
                    "type": "array",
                    "description": 'Checks: {"predicate": name, ...arguments, "kind": "goal"|"guard", '
                    '"description": text}.',
                    "items": {"type": "object"},
                },
                "traps": {
                    "type": "array",
                    "description": '{"kind", "description", "swap": {target value: decoy value}, "answer"}.',
                    "items": {"type": "object"},
                },
                "answer": {"type": ["string", "null"]},
                "hint": {"type": "string"},
                "subtasks": {"type": "array", "items": {"type": "string"}},
                "facts": {"type": "array", "items": {"type": "string"}},
                "composed": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["instruction", "reference", "rubric"],
        },
    },
}


def author_prompt(sk: Skeleton, user: str, now: str) -> str:
    return (
        f"You write one verified task for an agent benchmark. The agent works for {user}; the simulated time "
        f"is {now}. The task must cross these services: {', '.join(sk.services)} (walk skeleton: "
        f"{' -> '.join(sk.moves)}; the reference must cover every service and revisit one). Other mounted "
        f"services are distractors: {', '.join(sk.distractors) or 'none'}.\n"
        "EXPLORE first: call the real tools to see the data (anything you write while exploring is thrown "
        f"away). Then DESIGN and call `{PROPOSE}` once with the task as data:\n"
        "- instruction: the goal as a colleague would ask it; it must NOT name any fact the agent has to find "
        "(an id, a code, an amount, an address learnt along the way);\n"
        "- plant: edits to the initial state (typed tool calls, or inserts of records), including traps: a "
        "stale record, a near-duplicate, a closed item; what rules a trap out is evidence elsewhere, never a "
        "label;\n"
        "- reference: the calls an honest agent makes, turn by turn; every id, email or code it uses must have "
        "been shown by the instruction or an earlier call's result. `${plant.N.path}` and `${ref.N.path}` name "
        "a value inside the data of plant call N or reference call N;\n"
        "- rubric: checks drawn only from these predicates (goals for the work, guards for each trap): "
        f"{json.dumps(predicate_catalogue(), separators=(',', ':'))};\n"
        "- traps (with `swap`: the target's values mapped to the decoy's), answer (if a reply is asked for), "
        "hint, subtasks.\n"
        "The task is then probed for real; if a gate fails you get the diagnostics and may revise."
    )


# ---- 3-4. design -> probe -------------------------------------------------------------------
_REF = re.compile(r"\$\{(plant|ref)\.(\d+)((?:\.[^.}]+)*)\}")


def _lookup(data: Any, path: str) -> Any:
    cur = data
    for part in [p for p in path.split(".") if p]:
        if isinstance(cur, list) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise KeyError(part)
    return cur


def resolve(value: Any, plant: list[Any], ref: list[Any]) -> Any:
    """Arguments with `${plant.N.path}` / `${ref.N.path}` replaced by that value (a whole-string
    reference keeps the value's type). A lookup, never an evaluation."""
    if isinstance(value, dict):
        return {k: resolve(v, plant, ref) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, plant, ref) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value

    def get(m: re.Match[str]) -> Any:
        src = plant if m.group(1) == "plant" else ref
        n = int(m.group(2))
        if n >= len(src):
            raise Reject("plan", f"{m.group(0)} names {m.group(1)} call {n}, which has not run yet")
        try:
            return _lookup(src[n], m.group(3))
        except KeyError as e:
            raise Reject("plan", f"{m.group(0)}: no field {e.args[0]!r} in that call's data") from None

    whole = _REF.fullmatch(value)
    if whole:
        return get(whole)
    return _REF.sub(lambda m: str(get(m)), value)


def _calls(items: Any, what: str) -> list[dict[str, Any]]:
    """The calls as `{"tool": full name, "arguments": {...}}`; a gateway `call_tool` (how an author
    that explored through the gateway may write them) is unwrapped to the tool it calls."""
    if not isinstance(items, list):
        raise Reject("format", f"{what} must be a list of calls")
    out = []
    for i, c in enumerate(items):
        if not isinstance(c, dict) or ("insert" not in c and not isinstance(c.get("tool"), str)):
            raise Reject("format", f"{what}[{i}] must be {{'tool': name, 'arguments': {{...}}}}")
        if "tool" in c and not isinstance(c.get("arguments", {}), dict):
            raise Reject("format", f"{what}[{i}].arguments must be an object")
        inner = c.get("arguments") or {}
        if c.get("tool") == "call_tool" and isinstance(inner.get("tool"), str):
            c = {**c, "tool": inner["tool"], "arguments": inner.get("arguments") or {}}
        out.append(c)
    return out


def intermediate_facts(
    system: str, calls: list[dict[str, Any]], results: list[dict[str, Any]], enums: Any
) -> list[str]:
    """Values the reference finds along the way: identifying values (codes, ids, emails, amounts)
    that an earlier reference observation showed, and that the call revealing them did not ask
    for. An instruction that names one gives away a hop (the no_leak gate reads these)."""
    from compoworld.tasks.grounding import Transcript, identifying

    t = Transcript(system, "")
    out: list[str] = []
    i = 0
    while i < len(calls):
        turn = calls[i].get("turn", i)
        j = i
        while j < len(calls) and calls[j].get("turn", j) == turn:
            j += 1
        for k in range(i, j):
            for _path, v in identifying(calls[k]["arguments"], enums.get(calls[k]["tool"])):
                src = t.source_of(v)
                if not src or not src.startswith("obs:") or len(v) < 4:
                    continue
                if not (any(ch.isdigit() for ch in v) or "@" in v):
                    continue  # a name the request gives is also echoed by the search that finds it
                asked = json.dumps(calls[int(src[4:])]["arguments"], ensure_ascii=False).casefold()
                if v.casefold() not in asked and v not in out:
                    out.append(v)
        for k in range(i, j):
            t.add(f"obs:{k}", results[k])
        i = j
    return out


def probe(design: dict[str, Any], sk: Skeleton, seed: int, index: int, s: AuthorSettings) -> dict[str, Any]:
    """The task a design makes, as plain data, or Reject with the cause. Runs everything for real."""
    from compoworld.tasks.grounding import ground, tool_enums
    from compoworld.tasks.prompt import system_prompt
    from compoworld.tasks.workflow import Builder, Family, PlantError, Unsolvable
    from compoworld.verify.predicates import validate_check
    from compoworld.verify.verifier import verify_checks

    if not isinstance(design, dict):
        raise Reject("format", "the proposal is not a JSON object")
    instruction = design.get("instruction")
    if not isinstance(instruction, str) or len(instruction.split()) < 4:
        raise Reject("format", "instruction must be a request of at least a few words")
    plant = _calls(design.get("plant") or [], "plant")
    reference = _calls(design.get("reference") or [], "reference")
    if not reference:
        raise Reject("solvable", "the reference solution is empty")
    # rubric: only registered predicates, with valid arguments
    rubric_in = design.get("rubric")
    if not isinstance(rubric_in, list) or not rubric_in:
        raise Reject("rubric", "the rubric must be a non-empty list of checks")
    goals, guards = [], []
    for i, item in enumerate(rubric_in):
        if not isinstance(item, dict):
            raise Reject("rubric", f"rubric[{i}] is not an object")
        check = {k: v for k, v in item.items() if k not in ("kind", "description", "weight", "id", "step")}
        if isinstance(item.get("check"), dict):
            check = item["check"]
        try:
            validate_check(check)
        except ValueError as e:
            raise Reject("rubric", f"rubric[{i}]: {e}") from None
        kind = item.get("kind", "goal")
        if kind not in ("goal", "guard"):
            raise Reject("rubric", f"rubric[{i}].kind must be goal or guard, not {kind!r}")
        weight = item.get("weight", 1.0)
        entry = {
            "description": str(item.get("description") or check["predicate"]),
            "weight": float(weight) if isinstance(weight, int | float) and weight > 0 else 1.0,
            "kind": kind,
            "check": check,
        }
        (goals if kind == "goal" else guards).append(entry)
    if not goals:
        raise Reject("rubric", "the rubric has no goal check")

    world = base_world(sk.world_seed, s.size)
    env = environment_for(sorted([*sk.services, *sk.distractors]), world)
    company = make_company(sk.world_seed, s.size)
    fam = Family(f"author.{'+'.join(sk.services)}", "support", tuple(sk.services), lambda b: None)
    b = Builder(env=env, rng=derive_rng(seed, "author-build", index), company=company, family=fam)
    planted: list[Any] = []
    for i, op in enumerate(plant):
        if "insert" in op:
            ins = op["insert"]
            if not isinstance(ins, dict) or not {"service", "table", "record"} <= set(ins):
                raise Reject("plan", f"plant[{i}].insert needs service, table and record")
            svc = env.services.get(ins["service"])
            rec, key = ins["record"], ins.get("key", "id")
            if svc is None or ins["service"] not in sk.services:
                raise Reject("plan", f"plant[{i}]: {ins['service']!r} is not one of the task's services")
            if not isinstance(rec, dict) or not isinstance(rec.get(key), str):
                raise Reject("plan", f"plant[{i}]: the record needs a string {key!r}")
            rec = resolve(rec, planted, [])
            try:
                svc.insert(str(ins["table"]), rec, key)
            except Exception as e:  # noqa: BLE001 (a conflict: the key exists)
                raise Reject("plan", f"plant[{i}]: {e}") from None
            planted.append(rec)
            continue
        try:
            planted.append(b.plant(op["tool"], resolve(op.get("arguments") or {}, planted, [])))
        except PlantError as e:
            raise Reject("plan", f"plant[{i}]: {e}") from None
    bad = {n: why for n, why in env.validate().items() if why}
    if bad:
        name, why = next(iter(bad.items()))
        raise Reject("plan", f"the planted {name} state does not fit its model: {why.splitlines()[0]}")
    b.begin()
    s0 = b.s0
    assert s0 is not None
    from compoworld.tasks.labels import labelled

    if found := labelled(s0, world):  # evidence, not labels: no planted record says it is wrong
        svc_name, table, key, phrase = found[0]
        raise Reject(
            "labels", f"the planted {svc_name}.{table} {key} says {phrase!r}; let evidence elsewhere show it"
        )
    data: list[Any] = []
    turn_of: dict[Any, int] = {}
    for i, c in enumerate(reference):
        args = resolve(c.get("arguments") or {}, planted, data)
        t = c.get("turn")
        try:
            if t is None or t not in turn_of:
                out = b.call(c["tool"], args)
                if t is not None:
                    turn_of[t] = b._turn
            else:  # a call of an earlier turn's batch: it goes out with that turn
                r = env.call(c["tool"], args)
                if not r["success"]:
                    raise Unsolvable(f"reference call {c['tool']} failed: {r['error']['message']}")
                b.calls.append({"tool": c["tool"], "arguments": args, "turn": turn_of[t]})
                b.results.append(r)
                out = r["data"]
        except Unsolvable as e:
            raise Reject("solvable", f"reference[{i}]: {e}") from None
        data.append(out)
    traps = []
    for i, tr in enumerate(design.get("traps") or []):
        if not isinstance(tr, dict) or not isinstance(tr.get("description", ""), str):
            raise Reject("format", f"traps[{i}] must be an object with kind, description, swap, answer")
        swap = tr.get("swap") or {}
        if not isinstance(swap, dict):
            raise Reject("format", f"traps[{i}].swap must map target values to decoy values")
        ans = tr.get("answer")
        traps.append(
            {
                "kind": str(tr.get("kind") or "near_duplicate"),
                "description": str(tr.get("description") or "a decoy"),
                "swap": {str(k): str(v) for k, v in swap.items()},
                "answer": None if ans is None else str(ans),
            }
        )
    if not traps or not guards:  # real work has traps, and every trap needs its negative check
        raise Reject("traps", f"{len(traps)} trap(s) and {len(guards)} guard check(s); need both")
    answer = design.get("answer")
    answer = None if answer in (None, "") else str(answer)
    if answer is not None and not any(g["check"]["predicate"].startswith("answer_") for g in goals):
        goals.append(
            {
                "description": f"the reply gives the answer ({answer})",
                "weight": 1.0,
                "kind": "goal",
                "check": {
                    "predicate": "answer_matches",
                    "value": answer,
                    "exclude": [t["answer"] for t in traps if t["answer"] and t["answer"] != answer],
                },
            }
        )
    # the walk: consecutive calls to one service are one step
    steps: list[tuple[str, list[int]]] = []
    for i, c in enumerate(b.calls):
        svc_name = c["tool"].split("__", 1)[0]
        if svc_name not in env.services:
            raise Reject("walk", f"reference call {i} uses {c['tool']}, a tool of no mounted service")
        if steps and steps[-1][0] == svc_name:
            steps[-1][1].append(i)
        else:
            steps.append((svc_name, [i]))
    walk = [x for x, _ in steps]
    if not set(sk.services) <= set(walk):
        raise Reject("walk", f"the reference walks {walk}; it must cover {sk.services}")
    if len(walk) == len(set(walk)):
        raise Reject("walk", f"the walk {walk} revisits no service")
    step_of = {i: j for j, (_, idx) in enumerate(steps) for i in idx}
    user = f"{company.me.name} <{company.me.email}>"
    system = system_prompt(s0["clock"], user, "direct")
    enums = {c["tool"]: tool_enums(env, c["tool"]) for c in b.calls}
    composed = [str(x) for x in design.get("composed") or [] if isinstance(x, str | int | float)]
    sources, problems = ground(system, instruction, b.calls, b.results, enums, composed)
    if problems:
        raise Reject("grounded", problems[0])
    ref_calls = [{**c, "step": step_of[i], "sources": sources[i]} for i, c in enumerate(b.calls)]
    edges: dict[tuple[int, int], dict[str, Any]] = {}
    from compoworld.tasks.grounding import leaves

    for c in ref_calls:
        for path, src in c["sources"].items():
            if src.startswith("obs:") and step_of[int(src[4:])] != c["step"]:
                key = (step_of[int(src[4:])], c["step"])
                value = next((str(v) for p, v in leaves(c["arguments"]) if p == path.rstrip("~")), "")
                edges.setdefault(
                    key,
                    {
                        "source": key[0],
                        "target": key[1],
                        "fact": {"type": path.rstrip("~").split(".")[-1], "value": value},
                    },
                )
    if not edges and not composed:
        raise Reject(
            "walk",
            "no information flows from one step to another (no value found in one is used in the next)",
        )
    facts = intermediate_facts(system, b.calls, b.results, enums)
    facts += [str(f) for f in design.get("facts") or [] if isinstance(f, str) and f not in facts]
    s1 = env.snapshot()
    collateral, writes_in = collateral_check(s0, s1)
    if not writes_in:
        raise Reject("solvable", "the reference changes nothing")
    extra = [
        g
        for g in trap_guards(traps, writes_in, instruction, b.calls)
        if verify_checks([{"id": "g", **g}], s0, s1, answer).passed
    ]
    rubric = [{"id": f"c{n + 1}", **item} for n, item in enumerate([*goals, *guards, *extra, collateral])]
    subtasks = [str(x) for x in design.get("subtasks") or [] if isinstance(x, str)]
    lib = registry()
    return {
        "id": f"au-{seed}-{index:06d}",
        "instruction": " ".join(instruction.split()),
        "services": sorted(sk.services),
        "distractors": sk.distractors,
        "initial_state": s0,
        "initial_state_hash": b.h0,
        "world": {"seed": sk.world_seed, "size": s.size, "generator_version": GENERATOR_VERSION},
        "dependency_graph": {
            "nodes": [
                {
                    "step": j,
                    "service": x,
                    "move": b.calls[idx[0]]["tool"].split("__", 1)[1],
                    "mutates": any(env.tool_spec(b.calls[i]["tool"]).mutates for i in idx),
                }
                for j, (x, idx) in enumerate(steps)
            ],
            "edges": [edges[k] for k in sorted(edges)],
        },
        "walk": walk,
        "rubric": rubric,
        "answer": answer,
        "reference_solution": ref_calls,
        "traps": traps,
        "hint": str(design.get("hint") or ""),
        "subtasks": subtasks,
        "meta": {
            "generator": "author",
            "generator_version": GENERATOR_VERSION,
            "author_version": AUTHOR_VERSION,
            "family": fam.name,  # author.<services>: reports group authored tasks by their services
            "work_domain": "authored",
            "user": user,
            "facts": facts,
            "composed": composed,
            "K": len(sk.services),
            "L": len(walk),
            "D": len(sk.distractors),
            "asks_answer": answer is not None,
            "size": s.size,
            # the seed lives under `author`, not at the top: a model's proposal cannot be regenerated
            # from a seed, so `tasks check` checks determinism by replay and s0's hash
            "author": {"seed": seed, "index": index, "skeleton": sk.moves, "design": design},
            "difficulty": {
                "traps": len(traps),
                "writes": sum(1 for c in b.calls if env.tool_spec(c["tool"]).mutates),
                "write_services": sorted(writes_in),
                "revisits": len(walk) - len(set(walk)),
                "tool_calls": len(b.calls),
                "turns": len({c["turn"] for c in b.calls}),
            },
            "domains": sorted({lib[x].domain for x in sk.services}),
        },
    }


def gate(task_data: dict[str, Any]) -> list[dict[str, str]]:
    """Every gate and adversary of the procedural generator on a probed task: the failures."""
    from compoworld.tasks.gates import run_gates
    from compoworld.tasks.model import Task

    task = Task.model_validate(task_data)
    out = run_gates(task, regenerate=False)
    return [{"cause": g, "detail": why} for g, why in out.items() if why and g != "adversarial"]


def check_design(
    design: Any, sk: Skeleton, seed: int, index: int, s: AuthorSettings
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """(task data, []) when the design passes everything, else (None, diagnostics)."""
    try:
        data = probe(design, sk, seed, index, s)
    except Reject as e:
        return None, [{"cause": e.cause, "detail": e.detail}]
    except Exception as e:  # noqa: BLE001 (a proposal must never crash the author)
        return None, [{"cause": "plan", "detail": f"{type(e).__name__}: {e}"}]
    problems = gate(data)
    if problems:
        return None, problems
    data["meta"]["gates"] = "pass"
    return data, []


# ---- 2-5. the session ----------------------------------------------------------------------
async def author_one(
    client: LLMClient,
    seed: int,
    index: int,
    s: AuthorSettings,
    log: Callable[[dict[str, Any]], None] | None = None,
) -> Outcome:
    """One authoring session: explore, design, probe, revise up to R times."""
    from compoworld.core.envelope import envelope_text, failure

    sk = skeleton(seed, index, s)
    env = environment_for(sorted([*sk.services, *sk.distractors]), base_world(sk.world_seed, s.size))
    company = make_company(sk.world_seed, s.size)
    user = f"{company.me.name} <{company.me.email}>"
    tools = [*env.tools("openai", s.mode), PROPOSE_TOOL]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": author_prompt(sk, user, env.clock.iso())},
        {"role": "user", "content": "Explore, then propose the task."},
    ]
    out = Outcome(index=index, task=None)
    proposals, turns, idle = 0, 0, 0
    max_turns = s.explore_turns + (s.rounds + 1) * 4
    while proposals <= s.rounds:
        if turns >= max_turns:
            out.cause = "format" if not proposals else out.cause
            break
        offer = tools if turns < s.explore_turns else [PROPOSE_TOOL]
        if turns == s.explore_turns:
            messages.append({"role": "user", "content": f"Exploration is over: call {PROPOSE} now."})
        try:
            reply = await client.chat(messages, offer)
        except (
            EndpointError
        ) as e:  # an overflow is its own cause: a smaller --k, --mode gateway or a larger window
            out.cause = "context_overflow" if isinstance(e, ContextOverflow) else "endpoint_error"
            out.rounds.append({"causes": [out.cause], "details": [str(e)[:300]]})
            break
        turns += 1
        out.requests += 1
        msg = dict(reply.message)
        messages.append(msg)
        designs: list[tuple[str | None, Any]] = []
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function") or {}
            name = fn.get("name") or ""
            if name == PROPOSE:
                designs.append((tc.get("id") or "", call_arguments(fn.get("arguments"))))
                continue
            args = call_arguments(fn.get("arguments"))
            r = (
                failure(400, "invalid_arguments", f"arguments of {name} are not a JSON object")
                if args is None
                else env.call(name, args)
            )
            env.restore(env.initial)  # exploring writes nothing that lasts
            messages.append({"role": "tool", "tool_call_id": tc.get("id") or "", "content": envelope_text(r)})
        if not msg.get("tool_calls"):
            obj = first_json_object(msg.get("content"))
            if obj is not None and "instruction" in obj:
                designs.append((None, obj))
            else:
                idle += 1
                if idle >= 3:
                    out.cause = out.cause or "format"
                    break
                messages.append(
                    {
                        "role": "user",
                        "content": f"Call a tool to explore, or {PROPOSE} with the task as JSON.",
                    }
                )
                continue
        for call_id, design in designs[:1]:  # one proposal per turn is probed
            proposals += 1
            task, diags = (
                check_design(design, sk, seed, index, s)
                if design is not None
                else (None, [{"cause": "format", "detail": f"{PROPOSE} arguments are not a JSON object"}])
            )
            out.rounds.append(
                {"causes": [d["cause"] for d in diags], "details": [d["detail"] for d in diags]}
            )
            if log:
                log({"index": index, "round": proposals, "design": design, "diagnostics": diags})
            if task is not None:
                task["meta"]["author"].update(
                    {"model": client.config.model, "rounds": proposals, "history": out.rounds[:-1]}
                )
                out.task, out.cause = task, None
                return out
            out.cause = diags[0]["cause"]
            feedback = json.dumps({"kept": False, "diagnostics": diags}, ensure_ascii=False)
            if call_id is not None:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": feedback})
            else:
                messages.append({"role": "user", "content": feedback})
            if proposals <= s.rounds:
                messages.append(
                    {"role": "user", "content": "Revise the task to pass these gates and propose again."}
                )
        for call_id, _ in designs[1:]:
            if call_id is not None:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": "one proposal per turn"})
    return out


async def author_tasks(
    client: LLMClient,
    n: int,
    seed: int,
    s: AuthorSettings,
    attempts: int | None = None,
    on_progress: Callable[[Outcome], None] | None = None,
    log: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Up to `n` kept tasks from at most `attempts` sessions (default 2n + 2), and the summary."""
    kept: list[dict[str, Any]] = []
    rejected: Counter[str] = Counter()
    rounds: Counter[str] = Counter()
    requests = 0
    limit = attempts if attempts is not None else 2 * n + 2
    index = 0
    while len(kept) < n and index < limit:
        o = await author_one(client, seed, index, s, log)
        requests += o.requests
        for r in o.rounds:
            for c in r["causes"]:
                rounds[c] += 1
        if o.task is not None:
            kept.append(o.task)
        else:
            rejected[o.cause or "format"] += 1
        if on_progress:
            on_progress(o)
        index += 1
        if o.cause in ("endpoint_error", "context_overflow"):
            break  # every later session would meet the same endpoint
        await asyncio.sleep(0)
    return kept, {
        "kept": len(kept),
        "sessions": index,
        "rejected": dict(rejected),
        "diagnostics": dict(rounds),
        "requests": requests,
    }
