"""Personas: who lives in a world, generated from a seed, with near-duplicates rejected."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from compoworld.core.clock import derive_rng
from compoworld.core.company import make_company

OCCUPATIONS: dict[str, tuple[str, ...]] = {
    # occupation -> the services (life domains) the persona uses besides the workspace
    "account manager": ("email", "crm", "calendar", "chat", "sheets"),
    "support lead": ("email", "helpdesk", "chat", "calendar", "boards"),
    "sales engineer": ("email", "crm", "chat", "calendar", "boards"),
    "operations manager": ("email", "chat", "calendar", "helpdesk", "sheets", "boards"),
    "customer success manager": ("email", "crm", "helpdesk", "calendar", "chat", "sheets"),
    "partnerships lead": ("email", "crm", "calendar", "chat"),
    "office manager": ("email", "calendar", "chat", "helpdesk", "sheets"),
    "project coordinator": ("email", "chat", "calendar", "crm", "boards", "sheets"),
    "renewals specialist": ("email", "crm", "helpdesk", "chat", "sheets"),
    "field marketer": ("email", "crm", "chat", "calendar", "boards"),
    "technical account manager": ("email", "helpdesk", "crm", "chat", "calendar", "boards"),
    "executive assistant": ("email", "calendar", "chat", "crm", "sheets"),
}
STORY_KINDS = (
    "customer_escalation",
    "renewal",
    "onboarding",
    "quarterly_review",
    "vendor_order",
    "hiring_loop",
)
HABITS = (
    "answers email first thing",
    "keeps meeting notes in files",
    "posts daily updates in chat",
    "blocks focus time",
    "logs every customer call in the CRM",
    "triages tickets after lunch",
)


@dataclass
class Persona:
    id: str
    name: str
    email: str
    occupation: str
    employer: str
    services: list[str]
    contacts: list[str]  # emails of the people they deal with
    habits: list[str]
    world_seed: int  # seeds the persona's company and services
    stories: list[dict[str, Any]] = field(default_factory=list)  # running story lines
    plan: dict[str, list[dict[str, str]]] | None = None  # day -> activities, when a model proposed them
    proposed_by: str = "offline"  # "offline" or the model that proposed the persona and plan

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def signature(self) -> set[str]:
        """What makes two personas alike: occupation, domains of life, story lines."""
        return {
            f"occ:{self.occupation}",
            *(f"svc:{s}" for s in self.services),
            *(f"story:{s['kind']}:{s['customer']}" for s in self.stories),
        }


def similarity(a: Persona, b: Persona) -> float:
    sa, sb = a.signature(), b.signature()
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def make_persona(seed: int, index: int, size: str = "small") -> Persona:
    """Persona `index` of seed `seed`: the `me` of their own seeded company, with story lines."""
    rng = derive_rng(seed, "persona", index)
    world_seed = rng.randrange(2**31)
    company = make_company(world_seed, size)
    person = company.me
    occupation = rng.choice(sorted(OCCUPATIONS))
    customers = rng.sample(list(company.customers), k=min(3, len(company.customers)))
    stories = []
    for k, cust in enumerate(customers):
        contacts = [company.person(cid) for cid in cust.contact_ids] or list(company.contacts)[:1]
        contact = contacts[rng.randrange(len(contacts))]
        stories.append(
            {
                "id": f"s{k + 1}",
                "kind": rng.choice(STORY_KINDS),
                "customer": cust.name,
                "contact": contact.email,
                "contact_name": contact.name,
                "code": f"{rng.choice(['PO', 'QT', 'INV', 'CASE'])}-{rng.randrange(10000, 99999)}",
            }
        )
    services = ["workspace", *OCCUPATIONS[occupation]]
    from compoworld.worlds.compiled import fitting_library

    extra = fitting_library()
    if extra:  # a compiled service the day programs can keep records in (only when the library has one)
        services.append(derive_rng(seed, "persona-compiled", index).choice(extra))
    return Persona(
        id=f"p{index:03d}",
        name=person.name,
        email=company.me.email,
        occupation=occupation,
        employer=company.name,
        services=services,
        contacts=sorted({s["contact"] for s in stories}),
        habits=rng.sample(HABITS, 2),
        world_seed=world_seed,
        stories=stories,
    )


def make_personas(
    seed: int, n: int, max_similarity: float = 0.6, max_tries: int = 200, size: str = "small"
) -> tuple[list[Persona], int]:
    """`n` personas, none a near-duplicate of an accepted one; also the number rejected."""
    accepted: list[Persona] = []
    rejected = 0
    i = 0
    while len(accepted) < n and i < max_tries * n:
        p = make_persona(seed, i, size)
        i += 1
        if any(similarity(p, q) > max_similarity for q in accepted):
            rejected += 1
            continue
        p.id = f"p{len(accepted):03d}"
        accepted.append(p)
    if len(accepted) < n:
        raise ValueError(f"only {len(accepted)} distinct personas after {i} draws (asked for {n})")
    return accepted, rejected
