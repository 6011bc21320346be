"""Optional: a model proposes personas and day plans (through `compoworld.llm`), validated here.

The proposal is checked against the world's vocabulary (occupations, story kinds, the company's
customers and contacts, the skill library); anything invalid falls back to the offline generator
and is reported. Accepted proposals are stored with the persona, so replays never call the model.
"""

from __future__ import annotations

import asyncio
import json

from compoworld.core.company import make_company
from compoworld.llm.client import EndpointError, LLMClient, LLMConfig
from compoworld.worlds.persona import OCCUPATIONS, STORY_KINDS, Persona
from compoworld.worlds.skills import SKILLS

PROMPT = (
    "Propose one persona for a simulated workplace, as JSON only: "
    '{"occupation": one of OCCUPATIONS, "habits": [two short strings], "stories": [{"kind": one of STORY_KINDS, '
    '"customer": a CUSTOMER name}, ... 2 or 3 items], "plan": {"1": [{"story": "s1", "skill": one of SKILLS}, ...], '
    "... one key per day 1..DAYS, 1 to 4 activities a day}}."
)


def _validate(raw: str, base: Persona, days: int, size: str = "small") -> Persona:
    data = json.loads(raw.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
    company = make_company(base.world_seed, size)  # the company the world is built at
    customers = {c.name: c for c in company.customers}
    if data.get("occupation") not in OCCUPATIONS:
        raise ValueError(f"occupation {data.get('occupation')!r} is not one of the known occupations")
    stories = []
    for k, s in enumerate(data.get("stories") or []):
        if s.get("kind") not in STORY_KINDS or s.get("customer") not in customers:
            raise ValueError(f"story {k + 1} has an unknown kind or customer: {s}")
        cust = customers[s["customer"]]
        contact = company.person(cust.contact_ids[0]) if cust.contact_ids else company.me
        stories.append(
            {
                "id": f"s{k + 1}",
                "kind": s["kind"],
                "customer": cust.name,
                "contact": contact.email,
                "contact_name": contact.name,
                "code": base.stories[k % len(base.stories)]["code"],
            }
        )
    if not 2 <= len(stories) <= 3:
        raise ValueError("a persona needs 2 or 3 story lines")
    ids = {s["id"] for s in stories}
    plan = data.get("plan") or {}
    for d in range(1, days + 1):
        acts = plan.get(str(d))
        if not isinstance(acts, list) or not 1 <= len(acts) <= 4:
            raise ValueError(f"day {d} needs 1 to 4 activities")
        for a in acts:
            if a.get("story") not in ids or a.get("skill") not in SKILLS:
                raise ValueError(f"day {d}: unknown story or skill in {a}")
    habits = [str(h)[:80] for h in (data.get("habits") or [])[:2]] or base.habits
    return Persona(
        id=base.id,
        name=base.name,
        email=base.email,
        occupation=data["occupation"],
        employer=base.employer,
        services=["workspace", *OCCUPATIONS[data["occupation"]]],
        contacts=sorted({s["contact"] for s in stories}),
        habits=habits,
        world_seed=base.world_seed,
        stories=stories,
        plan={
            str(d): [{"story": a["story"], "skill": a["skill"]} for a in plan[str(d)]]
            for d in range(1, days + 1)
        },
    )


def propose(
    personas: list[Persona], days: int, config: LLMConfig, size: str = "small"
) -> tuple[list[Persona], list[str]]:
    """Ask the model for each persona; keep valid proposals, fall back to the offline one otherwise."""

    async def run() -> tuple[list[Persona], list[str]]:
        client = LLMClient(config)
        out, notes = [], []
        try:
            for base in personas:
                company = make_company(base.world_seed, size)
                ask = (
                    PROMPT.replace("OCCUPATIONS", json.dumps(sorted(OCCUPATIONS)))
                    .replace("STORY_KINDS", json.dumps(list(STORY_KINDS)))
                    .replace("CUSTOMER", json.dumps([c.name for c in company.customers]))
                    .replace("SKILLS", json.dumps(sorted(SKILLS)))
                    .replace("DAYS", str(days))
                )
                try:
                    reply = await client.chat([{"role": "user", "content": ask}], temperature=0)
                    p = _validate(reply.message.get("content") or "", base, days, size)
                    p.proposed_by = config.model
                    out.append(p)
                except (EndpointError, ValueError, json.JSONDecodeError, AttributeError, TypeError) as e:
                    notes.append(f"{base.id}: model proposal rejected ({e}); offline persona kept")
                    out.append(base)
        finally:
            await client.close()
        return out, notes

    return asyncio.run(run())
