"""The task generator: CompoWorld's random walk, made executable and verified.

Per task: sample K services and D distractors; plan a walk of L typed steps; plant the records that
carry each fact (with near-duplicate decoys); snapshot s0; execute the reference solution for real;
derive the rubric from the writes' effects and the answer; write the instruction without any
intermediate fact; then run the gates. Everything is a pure function of (seed, index, settings).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any

from compoworld.compiler.domains import apart
from compoworld.core.clock import derive_rng
from compoworld.core.company import make_company
from compoworld.core.environment import Environment, seeded_world
from compoworld.core.library import Library, active
from compoworld.services import registry
from compoworld.tasks.moves import (
    NOUNS,
    Fact,
    Gen,
    PlantError,
    Relay,
    Write,
    moves_by_service,
    people,
    person_fact,
    sentence,
)
from compoworld.tasks.walk import PlannedStep, plan_walk

GENERATOR_VERSION = "2.0"
WORLD_BLOCK = 100  # tasks share a seeded base world per block of this many indices

OPENERS = (
    "",
    "Hi! ",
    "Hey, quick one: ",
    "Could you help me with something? ",
    "I need a hand. ",
    "Morning! ",
)
CONNECTORS = ("Then", "After that,", "Next,", "Once you have it,", "With that,", "Now")
CLOSERS = ("", " Thanks!", " Thanks a lot.", " Let me know when it's done.", "")
DISPLAY = {
    "email": "Gmail",
    "chat": "Slack",
    "calendar": "Google Calendar",
    "crm": "HubSpot",
    "helpdesk": "Freshdesk",
    "issues": "Linear",
    "projects": "Asana",
    "wiki": "Confluence",
    "files": "Dropbox",
    "sql": "the SQL database",
    "sheets": "Google Sheets",
    "payments": "Stripe",
    "shop": "Shopify",
    "marketing": "Mailchimp",
    "hr": "BambooHR",
    "meet": "Google Meet",
    "boards": "Trello",
    "booking": "Calendly",
    "kv": "Redis",
    "sms": "SMS",
    "community": "Discord",
    "bases": "Airtable",
    "tracker": "Jira",
    "code": "GitHub",
}


@dataclass(frozen=True)
class Settings:
    k: int = 0  # 0: each family's own K (workflows) or 5 (relay chains)
    distractors: int = 5
    walk_min: int = 0  # 0 with walk_max 0: the generator's own range (any for workflows, 7:12 for chains)
    walk_max: int = 0
    decoys: float = 1.0  # probability that a relay gets a near-duplicate decoy
    answer_rate: float = 0.35  # share of tasks that also ask for a final answer
    size: str = "small"
    pool: tuple[str, ...] = ()  # draw the K services from these only (empty: every service with moves)
    interfaces: tuple[str, ...] = ()  # XAI: the walk must cross these (gui, mcp, cli) and revisit one
    world: str = ""  # a folder of `worlds build`: s0 is a persona's world after one of its days
    families: tuple[str, ...] = ()  # workflow families to draw from, by name or prefix (empty: all)
    difficulty: str = ""  # easy | medium | hard: composed work with the tier's knobs (tasks.compose)


INTERFACE_OF = {"browser": "gui", "computer": "gui", "workspace": "cli"}  # every other one: over MCP
INTERFACES = ("gui", "mcp", "cli")


def interface_of(service: str) -> str:
    return INTERFACE_OF.get(service, "mcp")


def crosses(walk_services: list[str], interfaces: tuple[str, ...]) -> bool:
    """The walk uses every declared interface and returns to one it used before."""
    seq = [interface_of(s) for s in walk_services]
    runs = [x for i, x in enumerate(seq) if i == 0 or seq[i - 1] != x]
    return set(interfaces) <= set(seq) and len(runs) > len(set(runs))


class Rejected(Exception):
    def __init__(self, gate: str, detail: str) -> None:
        super().__init__(f"{gate}: {detail}")
        self.gate = gate
        self.detail = detail


class Checkpoint:
    """A task's generation where its build ends (issue 22: verified tasks per second).

    By then everything the task draws is drawn: the plan, the distractors, the world, s0, the
    reference's calls and envelopes, the state they leave, the instruction, traps and declared
    checks, the rng's state. What follows (labels, the walk, grounding, edges, collateral, the
    derived rubric, the task dict) is a pure function of those and of the settings: it takes no
    rng, clock or ids. The first generation records a digest of them here; a regeneration handed
    the same checkpoint that reaches the same digest raises `SameBuild` instead of redoing that
    pure part, so the deterministic gate compares the draws at the build's end, not the bytes they
    lead to. A regeneration that reaches another digest goes on and is compared byte for byte, as
    without a checkpoint; `tasks check` regenerates in full."""

    def __init__(self) -> None:
        self.digest: bytes | None = None
        # the first generation's grounding: (`grounding.ground_key` of what it read, its problems)
        self.grounded: tuple[bytes, list[str]] | None = None
        self.final_hash: str | None = None  # the state the first generation's reference left


class SameBuild(Exception):
    """A regeneration reached its checkpoint's digest (see `Checkpoint`)."""


def _build_digest(b: Any, settings: Settings, parts: tuple[Any, ...]) -> bytes:
    """Everything a build drew, hashed (the odd value by its repr: an unlike repr only sends the
    regeneration the long way)."""
    import hashlib

    import orjson

    from compoworld.services.sql.service import DB

    # s0 by its state hash (`h0`, drawn too): the hash the deterministic gate holds s0 to, without
    # writing the whole snapshot out again; beside it, the database images, which the task's bytes
    # hold and its hash does not (a database hashes by its rows: two images of the same rows, or
    # an infinite REAL and a NULL, hash alike)
    drawn = {
        k: v for k, v in vars(b).items() if k not in ("env", "rng", "company", "family", "persona", "s0")
    }
    assert b.h0  # s0 is fixed and hashed (`Builder.begin`)
    images = {
        n: svc[DB]["image"] for n, svc in b.s0["services"].items() if isinstance(svc, dict) and DB in svc
    }
    blob = orjson.dumps(
        [drawn, images, b.env.state_hash(), b.rng.getstate(), settings_dict(settings), parts],
        option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS,
        default=lambda v: sorted(map(repr, v)) if isinstance(v, set | frozenset) else repr(v),
    )
    return hashlib.blake2b(blob, digest_size=16).digest()


