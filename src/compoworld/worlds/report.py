"""The figures of a built world: per day (over personas) and the last day against the mean."""

from __future__ import annotations

from statistics import mean, median
from typing import Any

from compoworld.worlds.planner import date_of


def world_report(meta: dict[str, Any]) -> dict[str, Any]:
    """Per day: mean events, state MiB, build and replay seconds and services written over the
    personas; and the summary (last day vs mean, time per event early vs late, final sizes)."""
    people = meta["personas"]
    days = meta["days"]
    rows = []
    for i in range(days):
        ds = [p["days"][i] for p in people]
        rows.append(
            {
                "day": i + 1,
                "date": f"{date_of(i + 1):%Y-%m-%d}",
                "events": mean(d["events"] for d in ds) if ds else 0.0,
                "mib": mean(d["bytes"] for d in ds) / 2**20 if ds else 0.0,
                "build_s": mean(p["build_s"][i] for p in people) if ds else 0.0,
                "replay_s": mean(p["replay_s"][i] for p in people) if ds else 0.0,
                "services": mean(len(d["services_touched"]) for d in ds) if ds else 0.0,
            }
        )
    out: dict[str, Any] = {"days": rows, "summary": {"personas": len(people), "states": len(people) * days}}
    if not people:
        return out
    last, all_ = rows[-1], rows
    per_event = [
        (p["build_s"][i] / p["days"][i]["events"])
        for p in people
        for i in range(days)
        if p["days"][i]["events"]
    ]
    third = max(1, days // 3)

    def us(lo: int, hi: int) -> float:
        xs = [
            p["build_s"][i] / p["days"][i]["events"]
            for p in people
            for i in range(lo, hi)
            if p["days"][i]["events"]
        ]
        return 1e6 * mean(xs) if xs else 0.0

    early, late = us(0, third), us(days - third, days)
    finals = [p["days"][-1]["bytes"] / 2**20 for p in people]
    out["summary"].update(
        {
            "last_events": last["events"],
            "mean_events": mean(r["events"] for r in all_),
            "last_services": last["services"],
            "mean_services": mean(r["services"] for r in all_),
            "last_build_s": last["build_s"],
            "mean_build_s": mean(r["build_s"] for r in all_),
            "us_per_event": 1e6 * mean(per_event) if per_event else 0.0,
            "us_per_event_early": early,
            "us_per_event_late": late,
            "flat_ratio": late / early if early else 0.0,
            "final_mib_median": median(finals),
            "final_mib_min": min(finals),
            "final_mib_max": max(finals),
        }
    )
    s = out["summary"]
    s["events_ratio"] = s["last_events"] / s["mean_events"] if s["mean_events"] else 0.0
    s["services_ratio"] = s["last_services"] / s["mean_services"] if s["mean_services"] else 0.0
    return out
