"""Worlds: W(c, d), the world of persona c after day d, built cumulatively from W(c, d-1).

A day's plan follows the persona's habits and open story lines (`worlds.planner`); its skills act
through the tools (`worlds.skills`). Building a day costs what the day does, not what the history
holds: the hash is incremental, the snapshot shares every table the day left alone, the day's patch
and its health check read only the records the day wrote (`Store.written`), and the state's size is
kept as a running sum of those records' sizes.

Every persona's history is built twice, in two separate processes, day by day; a day is kept only
when both give the same state hash (and the same ledger) and every record it wrote validates. A
rejection names the persona, the day and the activity.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import shutil
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from compoworld.core import library as libraries
from compoworld.core.clock import derive_rng
from compoworld.core.environment import Environment
from compoworld.core.state import META, hash_value
from compoworld.worlds.persona import Persona
from compoworld.worlds.planner import date_of, open_stories, plan_day, signature, spawn
from compoworld.worlds.skills import ROUTINE_SKILLS, SKILLS, STORY_SKILLS, Day, SkillError, advance

FORMAT = 2  # 2: day files hold patches on the day before (1 held whole snapshots)


class DayRejected(RuntimeError):
    def __init__(self, day: int, activity: str, why: str) -> None:
        super().__init__(f"day {day}, activity {activity}: {why}")
        self.day, self.activity, self.why = day, activity, why


def base_env(p: Persona, size: str) -> Environment:
    """Day 0: the persona's services seeded from their company (what `tasks` seeds too)."""
    return Environment(services=p.services, seed=p.world_seed, size=size)


def _size(key: Any, rec: Any) -> int:
    return len(orjson.dumps(key)) + len(orjson.dumps(rec)) + 2


def state_bytes(snapshot: dict[str, Any]) -> int:
    """Bytes of a state: its records as canonical JSON, keys included (what `live` keeps as a sum)."""
    return sum(
        _size(k, r)
        for svc in snapshot["services"].values()
        for name, t in svc.items()
        if name != META
        for k, r in t.items()
    )


@lru_cache(maxsize=256)
def _adapter(service_cls: type, table: str) -> TypeAdapter | None:
    model = getattr(service_cls, "state_model", None)
    if model is None:
        return None
    f = model.model_fields.get(table)
    if f is None:
        return None
    return TypeAdapter(f.annotation)


def _check_records(env: Environment, name: str, table: str, recs: dict[str, Any]) -> str | None:
    """Health of the records a day wrote (not of the whole history): None, or what is wrong."""
    svc = env.services[name]
    model = getattr(type(svc), "state_model", None)
    if model is None or table == META or not recs:
        return None
    ad = _adapter(type(svc), table)
    if ad is None:
        return f"{name}: table {table!r} is not part of its state model"
    try:
        ad.validate_python(recs)
    except ValidationError as e:
        return f"{name}.{table}: {e.errors(include_url=False)[0]['msg']}"
    return None


def day_patch(
    env: Environment, prev: dict[str, Any], written: dict[str, dict[str, set | None]]
) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """The day's changes as a patch on the day before (`{service: {table: {"set", "del"}}}`), the
    change in bytes, and the new snapshot. Reads only what the day wrote."""
    snap = env.snapshot()
    patch: dict[str, Any] = {}
    grow = 0
    for name, tables in written.items():
        new_svc, old_svc = snap["services"][name], prev["services"][name]
        for table, keys in tables.items():
            new_t, old_t = new_svc.get(table), old_svc.get(table)
            if new_t is old_t:
                continue
            new_t, old_t = new_t or {}, old_t or {}
            if keys is None:
                keys = set(new_t) | set(old_t)
            sets, dels = {}, []
            for k in sorted(keys, key=str):
                old, new = old_t.get(k, _GONE), new_t.get(k, _GONE)
                if old is new or old == new:
                    continue
                if table != META:
                    grow += (0 if new is _GONE else _size(k, new)) - (0 if old is _GONE else _size(k, old))
                if new is _GONE:
                    dels.append(k)
                else:
                    sets[k] = new
            if sets or dels:
                entry: dict[str, Any] = {}
                if sets:
                    entry["set"] = sets
                if dels:
                    entry["del"] = dels
                patch.setdefault(name, {})[table] = entry
    return patch, grow, snap


_GONE: Any = object()