def base_world(world_seed: int, size: str, library: Library | None = None) -> dict[str, Any]:
    """The seeded state of every service of `library` (default: the active one), built once per world
    and library, then shared copy-on-write."""
    return seeded_world(library if library is not None else active(), world_seed, size)


base_world.cache_clear = seeded_world.cache_clear  # type: ignore[attr-defined]


def _world_index(folder: str) -> dict[str, Any]:
    from compoworld.worlds.store import world_index  # a folder or pack, checked against its digest

    return world_index(folder)


def persona_day(folder: str, rng: Any, fits: Callable[[list[str]], bool] | None = None) -> dict[str, Any]:
    """Draw a persona and a day of a built world (recorded in the task as its s0); with `fits`, among
    the personas whose services some piece of work fits (others would only be drawn to be rejected)."""
    idx = _world_index(folder)
    pool = sorted(idx["personas"])
    if fits is not None:
        pool = [p for p in pool if fits([*idx["personas"][p]["services"], "browser"])] or pool
    pid = rng.choice(pool)
    p = idx["personas"][pid]
    return {
        "persona": pid,
        "day": rng.choice(idx["day_choices"]),
        "world_seed": p["world_seed"],
        "services": [*p["services"], "browser"],
    }


@lru_cache(maxsize=16)
def persona_world(folder: str, persona: str, day: int, size: str) -> dict[str, Any]:
    """Every library service seeded for the persona's company, with the persona's own services as
    they stood after `day` (so the persona's days are the task's history)."""
    from compoworld.worlds.store import persona_world  # lazy: worlds load only for --world

    return persona_world(folder, persona, day, size)


def environment_for(services: list[str], world: dict[str, Any]) -> Environment:
    return Environment.from_snapshot(
        services,
        {
            "clock": world["clock"],
            "services": {s: world["services"].get(s) or _interface(s) for s in services},
        },
    )


@lru_cache(maxsize=4)
def _interface(name: str) -> dict[str, Any]:
    """The seeded state of an interface that is no library service (the `computer` screen, issue 28)."""
    return Environment(services=["browser", name], seed=0, size="small").snapshot()["services"][name]


# ---- facts ----------------------------------------------------------------------------------
def new_value(g: Gen, kind: str, need: Any = None) -> Fact:
    rng = g.rng
    for _ in range(100):
        if kind == "code":
            f = Fact(
                "code",
                f"{rng.choice(('PO', 'REF', 'CASE', 'RMA', 'QT', 'SO'))}-{rng.randrange(10000, 99999)}",
                "",
            )
        elif kind == "amount":
            f = Fact(
                "amount", f"{rng.randrange(120, 48000)}.{rng.choice(('00', '25', '50', '75', '90'))}", ""
            )
        elif kind == "date":
            d = (g.env.clock.now() + timedelta(days=rng.randrange(3, 28))).date()
            f = Fact("date", d.isoformat(), "")
        elif kind == "person":
            f = person_fact(rng.choice(people(g)))
        elif kind == "customer":
            c = rng.choice(g.company.customers)
            f = Fact("customer", c.name, c.name)
        else:  # phone
            p = rng.choice(people(g))
            f = Fact("phone", "+" + "".join(ch for ch in p.phone if ch.isdigit()), p.name)
        if f.value not in g.used and (need is None or need(g, f)):
            g.used.add(f.value)
            return f
    raise Rejected("plan", f"no fresh {kind} value")


def near_duplicate(g: Gen, key: Fact) -> Fact:
    """A key a careless agent would confuse with `key`: a similar name, a code one digit away."""
    rng = g.rng
    if key.type == "person":
        first, last = key.label.split()[0], key.label.split()[-1]
        close = [
            p
            for p in people(g)
            if p.email != key.value and (p.first[:3] == first[:3] or p.last[:3] == last[:3])
        ]
        p = rng.choice(close or people(g))
        return person_fact(p)
    if key.type == "customer":
        close = [
            c
            for c in g.company.customers
            if c.name != key.value and c.name.split()[0] == key.value.split()[0]
        ]
        c = rng.choice(close or [c for c in g.company.customers if c.name != key.value])
        return Fact("customer", c.name, c.name)
    if key.type == "code":
        digits = list(key.value.split("-")[1])
        i = rng.randrange(len(digits))
        digits[i] = str((int(digits[i]) + rng.randrange(1, 9)) % 10)
        return Fact("code", key.value.split("-")[0] + "-" + "".join(digits), "")
    p = rng.choice(people(g))
    return Fact("phone", "+" + "".join(ch for ch in p.phone if ch.isdigit()), p.name)


# ---- phrasing -------------------------------------------------------------------------------
def _describe_key(key: Fact) -> str:
    return {
        "person": f"from {key.label}",
        "customer": f"about {key.value}",
        "code": f"that mentions {key.value}",
        "phone": f"from {key.value}",
    }[key.type]


def _relay_phrase(rng: random.Random, step: PlannedStep, first: bool, key: Fact) -> str:
    m = step.move
    assert isinstance(m, Relay)
    out = NOUNS[step.gives or "code"]
    where = m.where
    if first:
        who = _describe_key(key)
        return rng.choice(
            (
                f"find {m.noun} {who} {where} and get the {out} it gives",
                f"look up {m.noun} {who} {where}; it has a {out}",
                f"check {where} for {m.noun} {who} and note the {out} in it",
            )
        )
    return rng.choice(
        (
            f"find {m.noun} for that {NOUNS[step.needs]} {where} and get the {out} from it",
            f"use that {NOUNS[step.needs]} to look up {m.noun} {where}; it gives a {out}",
            f"search {where} for {m.noun} for that {NOUNS[step.needs]} and take the {out} from it",
        )
    )


