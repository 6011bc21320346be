"""Worlds: W(c, d), the world of persona c after day d, built cumulatively from W(c, d-1).

A day's plan follows the persona's story lines (a story started on day 1 continues later). Every
day is built twice in separate processes and kept only when both hashes agree and every service's
state validates; a rejection names the activity that caused it.
"""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path
from typing import Any

from compoworld.core.clock import derive_rng
from compoworld.core.environment import Environment
from compoworld.worlds.persona import Persona
from compoworld.worlds.skills import SKILLS, SkillError

FORMAT = 1


def plan_day(p: Persona, seed: int, day: int) -> list[dict[str, str]]:
    """2-4 activities; each story line advances through its own sequence of skills over the days.
    A plan a model proposed (stored with the persona) is used as is, so replays need no model."""
    if p.plan is not None and str(day) in p.plan:
        return p.plan[str(day)]
    rng = derive_rng(seed, "plan", p.id, day)
    arc = ["email_thread", "meeting_with_notes", "crm_note", "ticket_escalation", "file_report"]
    acts = []
    for k, s in enumerate(p.stories):
        if rng.random() < 0.8 or k == 0:
            acts.append({"story": s["id"], "skill": arc[(day - 1 + k) % len(arc)]})
    return acts[: 2 + rng.randrange(3)]


class DayRejected(RuntimeError):
    def __init__(self, day: int, activity: str, why: str) -> None:
        super().__init__(f"day {day}, activity {activity}: {why}")
        self.day, self.activity, self.why = day, activity, why


def build_days(p: Persona, seed: int, days: int) -> list[dict[str, Any]]:
    """Run the plan day by day; each day's record holds its activities, state hash and snapshot."""
    env = Environment(services=p.services, seed=p.world_seed, size="small")
    stories = {s["id"]: s for s in p.stories}
    out = []
    for day in range(1, days + 1):
        env.clock.set(f"2026-03-{1 + day:02d}T09:00:00Z")
        done = []
        for i, act in enumerate(plan_day(p, seed, day)):
            rng = derive_rng(seed, "activity", p.id, day, i)
            try:
                done.append({**act, "summary": SKILLS[act["skill"]](env, p, stories[act["story"]], day, rng)})
            except SkillError as e:
                raise DayRejected(day, f"{act['skill']}({act['story']})", str(e)) from None
        bad = {k: v for k, v in env.validate().items() if v is not None}
        if bad:
            raise DayRejected(day, "health", f"invalid state in {sorted(bad)}")
        out.append(
            {
                "day": day,
                "activities": done,
                "hash": env.state_hash(),
                "snapshot": env.snapshot(),
                "counts": counts(env),
            }
        )
    return out


def counts(env: Environment) -> dict[str, int]:
    """Records per service (files included), the size summary of a day."""
    return {
        n: sum(len(t) for k, t in s.store.tables.items() if not k.startswith("_"))
        for n, s in env.services.items()
    }


def _hashes(args: tuple[dict[str, Any], int, int]) -> list[str] | str:
    pd, seed, days = args
    try:
        return [d["hash"] for d in build_days(Persona(**pd), seed, days)]
    except DayRejected as e:
        return str(e)


def build_world(personas: list[Persona], seed: int, days: int, out: Path, on_progress=None) -> dict[str, Any]:
    """Build every persona's days, replay each in two separate processes, and write what passes."""
    out.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("spawn")
    summary: dict[str, Any] = {"format": FORMAT, "seed": seed, "days": days, "personas": [], "rejected": []}
    with ctx.Pool(2) as pool:
        for p in personas:
            try:
                built = build_days(p, seed, days)
            except DayRejected as e:
                summary["rejected"].append(
                    {"persona": p.id, "day": e.day, "activity": e.activity, "why": e.why}
                )
                if on_progress:
                    on_progress(1)
                continue
            replays = pool.map(_hashes, [(p.to_dict(), seed, days)] * 2)
            mine = [d["hash"] for d in built]
            if any(r != mine for r in replays):
                why = next(r for r in replays if r != mine)
                summary["rejected"].append(
                    {
                        "persona": p.id,
                        "day": None,
                        "activity": "replay",
                        "why": why if isinstance(why, str) else "replays gave different hashes",
                    }
                )
                if on_progress:
                    on_progress(1)
                continue
            pdir = out / p.id
            pdir.mkdir(exist_ok=True)
            (pdir / "persona.json").write_text(json.dumps(p.to_dict(), indent=1, ensure_ascii=False) + "\n")
            for d in built:
                (pdir / f"day{d['day']}.json").write_text(
                    json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n"
                )
            summary["personas"].append(
                {
                    "id": p.id,
                    "name": p.name,
                    "occupation": p.occupation,
                    "hashes": mine,
                    "records": [sum(d["counts"].values()) for d in built],
                    "files": [d["counts"].get("workspace", 0) for d in built],
                }
            )
            if on_progress:
                on_progress(1)
    (out / "world.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    return summary


def check_world(folder: Path) -> list[str]:
    """Replay every stored persona from its seed and compare every day's hash; problems, if any."""
    meta = json.loads((folder / "world.json").read_text())
    problems = []
    for entry in meta["personas"]:
        pdir = folder / entry["id"]
        p = Persona(**json.loads((pdir / "persona.json").read_text()))
        try:
            again = build_days(p, meta["seed"], meta["days"])
        except DayRejected as e:
            problems.append(f"{p.id}: {e}")
            continue
        for d in again:
            stored = json.loads((pdir / f"day{d['day']}.json").read_text())
            if stored["hash"] != d["hash"]:
                problems.append(f"{p.id} day {d['day']}: replay hash {d['hash']} != stored {stored['hash']}")
            env = Environment.from_snapshot(p.services, stored["snapshot"])
            if env.state_hash() != stored["hash"]:
                problems.append(f"{p.id} day {d['day']}: stored snapshot does not hash to its recorded hash")
    return problems