def live(
    p: Persona, seed: int, days: int, size: str = "small", env: Environment | None = None
) -> Iterator[dict[str, Any]]:
    """Live the persona's days one by one; yields each day's record (its patch, hash, ledger...)."""
    env = env or base_env(p, size)
    prev = env.snapshot()
    total = state_bytes(prev)
    ledger: dict[str, Any] = {"stories": open_stories(p), "recent": []}
    for day in range(1, days + 1):
        t0 = time.perf_counter()
        date = date_of(day)
        last = day == days
        if (s := spawn(p, seed, day, size, ledger)) is not None:
            ledger["stories"].append(s)
        acts, redrawn = plan_day(p, seed, day, ledger, last)
        by_id = {s["id"]: s for s in ledger["stories"]}
        ctx = Day(env, p, day, date, derive_rng(seed, "day", p.id, day), ledger, size, last)
        done = []
        for i, act in enumerate(acts):
            env.clock.set(
                date.replace(hour=8 + min(i, 12), minute=(i * 7) % 60).strftime("%Y-%m-%dT%H:%M:%SZ")
            )
            ctx.rng = derive_rng(seed, "activity", p.id, day, i)
            ctx.skill = act["skill"]
            before = ctx.events
            story = by_id.get(act.get("story", ""))
            label = f"{act['skill']}({act.get('story', '')})"
            try:
                if act["skill"] == "advance":
                    if story is None or story.get("closed"):
                        continue
                    summary = advance(ctx, story)
                    story["next"] = day + 1 + ctx.rng.randrange(3)
                elif act["skill"] in STORY_SKILLS:
                    if story is None:
                        raise SkillError(f"unknown story {act.get('story')!r}")
                    summary = SKILLS[act["skill"]](ctx, story)
                elif act["skill"] in ROUTINE_SKILLS:
                    summary = SKILLS[act["skill"]](ctx, story)
                else:
                    raise SkillError(f"unknown skill {act['skill']!r}")
            except SkillError as e:
                raise DayRejected(day, label, str(e)) from None
            done.append({**act, "summary": summary, "events": ctx.events - before})
        written = {n: svc.store.written() for n, svc in env.services.items()}
        written = {n: w for n, w in written.items() if w}
        patch, grow, snap = day_patch(env, prev, written)
        for name, tables in patch.items():
            for table, entry in tables.items():
                bad = _check_records(env, name, table, entry.get("set", {}))
                if bad:
                    raise DayRejected(day, "health", bad)
        total += grow
        ledger["recent"] = [*ledger["recent"][-2:], sorted(signature(acts))]
        h = env.state_hash()
        yield {
            "day": day,
            "date": f"{date:%Y-%m-%d}",
            "clock": snap["clock"],
            "activities": done,
            "events": ctx.events,
            "services_touched": sorted(ctx.touched),
            "redrawn": redrawn,
            "hash": h,
            "bytes": total,
            "ledger": json.loads(json.dumps(ledger)),  # a copy: later days change the live one
            "patch": patch,
            "build_s": time.perf_counter() - t0,
        }
        prev = snap


def build_days(p: Persona, seed: int, days: int, size: str = "small") -> list[dict[str, Any]]:
    """Every day's record, in memory (small worlds and tests; `build_world` streams to disk)."""
    return list(live(p, seed, days, size))


# ---- building a world: two replays per persona, in separate processes -----------------------
def _replay(job: tuple[dict[str, Any], int, int, str, str | None]) -> dict[str, Any]:
    """One replay of a persona's history; with `out`, also writes its day files there."""
    pd, seed, days, size, out = job
    p = Persona(**pd)
    rows: list[dict[str, Any]] = []
    try:
        for rec in live(p, seed, days, size):
            stats = {
                k: rec[k]
                for k in ("day", "hash", "events", "bytes", "build_s", "services_touched", "redrawn")
            }
            stats["ledger"] = hash_value(rec["ledger"])
            if out is not None:
                body = {k: v for k, v in rec.items() if k != "build_s"}
                data = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
                (Path(out) / f"day{rec['day']:03d}.json").write_bytes(data)
                stats["file_bytes"] = len(data)
                stats["activities"] = [
                    {"skill": a["skill"], "story": a.get("story"), "events": a["events"]}
                    for a in rec["activities"]
                ]
            rows.append(stats)
    except DayRejected as e:
        return {
            "persona": p.id,
            "days": rows,
            "rejected": {"day": e.day, "activity": e.activity, "why": e.why},
        }
    return {"persona": p.id, "days": rows, "rejected": None}