def _compose(rng: random.Random, clauses: list[str], answer_clause: str | None) -> str:
    text = rng.choice(OPENERS)
    first = clauses[0]
    text += (first[0].upper() + first[1:]) + "."
    for c in clauses[1:]:
        text += f" {rng.choice(CONNECTORS)} {c}."
    if answer_clause:
        text += f" {answer_clause}"
    return (text + rng.choice(CLOSERS)).strip()


# ---- generation -----------------------------------------------------------------------------
def generate_task(
    seed: int, index: int, settings: Settings = Settings(), checkpoint: Checkpoint | None = None
) -> dict[str, Any]:
    """One task as plain data (before gates). Raises Rejected with the cause when it cannot be made.
    With a `checkpoint`, a first generation records it and a regeneration may stop at it
    (`SameBuild`; see `Checkpoint`).

    Hand-built business workflows (`tasks.workflow`) are the default at a family's own K (2-3).
    A difficulty tier, K >= 4, or settings no hand-built family fits give composed work
    (`tasks.compose`): workflow stages wired output to input. Both go through the same gates and
    adversaries. The relay-chain generator (`chain_task`) writes no instruction any more."""
    if settings.world and settings.size != (built := _world_index(settings.world)["size"]):
        from dataclasses import replace

        settings = replace(settings, size=built)  # a persona world's tasks live at the size it was built at
    if uses_composition(settings):
        if settings.pool and not composable_pool(settings):
            # compiled services have no composed stage yet: the relay chain remains for them alone
            return chain_task(seed, index, settings)
        return workflow_task(seed, index, settings, composed=True, checkpoint=checkpoint)
    if uses_workflows(settings):
        return workflow_task(seed, index, settings, checkpoint=checkpoint)
    raise Rejected("plan", "no workflow family or composed plan fits these settings")


def uses_composition(settings: Settings) -> bool:
    if settings.difficulty or settings.k >= 4:
        return True
    if settings.families:
        return any(f.startswith("composed") for f in settings.families)
    return not uses_workflows(settings)


@lru_cache(maxsize=64)
def composable_pool(settings: Settings) -> bool:
    """Some composed plan lies inside the pool at the settings' K (or the tier's range of K)."""
    try:
        composed_plans(settings, random.Random(0), None)
    except Rejected:
        return False
    return True


# the plans that fit, by what they were drawn for: every task draws from them, and a regeneration again
_PLANS: dict[tuple[Any, ...], list[Any]] = {}


def _plan_space(
    settings: Settings, allowed: set[str] | None
) -> tuple[str, dict[str, Any], list[int], Any, Any, Any]:
    """The tier, its knobs, the Ks, the walk range, the services allowed and the walk's test."""
    from compoworld.tasks.compose import TIERS

    tier = settings.difficulty or ("hard" if settings.k >= 6 else "medium" if settings.k >= 4 else "easy")
    knobs = TIERS[tier]
    ks = [settings.k] if settings.k else list(range(knobs["k"][0], knobs["k"][1] + 1))
    walk = (settings.walk_min, settings.walk_max) if settings.walk_max else knobs["walk"]
    if settings.pool:
        allowed = set(settings.pool) & (allowed if allowed is not None else set(settings.pool))
    # each interface is reached by some service (`accept` checks the walk crosses them all): not by
    # every service of it (gui is the browser or the computer; requiring both fitted no plan)
    accept = None
    if settings.interfaces:

        def accept(w: list[str]) -> bool:
            seq = [interface_of(s) for s in w]
            return (
                crosses(w, settings.interfaces)
                and sum(a != b for a, b in zip(seq, seq[1:], strict=False)) >= 3
            )

    return tier, knobs, ks, walk, allowed, accept


def composed_plans(settings: Settings, rng: random.Random, allowed: set[str] | None) -> tuple[Any, str]:
    """A composed plan the settings allow, and its tier: K (given, or drawn from the tier's range),
    the walk range (given, or the tier's), the pool or the persona's services, the interfaces."""
    tier, knobs, ks, walk, allowed, accept = _plan_space(settings, allowed)
    for _ in range(len(ks)):
        k = ks.pop(rng.randrange(len(ks)))
        plans = _plan_list(settings, k, walk, allowed, knobs, accept)
        if plans:
            return plans[rng.randrange(len(plans))], tier
    raise Rejected("plan", f"no composed plan has K={settings.k or knobs['k']} with a walk in {walk}")


def composed_fits(settings: Settings, services: list[str]) -> bool:
    """Some composed plan the settings allow lives inside these services (a persona's)."""
    _tier, knobs, ks, walk, allowed, accept = _plan_space(settings, set(services))
    return any(_plan_list(settings, k, walk, allowed, knobs, accept) for k in ks)


def _plan_list(
    settings: Settings,
    k: int,
    walk: tuple[int, int],
    allowed: set[str] | None,
    knobs: dict[str, Any],
    accept: Any,
) -> list[Any]:
    """The composed plans of K services the settings allow (cached: the themes' plan lists are
    constants)."""
    from compoworld.core.library import active as active_library
    from compoworld.tasks.themes import plans_for, themes

    # a pure function of this key (`accept` reads only the interfaces; the themes' plan lists
    # are constants, named by identity in case one is replaced)
    key = (
        k, walk, frozenset(allowed) if allowed is not None else None, settings.interfaces,
        knobs["cases"], knobs.get("writes", 0), settings.families, tuple(id(t.plans) for t in themes()),
        id(active_library()),  # `accept` reads a service's interface from the active library
    )  # fmt: skip
    plans = _PLANS.get(key)
    if plans is None:
        plans = plans_for(
            k, walk, allowed, set(), accept, knobs["cases"], knobs.get("writes", 0), settings.families
        )
        if len(_PLANS) >= 256:
            _PLANS.clear()
        _PLANS[key] = plans
    return plans


