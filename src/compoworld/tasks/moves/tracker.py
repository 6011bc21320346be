"""Jira moves: an issue whose description carries a fact; filing an issue (reveals its key)."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("tracker")
    project = g.rng.choice(sorted(svc.projects.rows))
    svc._new_issue(
        project,
        {
            "summary": f"Customer request: {key_text(key)}",
            "description": text,
            "issuetype": "Task",
            "status": "Done" if decoy else "To Do",
            "reporter": svc._me,
        },
    )
    return [("tracker__jira_search", {"jql": f'summary ~ "{key_text(key)}" AND status != Done', "limit": 10})]


def _file(g: Gen, fact: Fact) -> WriteStep:
    project = g.rng.choice(sorted(g.svc("tracker").projects.rows))
    return WriteStep(
        calls=[
            (
                "tracker__jira_create_issue",
                {"project_key": project, "summary": f"Follow up {fact.value}", "issue_type": "Task"},
            )
        ],
        checks=[
            (
                f"a Jira task in {project} names it",
                {
                    "predicate": "record_exists",
                    "service": "tracker",
                    "table": "issues",
                    "new": True,
                    "where": {"project": project, "summary": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "tracker", "table": "issues"}],
        phrase=f"open a Jira task in the {project} project with that {{it}} in its summary",
        extract=lambda r: r["key"],
    )


MOVES = [
    Relay(
        "tracker",
        "issue_description",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the open Jira issue",
        "in Jira",
        _plant,
    ),
    Write("tracker", "file_issue", ("any",), "code", _file),
]