def build_world(
    personas: list[Persona],
    seed: int,
    days: int,
    out: Path,
    on_progress: Callable[[int], None] | None = None,
    size: str = "small",
    workers: int = 2,
) -> dict[str, Any]:
    """Build every persona's days twice in separate processes; keep the personas whose two replays
    agree on every day; write the world folder (see `worlds.store`) and return its summary."""
    from compoworld.worlds.store import write_manifest

    out.mkdir(parents=True, exist_ok=True)
    stage = out / ".building"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    jobs = []
    for p in personas:
        (stage / p.id).mkdir()
        jobs.append((p.to_dict(), seed, days, size, str(stage / p.id)))
        jobs.append((p.to_dict(), seed, days, size, None))
    ctx = mp.get_context("spawn")
    results: dict[tuple[str, bool], dict[str, Any]] = {}
    # a spawned worker starts on the hand-built library: give it this process's (rebuilt from its manifests)
    with ctx.Pool(max(1, workers), initializer=libraries.use, initargs=(libraries.chosen(),)) as pool:
        for job, res in zip(jobs, pool.imap(_replay, jobs), strict=True):
            results[(res["persona"], job[4] is not None)] = res
            if on_progress:
                on_progress(1)
    summary: dict[str, Any] = {
        "format": FORMAT,
        "seed": seed,
        "days": days,
        "size": size,
        "personas": [],
        "rejected": [],
    }
    for p in personas:
        a, b = results[(p.id, True)], results[(p.id, False)]
        why = a["rejected"] or b["rejected"]
        if why is None:
            for x, y in zip(a["days"], b["days"], strict=True):
                if (x["hash"], x["ledger"], x["bytes"]) != (y["hash"], y["ledger"], y["bytes"]):
                    why = {
                        "day": x["day"],
                        "activity": "replay",
                        "why": f"the two replays differ ({x['hash']} != {y['hash']})",
                    }
                    break
        if why is not None:
            summary["rejected"].append({"persona": p.id, **why})
            shutil.rmtree(stage / p.id, ignore_errors=True)
            continue
        pdir = out / p.id
        shutil.rmtree(pdir, ignore_errors=True)
        (stage / p.id).rename(pdir)
        (pdir / "persona.json").write_text(json.dumps(p.to_dict(), indent=1, ensure_ascii=False) + "\n")
        summary["personas"].append(
            {
                "id": p.id,
                "name": p.name,
                "occupation": p.occupation,
                "world_seed": p.world_seed,
                "hashes": [d["hash"] for d in a["days"]],
                "days": [
                    {
                        "day": x["day"],
                        "events": x["events"],
                        "bytes": x["bytes"],
                        "services_touched": x["services_touched"],
                        "redrawn": x["redrawn"],
                        "file_bytes": x["file_bytes"],
                        "activities": x["activities"],
                    }
                    for x in a["days"]
                ],
                # wall time is no part of the world: kept apart from what the digest covers
                "build_s": [round(x["build_s"], 4) for x in a["days"]],
                "replay_s": [round(y["build_s"], 4) for y in b["days"]],
            }
        )
    shutil.rmtree(stage, ignore_errors=True)
    summary["name"] = out.resolve().name
    write_manifest(out, summary)
    return summary


def check_world(folder: Path) -> list[str]:
    """Replay every stored persona from its seed and compare every day with its stored file; problems."""
    from compoworld.worlds.store import open_world

    problems: list[str] = []
    try:
        w = open_world(folder)
    except ValueError as e:
        return [str(e)]
    meta = w.meta
    for entry in meta["personas"]:
        p = w.persona(entry["id"])
        try:
            for rec in live(p, meta["seed"], meta["days"], meta.get("size", "small")):
                stored = w.day(entry["id"], rec["day"])
                if stored["hash"] != rec["hash"]:
                    problems.append(
                        f"{p.id} day {rec['day']}: replay hash {rec['hash']} != stored {stored['hash']}"
                    )
                elif orjson.dumps(stored["patch"], option=orjson.OPT_SORT_KEYS) != orjson.dumps(
                    rec["patch"], option=orjson.OPT_SORT_KEYS
                ):
                    problems.append(f"{p.id} day {rec['day']}: the stored patch differs from the replay's")
        except DayRejected as e:
            problems.append(f"{p.id}: {e}")
        except ValueError as e:
            problems.append(f"{p.id}: {e}")
        except KeyError as e:  # a compiled service this library lacks
            problems.append(f"{p.id}: {e.args[0]} (built with compiled services? pass --manifests)")
    return problems
