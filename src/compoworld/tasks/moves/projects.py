"""Asana moves: a task whose notes carry a fact; adding a task."""

from __future__ import annotations

from compoworld.services.projects.seed import gid
from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("projects")
    ws = gid(1)
    now = g.env.clock.iso()
    svc.tasks.create(
        {
            "name": f"Prepare material for {key_text(key)}",
            "notes": text,
            "workspace_gid": ws,
            "completed": decoy,
            "completed_at": now if decoy else None,
            "created_at": now,
            "modified_at": now,
        },
        id=svc._gid(),
    )
    return [
        ("projects__asana_search_tasks", {"workspace_id": ws, "keywords": key_text(key), "completed": False})
    ]


def _add(g: Gen, fact: Fact) -> WriteStep:
    ws = gid(1)
    return WriteStep(
        calls=[
            (
                "projects__asana_create_task",
                {"name": f"Handle {fact.value}", "workspace_id": ws, "assignee_id": "me"},
            )
        ],
        checks=[
            (
                "an Asana task names it",
                {
                    "predicate": "record_exists",
                    "service": "projects",
                    "table": "tasks",
                    "new": True,
                    "where": {"name": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "projects", "table": "tasks"}, {"service": "projects", "table": "_meta"}],
        phrase=g.rng.choice(
            (
                "add an Asana task for me with that {it} in its name",
                "create an Asana to-do assigned to me that names that {it}",
            )
        ),
    )


MOVES = [
    Relay(
        "projects",
        "task_notes",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the open Asana task",
        "in Asana",
        _plant,
    ),
    Write("projects", "add_task", ("any",), None, _add),
]
