"""The day planner: which skills a persona runs on a day, from their habits and open story lines.

Story lines open on day 1 (the persona's own) and later (new customers' requests), run for one to
four weeks through their kind's arc of stages, and interleave: on a day the persona advances a few
of the open ones. Routine skills follow habits and the calendar (stand-ups on weekdays, the 1:1 on
Mondays, the weekly report on Fridays); weekends are light. The horizon's last day is the month-end
wrap-up, where every open story line moves and every report and export is read back, so it is the
busiest day. A plan that nearly repeats one of the two days before is drawn again.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from compoworld.core.clock import derive_rng
from compoworld.core.company import make_company
from compoworld.worlds.persona import STORY_KINDS, Persona
from compoworld.worlds.skills import ROUTINE_SKILLS, STORY_SKILLS

START = datetime(2026, 3, 2, 8, 0)  # a Monday
NEAR_DUPLICATE_DAY = 0.85  # Jaccard similarity of two days' activities above which a plan is redrawn

# habit -> the routine skill it makes (near) daily, and how likely it is otherwise
HABIT_SKILLS = {
    "answers email first thing": "inbox",
    "keeps meeting notes in files": "meetings",
    "posts daily updates in chat": "chat_day",
    "blocks focus time": "focus_block",
    "logs every customer call in the CRM": "crm_note",
    "triages tickets after lunch": "ticket_work",
}


_HAND_BUILT = {"workspace", "email", "crm", "calendar", "chat", "helpdesk", "boards", "sheets"}


def date_of(day: int) -> datetime:
    return START + timedelta(days=day - 1)


@lru_cache(maxsize=64)
def _customers(world_seed: int, size: str) -> list[tuple[str, str, str]]:
    company = make_company(world_seed, size)
    out = []
    for c in company.customers:
        people = [company.person(cid) for cid in c.contact_ids] or list(company.contacts)[:1]
        for p in people[:1]:
            out.append((c.name, p.email, p.name))
    return out


def open_stories(p: Persona) -> list[dict[str, Any]]:
    """The persona's own story lines as the ledger keeps them (opened on day 1)."""
    out = []
    for s in p.stories:
        rng = derive_rng(p.world_seed, "story", s["id"])
        out.append(new_story(s, 1, rng.randrange(5, 12)))
    return out


def new_story(s: dict[str, Any], day: int, stages: int) -> dict[str, Any]:
    return {
        **s,
        "subject": f"{s['customer']}: {s['kind'].replace('_', ' ')} ({s['code']})",
        "opened": day,
        "stage": 0,
        "stages": stages,
        "next": day,
    }


def spawn(p: Persona, seed: int, day: int, size: str, ledger: dict[str, Any]) -> dict[str, Any] | None:
    """Maybe a new story line today (a customer asks for something): about twice a week."""
    rng = derive_rng(seed, "spawn", p.id, day)
    if rng.random() > 0.3 or date_of(day).weekday() >= 5:
        return None
    customers = _customers(p.world_seed, size)
    busy = {s["customer"] for s in ledger["stories"] if not s.get("closed")}
    free = [c for c in customers if c[0] not in busy]
    if not free:
        return None
    name, email, contact = free[rng.randrange(len(free))]
    k = len(ledger["stories"]) + 1
    s = {
        "id": f"s{k}",
        "kind": rng.choice(STORY_KINDS),
        "customer": name,
        "contact": email,
        "contact_name": contact,
        "code": f"{rng.choice(['PO', 'QT', 'INV', 'CASE'])}-{rng.randrange(10000, 99999)}",
    }
    return new_story(s, day, rng.randrange(4, 10))


def plan_day(
    p: Persona, seed: int, day: int, ledger: dict[str, Any], last: bool = False
) -> tuple[list[dict[str, str]], int]:
    """The day's activities (`{"skill", "story"?}`) and how many near-duplicate drafts were redrawn.

    A plan a model proposed (stored with the persona) is used as is, so replays need no model."""
    if p.plan is not None and str(day) in p.plan:
        acts = [dict(a) for a in p.plan[str(day)]]
        return ([{"skill": "setup"}] if day == 1 else []) + acts, 0
    weekday = date_of(day).weekday()
    redrawn = 0
    for attempt in range(6):
        acts = _draft(p, seed, day, ledger, last, weekday, attempt)
        sig = signature(acts)
        if last or not any(jaccard(sig, prev) > NEAR_DUPLICATE_DAY for prev in ledger.get("recent", [])[-2:]):
            break
        redrawn += 1
    return acts, redrawn


def _draft(
    p: Persona, seed: int, day: int, ledger: dict[str, Any], last: bool, weekday: int, attempt: int
) -> list[dict[str, str]]:
    rng = derive_rng(seed, "plan", p.id, day, attempt)
    habits = {HABIT_SKILLS.get(h) for h in p.habits}
    acts: list[dict[str, str]] = []
    if day == 1:
        acts.append({"skill": "setup"})
    weekend = weekday >= 5 and not last  # the wrap-up happens whatever the weekday
    acts.append({"skill": "inbox"})  # mail arrives every day; on weekends it is mostly left unread
    if not weekend:
        if "chat_day" in habits or last or rng.random() < 0.6:
            acts.append({"skill": "chat_day"})
        acts.append({"skill": "meetings"})
        if "focus_block" in habits or last or rng.random() < 0.3:
            acts.append({"skill": "focus_block"})
    due = [s for s in ledger["stories"] if not s.get("closed") and s["next"] <= day]
    rng.shuffle(due)
    if last:
        pick = due
    elif weekend:
        pick = due[: rng.randrange(0, 2)]
    else:
        pick = due[: 2 + rng.randrange(3)]
    for s in pick:
        acts.append({"skill": "advance", "story": s["id"]})
    # habits that are story work: one more touch of a story line that uses them
    for h in ("crm_note", "ticket_work"):
        if h in habits and not weekend and due:
            s = due[rng.randrange(len(due))]
            acts.append({"skill": h, "story": s["id"]})
    if not weekend and any(s not in _HAND_BUILT for s in p.services):
        from compoworld.worlds.compiled import compiled_services

        if compiled_services(p.services):
            acts.append({"skill": "compiled_work"})
    if not weekend:
        acts.append({"skill": "daily_export"})
    if weekday == 4 or last:
        acts.append({"skill": "weekly_report"})
    if last:
        acts.append({"skill": "wrap_up"})
    return acts


def signature(acts: list[dict[str, str]]) -> set[str]:
    return {f"{a['skill']}:{a.get('story', '')}" for a in acts}


def jaccard(a: set[str], b: list[str] | set[str]) -> float:
    b = set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


KNOWN = {"advance", *STORY_SKILLS, *ROUTINE_SKILLS}  # what a plan may name
