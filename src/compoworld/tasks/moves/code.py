"""GitHub moves: an open issue whose body carries a fact; opening an issue."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("code")
    repo = g.rng.choice(sorted(svc.repos.rows))
    svc._new_issue(
        repo,
        {
            "title": f"Customer report: {key_text(key)}",
            "body": text,
            "user": svc._me,
            "state": "closed" if decoy else "open",
        },
    )
    return [("code__search_issues", {"query": f"is:open {key_text(key)}"})]


def _open(g: Gen, fact: Fact) -> WriteStep:
    repo = g.rng.choice(sorted(g.svc("code").repos.rows))
    owner, name = repo.split("/")
    return WriteStep(
        calls=[
            (
                "code__issue_write",
                {
                    "owner": owner,
                    "repo": name,
                    "method": "create",
                    "title": "Follow-up from support",
                    "body": fact.value,
                },
            )
        ],
        checks=[
            (
                f"a GitHub issue in {repo} carries it",
                {
                    "predicate": "record_exists",
                    "service": "code",
                    "table": "issues",
                    "new": True,
                    "where": {"repo": repo, "body": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "code", "table": "issues"}],
        phrase=f"open a GitHub issue titled 'Follow-up from support' in {repo} with that {{it}} in its body",
    )


MOVES = [
    Relay(
        "code",
        "issue_body",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the open GitHub issue",
        "on GitHub",
        _plant,
    ),
    Write("code", "open_issue", ("any",), None, _open),
]