def eligible_families(settings: Settings, services: list[str] | None = None) -> list[Any]:
    """Families the settings allow; with `services` (a persona's), only families inside them.
    With interfaces (XAI), only families whose services reach every declared interface."""
    from compoworld.tasks.families import families

    found = dict(families())
    compiled: set[str] = set()
    if settings.pool or settings.families:  # compiled services join when a pool or a name asks for them
        from compoworld.tasks.families.compiled import compiled_families

        extra = compiled_families()
        found.update(extra)
        compiled = {f.name for f in extra.values()}
    out = []
    for f in sorted(found.values(), key=lambda f: f.name):
        if services is not None and not set(f.services) <= set(services):
            continue
        if settings.interfaces and not set(settings.interfaces) <= {interface_of(s) for s in f.services}:
            continue
        # a pool names the compiled services to exercise; their partner (the mailbox) may be outside it
        need = {f.name.split(".")[1]} if f.name in compiled else set(f.services)
        if settings.pool and not need <= set(settings.pool):
            continue
        if settings.k and len(f.services) != settings.k:
            continue
        if settings.families and not any(f.name == x or f.name.startswith(x) for x in settings.families):
            continue
        if "computer" in f.services and not settings.families:  # the screen needs Chromium: only by name
            continue
        out.append(f)
    return out


def uses_workflows(settings: Settings) -> bool:
    if settings.world:
        idx = _world_index(settings.world)
        return any(eligible_families(settings, [*p["services"], "browser"]) for p in idx["personas"].values())
    return bool(eligible_families(settings))


