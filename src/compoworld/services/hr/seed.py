"""Deterministic BambooHR: the shared company's employees, balances, requests, goals and hiring."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META

STATUSES = (
    ("1", "New"),
    ("2", "Reviewed"),
    ("3", "Phone screen"),
    ("4", "Interview"),
    ("5", "Offer"),
    ("6", "Hired"),
    ("7", "Not a fit"),
)


def emp_id(person_id: str) -> str:
    return str(int(person_id[1:]) - 1000 + 100)


def seed_hr(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    today = now.date()
    svc.store.put(META, "me", emp_id(company.me.id))
    for p in company.employees:
        hire = today - timedelta(days=rng.randrange(60, 3000))
        born = today.replace(year=today.year - rng.randrange(24, 60)) - timedelta(days=rng.randrange(365))
        svc.employees.create(
            {
                "firstName": p.first,
                "lastName": p.last,
                "workEmail": p.email,
                "jobTitle": p.title,
                "department": p.team,
                "location": p.location,
                "supervisorId": emp_id(p.manager_id) if p.manager_id else None,
                "hireDate": hire.isoformat(),
                "dateOfBirth": born.isoformat(),
                "mobilePhone": p.phone,
                "lastChanged": format_time(now - timedelta(days=rng.randrange(1, 300))),
            },
            id=emp_id(p.id),
        )
    types = [
        svc.types.create({"name": n, "units": u}, id=i)
        for i, n, u in (("77", "Vacation", "days"), ("78", "Sick", "days"), ("79", "Personal", "hours"))
    ]
    for e in svc.employees.all():
        for t, (bal, pol) in zip(
            types,
            (
                (rng.randrange(5, 25), "Standard PTO"),
                (rng.randrange(3, 10), "Sick leave"),
                (rng.randrange(8, 40), "Personal hours"),
            ),
            strict=True,
        ):
            svc.balances.create(
                {"employee_id": e["id"], "type_id": t["id"], "balance": float(bal), "policy": pol},
                id=f"{e['id']}:{t['id']}",
            )
    for _ in range(ctx.scale(8, 60, 240)):
        e = rng.choice(svc.employees.all())
        start = today + timedelta(days=rng.randrange(-30, 45))
        days = rng.randrange(1, 6)
        status = rng.choice(("approved", "approved", "requested", "denied"))
        svc.requests.create(
            {
                "employee_id": e["id"],
                "type_id": rng.choice(("77", "77", "78")),
                "start": start.isoformat(),
                "end": (start + timedelta(days=days - 1)).isoformat(),
                "amount": float(days),
                "status": status,
                "created": format_time(now - timedelta(days=rng.randrange(1, 40))),
            },
            id=str(1000 + svc.next_seq("request")),
        )
    ttypes = [
        svc.ttypes.create({"name": n, "category": c, "required": r}, id=str(500 + i))
        for i, (n, c, r) in enumerate(
            (
                ("Security awareness", "Compliance", True),
                ("Code of conduct", "Compliance", True),
                ("Leadership 101", "Management", False),
                ("First aid", "Safety", False),
            )
        )
    ]
    for e in svc.employees.all():
        for t in ttypes[:2]:
            if rng.random() < 0.7:
                svc.trainings.create(
                    {
                        "employee_id": e["id"],
                        "type_id": t["id"],
                        "completed": (today - timedelta(days=rng.randrange(10, 400))).isoformat(),
                    },
                    id=str(3000 + svc.next_seq("training")),
                )
        if rng.random() < 0.5:
            svc.goals.create(
                {
                    "employee_id": e["id"],
                    "title": rng.choice(
                        ("Ship the Q2 roadmap", "Improve NPS by 5", "Mentor a new hire", "Close 10 deals")
                    ),
                    "due_date": (today + timedelta(days=rng.randrange(10, 180))).isoformat(),
                    "percent_complete": rng.randrange(0, 90, 10),
                },
                id=str(7000 + svc.next_seq("goal")),
            )
    for t in company.teams[: ctx.scale(2, 5, 8)]:
        job = svc.jobs.create(
            {
                "title": f"{rng.choice(('Senior', 'Junior', ''))} {rng.choice(list(company.person(t.lead_id).title.split()))} ".strip()
                + " ("
                + t.name
                + ")",
                "department": t.name,
                "location": rng.choice(("Berlin", "London", "Remote")),
                "status": "Open",
                "hiring_lead_id": emp_id(t.lead_id),
                "created": format_time(now - timedelta(days=rng.randrange(5, 60))),
            },
            id=str(40 + svc.next_seq("job")),
        )
        for first, last in rng.sample(
            [
                (a, b)
                for a in ("Mia", "Leo", "Ava", "Sam", "Zara", "Omar", "Ines")
                for b in ("Reed", "Park", "Voss", "Khan")
            ],
            4,
        ):
            svc.apps.create(
                {
                    "job_id": job["id"],
                    "first_name": first,
                    "last_name": last,
                    "email": f"{first}.{last}@mail.example".lower(),
                    "source": rng.choice(("LinkedIn", "Referral", "Website")),
                    "status_id": rng.choice(STATUSES[:5])[0],
                    "applied": format_time(now - timedelta(days=rng.randrange(1, 30))),
                },
                id=str(900 + svc.next_seq("app")),
            )
