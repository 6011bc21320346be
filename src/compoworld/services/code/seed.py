"""Deterministic GitHub organisation: a few repositories with history, issues and pull requests."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META


def login(email: str) -> str:
    return email.split("@")[0].replace(".", "-")


def seed_code(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    org = company.name.lower().replace(" ", "-")
    me = login(company.me.email)
    svc.store.put(META, "me", me)
    devs = [login(p.email) for p in company.employees if p.team in ("Engineering", "Product")] or [me]
    for k, (name, desc) in enumerate(
        (
            ("platform", "Core platform services"),
            ("web-app", "Customer web application"),
            ("infra", "Infrastructure as code"),
        )[: ctx.scale(2, 3, 3)]
    ):
        t0 = now - timedelta(days=300 - k * 20)
        files = {
            "README.md": f"# {name}\n\n{desc} for {company.name}.\n",
            "LICENSE": "Proprietary\n",
            "src/main.py": "def main() -> None:\n    print('hello')\n",
            "docs/CONTRIBUTING.md": "Open a pull request against main.\n",
        }
        repo = svc.repos.create(
            {
                "owner": org,
                "name": name,
                "description": desc,
                "branches": {},
                "stars": rng.randrange(0, 200),
                "labels": ["bug", "enhancement", "documentation", "good first issue"],
                "created_at": format_time(t0),
                "updated_at": format_time(t0),
            },
            id=f"{org}/{name}",
        )
        head = svc._commit(repo["id"], None, "Initial commit", rng.choice(devs), format_time(t0), files)
        for j in range(ctx.scale(3, 10, 30)):
            files = dict(files)
            path = rng.choice(("src/main.py", "README.md", f"src/module_{j % 4}.py", "docs/CHANGELOG.md"))
            files[path] = files.get(path, "") + f"# change {j + 1}\n"
            head = svc._commit(
                repo["id"],
                head,
                rng.choice(
                    (
                        "Fix flaky test",
                        "Add retry logic",
                        "Update docs",
                        "Refactor module",
                        "Bump dependencies",
                    )
                ),
                rng.choice(devs),
                format_time(t0 + timedelta(days=20 * (j + 1) % 280)),
                files,
            )
        svc.repos.update(repo["id"], {"branches": {"main": head}, "tags": {"v1.0.0": head}})
        svc.releases.create(
            {
                "repo": repo["id"],
                "tag_name": "v1.0.0",
                "name": "v1.0.0",
                "body": "First stable release",
                "published_at": format_time(now - timedelta(days=10)),
            },
            id=svc.next_id("rel", 10),
        )
        for _ in range(ctx.scale(3, 12, 40)):
            cust = rng.choice(company.customers)
            svc._new_issue(
                repo["id"],
                {
                    "title": rng.choice(
                        (
                            f"Crash when {cust.name} exports data",
                            "Improve error messages",
                            "Docs: clarify setup",
                            f"Support SSO for {cust.name}",
                            "Slow page load",
                        )
                    ),
                    "body": "Steps to reproduce are in the support ticket.",
                    "user": rng.choice(devs),
                    "labels": rng.sample(["bug", "enhancement", "documentation"], rng.randrange(0, 2)),
                    "assignees": rng.sample(devs, rng.randrange(0, 2)),
                    "state": rng.choice(("open", "open", "closed")),
                    "created_at": format_time(now - timedelta(days=rng.randrange(1, 90))),
                },
            )