def workflow_task(
    seed: int,
    index: int,
    settings: Settings,
    composed: bool = False,
    force: dict[str, Any] | None = None,
    checkpoint: Checkpoint | None = None,
) -> dict[str, Any]:
    from compoworld.tasks.grounding import ground, tool_enums
    from compoworld.tasks.prompt import system_prompt
    from compoworld.tasks.workflow import Builder, Unsolvable

    rng = derive_rng(seed, "task", index)
    world_seed = derive_rng(seed, "world", index // WORLD_BLOCK).randrange(2**31)
    lived: dict[str, Any] | None = None
    persona: dict[str, Any] | None = None
    if settings.world:  # s0 = W(persona, day): the persona's services as that day left them
        lived = persona_day(
            settings.world, rng, (lambda sv: composed_fits(settings, sv)) if composed else None
        )
        world_seed = lived["world_seed"]
        world = persona_world(settings.world, lived["persona"], lived["day"], settings.size)
        persona = _world_index(settings.world)["personas"][lived["persona"]]
        fams = [] if composed else eligible_families(settings, lived["services"])
        if not fams and not composed:
            raise Rejected("plan", f"no workflow family fits persona {lived['persona']}'s services")
    else:
        world = base_world(world_seed, settings.size)
        fams = [] if composed else eligible_families(settings)
    info: dict[str, Any] = {}
    if composed:
        from compoworld.tasks.compose import TIERS
        from compoworld.tasks.themes import compose
        from compoworld.tasks.workflow import Family

        plan, tier = composed_plans(settings, rng, set(lived["services"]) if lived else None)

        def build(bb: Any, plan: Any = plan, tier: str = tier) -> None:
            info.update(compose(bb, plan, TIERS[tier], tier, force))

        info["tier"] = tier
        fam = Family(plan.family, plan.category, tuple(sorted(plan.services())), build)
    else:
        fam = fams[rng.randrange(len(fams))]
    # never a compiled service beside the hand-built one of its product (their tools are the same)
    rest = apart(fam.services, list(registry()), registry())
    distractors = sorted(rng.sample(rest, min(settings.distractors, len(rest))))
    if "computer" in fam.services and "browser" not in {*fam.services, *distractors}:
        distractors = sorted([*distractors, "browser"])  # the screen shows the web app the browser serves
    env = environment_for(sorted([*fam.services, *distractors]), world)
    company = make_company(world_seed, settings.size)
    b = Builder(env=env, rng=rng, company=company, family=fam, persona=persona)
    try:
        fam.build(b)
    except Unsolvable as e:
        raise Rejected("solvable", f"{fam.name}: {e}") from None
    except Exception as e:  # a world the family cannot use: counted by cause, never kept
        raise Rejected("plan", f"{fam.name}: {type(e).__name__}: {e}") from None
    if b.s0 is None or not b.calls or not b.instruction:
        raise Rejected("plan", f"{fam.name} did not plant, solve and describe a task")
    if checkpoint is not None:
        digest = _build_digest(
            b,
            settings,
            (seed, index, composed, force, fam.name, fam.services, distractors, world_seed, lived, info),
        )
        if checkpoint.digest is None:
            checkpoint.digest, checkpoint.final_hash = digest, env.state_hash()
        elif checkpoint.digest == digest:
            raise SameBuild
    from compoworld.tasks.labels import labelled

    if found := labelled(b.s0, world):  # evidence, not labels: no planted record says it is wrong
        svc, table, key, phrase = found[0]
        raise Rejected("labels", f"{fam.name}: {svc}.{table} {key} says {phrase!r}")
    if not b.traps or not b.guards:  # real work has traps, and every trap needs its negative check
        raise Rejected("traps", f"{fam.name}: {len(b.traps)} trap(s) and {len(b.guards)} guard(s); need both")
    s0 = b.s0
    # the walk: consecutive calls to one service are one step
    steps: list[tuple[str, list[int]]] = []
    for i, c in enumerate(b.calls):
        svc = c["tool"].split("__", 1)[0]
        if steps and steps[-1][0] == svc:
            steps[-1][1].append(i)
        else:
            steps.append((svc, [i]))
    walk = [s for s, _ in steps]
    if set(walk) != set(fam.services):
        raise Rejected(
            "walk", f"{fam.name} declares {sorted(fam.services)} but its calls use {sorted(set(walk))}"
        )
    if len(walk) == len(set(walk)):
        raise Rejected("walk", f"{fam.name}: the walk {walk} revisits no service")
    if settings.interfaces and not crosses(walk, settings.interfaces):
        raise Rejected(
            "interfaces", f"{fam.name}: the walk {walk} does not cross {settings.interfaces} and return"
        )
    if settings.walk_max and not settings.walk_min <= len(walk) <= settings.walk_max:
        raise Rejected(
            "walk", f"walk of {len(walk)} steps is outside {settings.walk_min}:{settings.walk_max}"
        )
    step_of = {i: j for j, (_, idx) in enumerate(steps) for i in idx}
    user = f"{company.me.name} <{company.me.email}>"
    system = system_prompt(s0["clock"], user, "direct")
    enums = {c["tool"]: tool_enums(env, c["tool"]) for c in b.calls}
    sources, problems = ground(system, b.instruction, b.calls, b.results, enums, b.made)
    if checkpoint is not None:  # the gate's grounding of the same replay is this one
        from compoworld.tasks.grounding import ground_key

        checkpoint.grounded = (ground_key(system, b.instruction, b.calls, b.results, enums, b.made), problems)
    if problems:
        raise Rejected("grounded", f"{fam.name}: {problems[0]}")
    reference = [{**c, "step": step_of[i], "sources": sources[i]} for i, c in enumerate(b.calls)]
    edges: dict[tuple[int, int], dict[str, Any]] = {}
    for c in reference:
        for path, src in c["sources"].items():
            if src.startswith("obs:"):
                j = step_of[int(src[4:])]
                if j != c["step"] and (j, c["step"]) not in edges:
                    value = _value_at(c["arguments"], path)
                    edges[(j, c["step"])] = {
                        "source": j,
                        "target": c["step"],
                        "fact": {"type": path.rstrip("~").split(".")[-1], "value": value},
                    }
    if not edges:  # plain values copied across (a tier, a status) are information too
        from compoworld.tasks.grounding import Transcript, leaves

        tr = Transcript(system, b.instruction)
        for i, c in enumerate(b.calls):
            for path, v in leaves(c["arguments"]):
                text = str(v)
                if isinstance(v, bool) or v is None or len(text) < 3 or len(text) > 80:
                    continue
                src = tr.source_of(text)
                if src and src.startswith("obs:") and step_of[int(src[4:])] != step_of[i]:
                    key = (step_of[int(src[4:])], step_of[i])
                    edges.setdefault(
                        key,
                        {
                            "source": key[0],
                            "target": key[1],
                            "fact": {"type": path.split(".")[-1], "value": text},
                        },
                    )
            tr.add(f"obs:{i}", b.results[i])
    if not edges and not b.made:  # computed values (a lift, a total) carry what identifying ones do not
        raise Rejected("walk", f"{fam.name}: no information flows from one step to another")
    s1 = env.snapshot()
    collateral, writes_in = collateral_check(s0, s1)
    if not writes_in:
        raise Rejected("plan", f"{fam.name}: the reference changes nothing")
    from compoworld.verify.verifier import verify_checks

    # never against the reference (each guard's verdict is its own: one pass over the state)
    guards = trap_guards(b.traps, writes_in, b.instruction, b.calls)
    ref = verify_checks([{"id": "g", **g} for g in guards], s0, s1, b.answer, explain=False)
    extra = [g for g, r in zip(guards, ref.checks, strict=True) if r.passed]
    from compoworld.tasks.rubric import derive  # content, recipients, answers and guards (issue 23)

    checks, collateral = derive(
        env, s0, s1, b.calls, b.results, b.instruction, b.made, b.traps,
        [(p.name, p.email) for p in company.people], [*b.goals, *b.guards, *extra], collateral, b.answer,
    )  # fmt: skip
    rubric = []
    for item in checks:
        rubric.append({"id": f"c{len(rubric) + 1}", **item})
    rubric.append({"id": f"c{len(rubric) + 1}", **collateral})
    from compoworld.services import get_service

    domain_of = {
        **registry(),
        **{s: get_service(s) for s in fam.services if s not in registry()},
    }  # interfaces
    return {
        "id": f"cw-{seed}-{index:06d}",
        "instruction": b.instruction,
        "services": sorted(fam.services),
        "distractors": distractors,
        "initial_state": s0,
        "initial_state_hash": b.h0,
        # the seeded base world s0 was planted on (task files store s0 as a patch on it)
        "world": {
            "seed": world_seed,
            "size": settings.size,
            "generator_version": GENERATOR_VERSION,
            **({"lived": lived_ref(settings.world, lived)} if lived else {}),
        },
        "dependency_graph": {
            "nodes": [
                {
                    "step": j,
                    "service": svc,
                    "move": b.calls[idx[0]]["tool"].split("__", 1)[1],
                    "mutates": any(env.tool_spec(b.calls[i]["tool"]).mutates for i in idx),
                }
                for j, (svc, idx) in enumerate(steps)
            ],
            "edges": [edges[k] for k in sorted(edges)],
        },
        "walk": walk,
        "rubric": rubric,
        "answer": b.answer,
        "reference_solution": reference,
        "hint": b.hint,
        "subtasks": b.subtasks,
        "traps": b.traps,
        "meta": {
            "generator_version": GENERATOR_VERSION,
            "generator": "composed" if composed else "workflow",
            "family": fam.name,
            **({"composition": {k: v for k, v in info.items() if k != "tier"}} if composed else {}),
            "work_domain": fam.domain,
            "user": user,
            "facts": b.facts,
            "composed": b.made,
            "seed": seed,
            "index": index,
            "K": len(fam.services),
            "L": len(walk),
            "D": len(distractors),
            "settings": settings_dict(settings),
            "asks_answer": b.answer is not None,
            "size": settings.size,
            "difficulty": {
                **({"tier": info["tier"]} if composed else {}),
                "traps": b.knobs["traps"],
                "decisions": b.knobs["decisions"],
                "aggregates": b.knobs["aggregates"],
                "writes": sum(1 for c in b.calls if env.tool_spec(c["tool"]).mutates),
                "write_services": sorted(writes_in),
                "revisits": len(walk) - len(set(walk)),
                "tool_calls": len(b.calls),
                "turns": len({c["turn"] for c in b.calls}),
            },
            "domains": sorted({domain_of[s].domain for s in fam.services}),
            **(
                {
                    "world": lived_ref(settings.world, lived),
                    "story": b.story_used,
                }
                if lived
                else {}
            ),
            **(
                {
                    "interfaces": list(settings.interfaces),
                    "interface_walk": [interface_of(w) for w in walk],
                    "interface_switches": sum(
                        interface_of(x) != interface_of(y) for x, y in zip(walk, walk[1:], strict=False)
                    ),
                    "page_kinds": sorted(
                        {
                            str(c["arguments"].get("url", "")).strip("/").split("/")[0] or "home"
                            for c in b.calls
                            if c["tool"] == "browser__open"
                        }
                    ),
                }
                if settings.interfaces
                else {}
            ),
        },
    }


def collateral_check(s0: dict[str, Any], s1: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The record-level collateral guard: exactly the records the reference changed may change, and
    inside each only the fields it changed (an appended text must keep its old text, a list gains
    exactly as many items); per table as many records may be created as it created. Also returns
    the services it wrote."""
    from compoworld.verify.predicates import at_path, changed_paths, changed_records
    from compoworld.verify.state_view import StateView

    v0, v1 = StateView(s0), StateView(s1)
    allow: list[dict[str, Any]] = []
    creates: Counter[tuple[str, str]] = Counter()
    writes_in: set[str] = set()
    for service, table, key, op in changed_records(v0, v1):
        writes_in.add(service)
        if op == "add":
            creates[(service, table)] += 1
            continue
        entry: dict[str, Any] = {"service": service, "table": table, "key": str(key)}
        if op == "remove":
            entry["remove"] = True  # the work deletes it; deleting any other allowed record fails
        before, after = v0.table(service, table).get(key), v1.table(service, table).get(key)
        if op == "change" and isinstance(before, dict) and isinstance(after, dict):
            paths = changed_paths(before, after)
            entry["fields"] = paths
            grow, append = [], {}
            for path in paths:
                x, y = at_path(before, path), at_path(after, path)
                if isinstance(x, str) and isinstance(y, str) and x.strip() and x in y and len(y) > len(x):
                    grow.append(path)
                if isinstance(x, list) and isinstance(y, list) and len(y) > len(x) and y[: len(x)] == x:
                    append[path] = len(y) - len(x)
            if grow:
                entry["grow"] = grow
            if append:
                entry["append"] = append
        allow.append(entry)
    check = {
        "description": "nothing else was changed, deleted or created",
        "weight": 1.0,
        "kind": "guard",
        "check": {
            "predicate": "no_changes_except",
            "allow": sorted(allow, key=lambda a: (a["service"], a["table"], a["key"])),
            "creates": [{"service": s, "table": t, "count": n} for (s, t), n in sorted(creates.items())],
        },
    }
    return check, writes_in


def trap_guards(
    traps: list[dict[str, Any]], writes_in: set[str], instruction: str, calls: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A guard for every distinctive decoy value: no write anywhere carries it (a message, note or
    page that names every candidate hedges, and acting on the decoy fails)."""
    import orjson

    written = orjson.dumps([c["arguments"] for c in calls]).decode().casefold()
    by_service: dict[str, str] = {}
    for c in calls:
        svc = c["tool"].split("__", 1)[0]
        by_service[svc] = by_service.get(svc, "") + orjson.dumps(c["arguments"]).decode().casefold()
    out = []
    seen: set[str] = set()
    for trap in traps:
        if trap["kind"] == "miscomputed":  # a wrong total: the family guards where totals are written
            continue
        for right, decoy in trap.get("swap", {}).items():
            d = str(decoy)
            distinctive = len(d) >= 4 and not d.isalpha()
            if (
                not distinctive
                or d in seen
                or d.casefold() in instruction.casefold()
                or d.casefold() in written
            ):
                continue
            seen.add(d)
            # guard where the right value went (a decoy amount belongs where the amount was written)
            where = {svc for svc in writes_in if right.casefold() in by_service.get(svc, "")} or writes_in
            for svc in sorted(where):
                out.append(
                    {
                        "description": f"no write in {svc} names the {trap['kind']} candidate ({d})",
                        "weight": 1.0,
                        "kind": "guard",
                        "check": {"predicate": "value_not_written", "service": svc, "value": d},
                    }
                )
    return out


def _value_at(args: dict[str, Any], path: str) -> str:
    from compoworld.tasks.grounding import leaves

    base = path.rstrip("~")
    for p, v in leaves(args):
        if p == base:
            return str(v)
    return ""


def settings_dict(settings: Settings) -> dict[str, Any]:
    from dataclasses import asdict

    d = asdict(settings)
    d["pool"] = list(settings.pool)
    d["interfaces"] = list(settings.interfaces)
    d["families"] = list(settings.families)
    if settings.world:  # the world by name (and day), never by where it lay: see `settings_from`
        d["world"] = _world_index(settings.world)["label"]
    return d


def lived_ref(world: str, lived: dict[str, Any]) -> dict[str, Any]:
    """How a task names its persona world: content digest and name, never a folder path."""
    return {**_world_index(world)["ref"], "persona": lived["persona"], "day": lived["day"]}


def settings_from(meta: dict[str, Any]) -> Settings:
    """The settings a task was generated with (both generators record them)."""
    if "settings" in meta:
        d = dict(meta["settings"])
        d["pool"] = tuple(d.get("pool", ()))
        d["interfaces"] = tuple(d.get("interfaces", ()))
        d["families"] = tuple(d.get("families", ()))
        if d.get("world") and isinstance(meta.get("world"), dict) and "digest" in meta["world"]:
            from compoworld.worlds.store import spec_for

            d["world"] = spec_for(meta["world"], d["world"])
        return Settings(**d)
    return Settings(
        k=meta["K"],
        distractors=meta["D"],
        walk_min=meta["walk_min"],
        walk_max=meta["walk_max"],
        decoys=meta["decoy_density"],
        answer_rate=meta["answer_rate"],
        size=meta["size"],
        pool=tuple(meta.get("pool", ())),
        interfaces=tuple(meta.get("interfaces", ())),
        world=(meta.get("world") or {}).get("dir", ""),
    )


def chain_task(seed: int, index: int, settings: Settings = Settings()) -> dict[str, Any]:
    """A relay chain (the first generator): typed moves joined by planted facts."""
    from dataclasses import replace

    settings = replace(
        settings, k=settings.k or 5, walk_min=settings.walk_min or 7, walk_max=settings.walk_max or 12
    )
    rng = derive_rng(seed, "task", index)
    world_seed = derive_rng(seed, "world", index // WORLD_BLOCK).randrange(2**31)
    lived: dict[str, Any] | None = None
    if settings.world:  # s0 = W(persona, day): the persona's services as that day left them
        lived = persona_day(settings.world, rng)
        world_seed = lived["world_seed"]
        world = persona_world(settings.world, lived["persona"], lived["day"], settings.size)
    else:
        world = base_world(world_seed, settings.size)
    moves = moves_by_service()
    candidates = sorted(
        s
        for s in moves
        if (not settings.pool or s in settings.pool) and (lived is None or s in lived["services"])
    )
    if settings.k > len(candidates) or settings.k + settings.distractors > len(registry()):
        raise Rejected("plan", f"K={settings.k} plus D={settings.distractors} exceeds the library")
    length = rng.randrange(settings.walk_min, settings.walk_max + 1)
    forced = [s for s, i in INTERFACE_OF.items() if i in settings.interfaces and s in candidates]
    free = [
        s
        for s in candidates
        if s not in forced and (not settings.interfaces or interface_of(s) in settings.interfaces)
    ]
    for _ in range(20 if not settings.interfaces else 60):  # some sets admit no typed walk: draw again
        services = (
            sorted(forced + rng.sample(free, settings.k - len(forced)))
            if forced
            else rng.sample(candidates, settings.k)
        )
        if len(apart([], services, registry())) < len(services):
            continue  # two services of one product (a compiled copy of a hand-built one): draw again
        walk = plan_walk(rng, services, moves, length)
        if walk is not None and (
            not settings.interfaces or crosses([w.service for w in walk], settings.interfaces)
        ):
            break
        walk = None
    else:
        raise Rejected("plan", f"no walk of length {length} over 20 samples of {settings.k} services")
    rest = apart(services, list(registry()), registry())
    distractors = rng.sample(rest, min(settings.distractors, len(rest)))
    env = environment_for(sorted(services + distractors), world)
    company = make_company(world_seed, settings.size)
    g = Gen(env=env, rng=rng, company=company)
    g.used.add(company.me.email)

    # 1. Facts and planting (before s0): anchor -> relay outputs; near-duplicate decoys.
    facts: list[Fact] = []
    locate: list[list[tuple[str, dict[str, Any]]]] = []
    anchor = None
    n_decoys = 0
    decoys: list[tuple[Fact, Fact]] = []  # (fact, its near-duplicate decoy)
    prev: Fact | None = None
    relays = [s for s in walk if isinstance(s.move, Relay)]
    for i, step in enumerate(relays):
        m = step.move
        assert isinstance(m, Relay)
        key = (
            prev
            if prev is not None
            else new_value(g, step.needs, m.accepts and (lambda gg, f, m=m: m.accepts(gg, f)))
        )
        if anchor is None:
            anchor = key
        if m.accepts and not m.accepts(g, key):
            raise Rejected("plan", f"{m.service}.{m.name} does not accept {key.value}")
        nxt = relays[i + 1].move if i + 1 < len(relays) else None
        need = (lambda gg, f, n=nxt: n.accepts(gg, f)) if isinstance(nxt, Relay) and nxt.accepts else None
        value = new_value(g, step.gives or "code", need)
        try:
            if rng.random() < settings.decoys:
                dkey = near_duplicate(g, key)
                if dkey.value != key.value and (m.accepts is None or m.accepts(g, dkey)):
                    dval = new_value(g, value.type)
                    m.plant(g, dkey, dval, sentence(rng, dval), False)
                    n_decoys += 1
                    decoys.append((value, dval))
            locate.append(m.plant(g, key, value, sentence(rng, value), False))
        except (PlantError, ValueError, KeyError, StopIteration, IndexError) as e:
            raise Rejected("plan", f"planting {m.service}.{m.name}: {e}") from None
        facts.append(value)
        prev = value
    for svc in env.services.values():
        svc.store.commit()
        if hasattr(svc, "_dirty"):
            svc._dirty = True
    s0 = env.snapshot()
    h0 = env.state_hash()

    # 2. Execute the reference solution, step by step; writes build their calls from the facts.
    reference: list[dict[str, Any]] = []
    rubric: list[dict[str, Any]] = []
    allow: list[dict[str, Any]] = []
    clauses: list[str] = []
    subtasks: list[str] = []
    fact_in = anchor
    edges = []
    r_i = 0
    for j, step in enumerate(walk):
        extract = None
        if isinstance(step.move, Relay):
            calls = locate[r_i]
            out = facts[r_i]
            clause = _relay_phrase(rng, step, j == 0, anchor)
            r_i += 1
        else:
            m = step.move
            assert isinstance(m, Write)
            try:
                ws = m.build(g, fact_in)
            except (ValueError, KeyError, StopIteration, IndexError) as e:
                raise Rejected("plan", f"building {m.service}.{m.name}: {e}") from None
            calls = ws.calls
            for desc, check in ws.checks:
                rubric.append(
                    {
                        "id": f"c{len(rubric) + 1}",
                        "description": desc,
                        "weight": 1.0,
                        "check": check,
                        "step": j,
                    }
                )
            allow.extend(ws.allow)
            clause = ws.phrase.format(it=NOUNS[fact_in.type]) if fact_in else ws.phrase
            extract = ws.extract
            out = None
        last = None
        for tool, args in calls:
            r = env.call(tool, args)
            if not r["success"]:
                raise Rejected("solvable", f"reference call {tool} failed: {r['error']['message']}")
            last = r["data"]
            reference.append({"tool": tool, "arguments": args, "step": j, "turn": len(reference) + 1})
        if isinstance(step.move, Write) and step.move.gives and extract and j + 1 < len(walk):
            out = Fact(step.move.gives, extract(last), "")
        if out is not None and j + 1 < len(walk):
            edges.append({"source": j, "target": j + 1, "fact": {"type": out.type, "value": out.value}})
        clauses.append(clause)
        subtasks.append(
            clause[0].upper()
            + clause[1:]
            + (f" ({DISPLAY.get(step.service, step.service)})" if step.service not in clause else "")
        )
        fact_in = out

    # 3. The answer, when asked: a fact some relay revealed.
    answer = None
    answer_clause = None
    if rng.random() < settings.answer_rate and facts:
        k = rng.randrange(len(facts))
        f = facts[k]
        answer = f.value
        answer_clause = rng.choice(
            (
                f"Also tell me the {f.noun} you found in step {_step_of(walk, k) + 1}.",
                f"In your final reply, give me the {f.noun} from {DISPLAY.get(relays[k].service, relays[k].service)}.",
            )
        )
        rivals = [d.value for fv, d in decoys if fv.type == f.type]
        kind = {"amount": "number", "date": "date", "phone": "phone"}.get(f.type, "text")
        check = {"predicate": "answer_matches", "value": f.value, "kind": kind, "exclude": rivals}
        rubric.append(
            {
                "id": f"c{len(rubric) + 1}",
                "description": f"the final answer gives the {f.noun}",
                "weight": 1.0,
                "check": check,
                "step": _step_of(walk, k),
            }
        )
    # guards: no write carries a decoy's value; record-level collateral from the reference's effects
    collateral, writes_in = collateral_check(s0, env.snapshot())
    del allow  # the moves' table-wide allow-lists are superseded by record-level collateral
    traps = []
    for fv, d in decoys:
        for svc in sorted(writes_in):
            rubric.append(
                {
                    "id": f"c{len(rubric) + 1}",
                    "description": f"no write in {svc} carries the decoy {d.noun} {d.value}",
                    "weight": 1.0,
                    "kind": "guard",
                    "check": {"predicate": "value_not_written", "service": svc, "value": d.value},
                }
            )
        traps.append(
            {
                "kind": "near_duplicate",
                "description": f"a near-duplicate {fv.noun}",
                "swap": {fv.value: d.value},
                "answer": d.value,
            }
        )
    rubric.append({"id": f"c{len(rubric) + 1}", **collateral})

    instruction = _compose(rng, clauses, answer_clause)
    from compoworld.tasks.grounding import ground, tool_enums
    from compoworld.tasks.prompt import system_prompt

    user = f"{company.me.name} <{company.me.email}>"
    replay_env = Environment.from_snapshot(env.services.keys(), s0)
    results = [replay_env.call(c["tool"], c["arguments"]) for c in reference]
    enums = {c["tool"]: tool_enums(env, c["tool"]) for c in reference}
    sources, problems = ground(
        system_prompt(s0["clock"], user, "direct"), instruction, reference, results, enums
    )
    if problems:
        raise Rejected("grounded", problems[0])
    for c, src in zip(reference, sources, strict=True):
        c["sources"] = src
    mutating = sum(1 for s in walk if isinstance(s.move, Write))
    first_display = DISPLAY.get(walk[0].service, walk[0].service)
    task = {
        "id": f"cw-{seed}-{index:06d}",
        "instruction": instruction,
        "services": sorted(services),
        "distractors": sorted(distractors),
        "initial_state": s0,
        "initial_state_hash": h0,
        "world": {
            "seed": world_seed,
            "size": settings.size,
            "generator_version": GENERATOR_VERSION,
            **({"lived": lived_ref(settings.world, lived)} if lived else {}),
        },
        "dependency_graph": {
            "nodes": [
                {"step": j, "service": s.service, "move": s.move.name, "mutates": isinstance(s.move, Write)}
                for j, s in enumerate(walk)
            ],
            "edges": edges,
        },
        "walk": [s.service for s in walk],
        "rubric": rubric,
        "answer": answer,
        "reference_solution": reference,
        "traps": traps,
        "hint": f"Start in {first_display}: {clauses[0]}.",
        "subtasks": subtasks,
        "meta": {
            "generator_version": GENERATOR_VERSION,
            "generator": "chain",
            "user": user,
            "seed": seed,
            "index": index,
            "K": settings.k,
            "L": len(walk),
            "D": settings.distractors,
            "decoy_density": settings.decoys,
            "asks_answer": answer is not None,
            "size": settings.size,
            "walk_min": settings.walk_min,
            "walk_max": settings.walk_max,
            "answer_rate": settings.answer_rate,
            "difficulty": {
                "relays": len(relays),
                "writes": mutating,
                "decoys": n_decoys,
                "revisits": len(walk) - len(set(s.service for s in walk)),
                "fact_types": sorted({f.type for f in facts}),
                "tool_calls": len(reference),
            },
            "domains": sorted({registry()[s].domain for s in services}),
            # compiled services a task needs are named so `tasks check` can say which manifests to load
            **({"pool": list(settings.pool)} if settings.pool else {}),
            **({"world": lived_ref(settings.world, lived)} if lived else {}),
            **(
                {
                    "interfaces": list(settings.interfaces),
                    "interface_walk": [interface_of(w.service) for w in walk],
                    "interface_switches": sum(
                        interface_of(a.service) != interface_of(b.service)
                        for a, b in zip(walk, walk[1:], strict=False)
                    ),
                }
                if settings.interfaces
                else {}
            ),
        },
    }
    return task


def _step_of(walk: list[PlannedStep], relay_index: int) -> int:
    seen = -1
    for j, s in enumerate(walk):
        if isinstance(s.move, Relay):
            seen += 1
            if seen == relay_index:
                return j
    return 0
