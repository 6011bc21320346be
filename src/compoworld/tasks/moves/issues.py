"""Linear moves: an issue whose description carries a fact; filing an issue (reveals its key)."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("issues")
    team = g.rng.choice(svc.teams.all())
    state = next(
        s["id"] for s in svc.states.find(team_id=team["id"]) if s["name"] == ("Canceled" if decoy else "Todo")
    )
    counters = dict(svc.store.tables["_meta"].get("counters", {}))
    counters[team["id"]] = counters.get(team["id"], 0) + 1
    svc.store.put("_meta", "counters", counters)
    now = g.env.clock.iso()
    svc.issues_.create(
        {
            "identifier": f"{team['key']}-{counters[team['id']]}",
            "team_id": team["id"],
            "title": f"Request from {key_text(key)}",
            "description": text,
            "creator_id": svc._me,
            "state_id": state,
            "created_at": now,
            "updated_at": now,
        }
    )
    return [("issues__linear_search_issues", {"query": key_text(key), "limit": 10})]


def _file(g: Gen, fact: Fact) -> WriteStep:
    team = g.rng.choice(g.svc("issues").teams.all())
    return WriteStep(
        calls=[
            (
                "issues__linear_create_issue",
                {
                    "team_id": team["id"],
                    "title": f"Follow up: {fact.value}",
                    "description": f"Tracking {fact.value}.",
                },
            )
        ],
        checks=[
            (
                f"a Linear issue in {team['name']} mentions it",
                {
                    "predicate": "record_exists",
                    "service": "issues",
                    "table": "issues",
                    "new": True,
                    "where": {"team_id": team["id"], "title": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "issues", "table": "issues"}, {"service": "issues", "table": "_meta"}],
        phrase=f"file a Linear issue for the {team['name']} team with that {{it}} in its title",
        extract=lambda r: r["identifier"],
    )


MOVES = [
    Relay(
        "issues",
        "issue_description",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the open Linear issue",
        "in Linear",
        _plant,
    ),
    Write("issues", "file_issue", ("any",), "code", _file),
]
