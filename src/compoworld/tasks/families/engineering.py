"""Engineering workflows: incidents, pull requests and releases worked across GitHub, Jira, Linear and the wiki."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from compoworld.tasks.families._common import ago, chat_channel, chat_user, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

SYMPTOMS = (
    ("CSV export times out", "csv export timeout"),
    ("dashboard shows a blank page", "blank dashboard"),
    ("webhooks are delivered twice", "duplicate webhooks"),
    ("password reset emails never arrive", "missing reset emails"),
    ("search returns stale results", "stale search results"),
)


def _space(b: Builder, key: str) -> dict[str, Any]:
    svc = b.svc("wiki")
    for s in svc.spaces.all():
        if s["key"] == key:
            return s
    raise PlantError(f"no wiki space {key}")


def wiki_page(
    b: Builder, space_key: str, title: str, content: str, days_ago: float = 3, author: str = ""
) -> dict[str, Any]:
    svc = b.svc("wiki")
    space = _space(b, space_key)
    ts = ago(b, days=days_ago)
    return svc.pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": content,
            "parent_id": space["homepage_id"],
            "author_id": author or b.me.email,
            "created_at": ts,
            "updated_at": ts,
        }
    )


def jira_issue(
    b: Builder, project: str, summary: str, status: str, days_ago: float, **extra: Any
) -> dict[str, Any]:
    svc = b.svc("tracker")
    from compoworld.services.tracker.seed import account_id

    fields = {
        "summary": summary,
        "issuetype": extra.pop("issuetype", "Bug"),
        "status": status,
        "priority": extra.pop("priority", "High"),
        "reporter": account_id(b.me.id),
        "created": ago(b, days=days_ago),
        **extra,
    }
    return svc._new_issue(project, fields)


def acct(p) -> str:
    from compoworld.services.tracker.seed import account_id

    return account_id(p.id)


# ---------------------------------------------------------------------------------------------
@family("engineering.incident_oncall", "engineering", ("tracker", "wiki", "chat"))
def incident_oncall(b: Builder) -> None:
    """A customer reports a bug: assign the open Jira bug to this week's on-call from the wiki rota, tell #incidents."""
    cust = b.customer()
    contact = b.contact_of(cust)
    symptom, _short = b.pick(SYMPTOMS)
    prev, oncall, nxt = b.fresh([p for p in b.company.employees if p.id != b.me.id], 3, key=lambda p: p.id)
    monday = (b.now - timedelta(days=b.now.weekday())).date()
    weeks = [(monday - timedelta(days=7), prev), (monday, oncall), (monday + timedelta(days=7), nxt)]
    rota = (
        "<h1>On-call rota</h1><p>The on-call engineer owns every new customer bug for the week (Monday to Sunday).</p><table>"
        + "".join(f"<tr><td>Week of {d.isoformat()}</td><td>{p.name}</td></tr>" for d, p in weeks)
        + "</table>"
    )
    wiki_page(b, "ENG", "Engineering on-call rota", rota, days_ago=12)
    # the target: open, unassigned; traps: a closed earlier report of the same symptom, a newer open one of another customer
    target = jira_issue(
        b,
        "OPS",
        f"{symptom.capitalize()} - {cust.name}",
        "To Do",
        0.3,
        description=f"Reported by {contact.name}.",
    )
    old = jira_issue(
        b,
        "OPS",
        f"Customer report: {cust.name} - {symptom}",
        "Done",
        35,
        assignee=acct(prev),
        description=f"Reported by {contact.name}. Fixed in hotfix.",
    )
    other_c = b.customer()
    for summary, status, typ, d in (
        (f"Set up SSO for {cust.name}", "In Progress", "Task", 9),
        (f"Renew SSL certificate for {cust.name} portal", "Done", "Task", 50),
        (f"Audit access for {cust.name}", "To Do", "Story", 20),
    ):
        jira_issue(b, "OPS", summary, status, d, issuetype=typ, priority="Medium")
    newer = jira_issue(b, "OPS", f"{symptom.capitalize()} - {other_c.name}", "To Do", 0.1)
    inc = chat_channel(b, "incidents", topic="Customer-facing incidents")
    eng = chat_channel(b, "eng")
    b.begin()
    found = b.call(
        "tracker__jira_search", {"jql": f'text ~ "{cust.name}" ORDER BY created DESC', "limit": 20}
    )
    cands = [i for i in rows(found) if symptom.split()[0].lower() in i["fields"]["summary"].lower()]
    b.decide()
    key = next(i["key"] for i in cands if i["fields"]["status"] != "Done")
    assert key == target["id"]
    hits = b.call("wiki__confluence_search_content", {"must_contain_all": ["on-call", "rota"]})
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Engineering on-call rota")
    page = b.call("wiki__confluence_get_page", {"page_identifier": pid})
    assert oncall.name in page["content"] if isinstance(page, dict) and "content" in page else True
    b.decide()
    b.call("tracker__jira_update_issue", {"issue_key": key, "fields": {"assignee": oncall.name}})
    chans = b.call("chat__slack_user_list_channels", {"limit": 200})
    cid = next(c["id"] for c in rows(chans) if c["name"] == "incidents")
    assert cid == inc
    b.call(
        "chat__slack_user_post_message",
        {
            "channel_id": cid,
            "text": f"{key} ({cust.name}: {symptom}) is assigned to {oncall.name}, on call this week.",
        },
    )
    b.fact(key, oncall.name)
    b.expect_change(
        "tracker",
        "issues",
        key,
        "assignee",
        acct(oncall),
        f"{key} is assigned to this week's on-call, {oncall.name}",
    )
    b.expect_message(
        "chat",
        inc,
        contains=[key, oncall.first],
        description="#incidents was told the issue key and who has it",
    )
    b.no_message("chat", eng, "nothing was posted in #eng")
    b.keep("tracker", "issues", old["id"], "the closed earlier report was left alone")
    b.keep("tracker", "issues", newer["id"], "the other customer's bug was left alone")
    b.trap("closed", "the closed earlier report of the same symptom", swap={key: old["id"]})
    b.trap("near_duplicate", "the same symptom reported by another customer", swap={key: newer["id"]})
    b.trap("stale", "last week's on-call engineer", swap={oncall.name: prev.name})
    b.trap("stale", "next week's on-call engineer", swap={oncall.name: nxt.name})
    b.write(
        frame(
            b.rng,
            b.say(
                f"get the open Jira bug for {cust.name}'s report to whoever is on call this week and let #incidents know",
                f"route {cust.name}'s bug report to this week's on-call engineer and post it in #incidents",
            ),
            context=b.say(
                f"{contact.name} at {cust.name} says their {symptom}",
                f"{cust.name} ({contact.first}) reported that their {symptom}; the rota is on the engineering wiki",
            ),
        ),
        hint="Find the open Jira bug for the customer (not the closed earlier report), read this week's row of the on-call rota in Confluence, assign the bug, then post the key and the assignee in #incidents.",
        subtasks=[
            f"Find {cust.name}'s open bug in Jira",
            "Read this week's on-call engineer from the rota page",
            "Assign the bug to them",
            "Post the issue key and the assignee in #incidents",
        ],
    )


def gh_login(p) -> str:
    from compoworld.services.code.seed import login

    return login(p.email)


def gh_pr(
    b: Builder,
    repo: str,
    title: str,
    body: str,
    user: str,
    days_ago: float,
    merged: bool,
    state: str,
    head: str,
    **extra: Any,
) -> dict[str, Any]:
    svc = b.svc("code")
    r = svc.repos.get(repo)
    base_sha = r["branches"][r["default_branch"]]
    ts = ago(b, days=days_ago)
    rec = svc._new_issue(
        repo,
        {
            "title": title,
            "body": body,
            "user": user,
            "state": state,
            "is_pr": True,
            "head": head,
            "base": r["default_branch"],
            "base_sha": base_sha,
            "merged": merged,
            "merge_commit": base_sha if merged else None,
            "created_at": ts,
            **extra,
        },
    )
    return svc.issues.update(
        rec["id"], {"updated_at": ago(b, days=max(days_ago - 1, 0.05)) if state == "closed" else ts}
    )


def _devs(b: Builder) -> list:
    return [p for p in b.company.employees if p.id != b.me.id and p.team in ("Engineering", "Product")]


# ---------------------------------------------------------------------------------------------
@family("engineering.close_merged_fix", "engineering", ("code", "tracker"))
def close_merged_fix(b: Builder) -> None:
    """A fix was merged on GitHub: close its Jira issue (named in the PR) with a link, and note it on the PR."""
    svc = b.svc("code")
    repo = b.pick(sorted(svc.repos.rows))
    org, rname = repo.split("/")
    cust = b.customer()
    symptom, short = b.pick(SYMPTOMS)
    author = b.fresh(_devs(b) or [p for p in b.company.employees if p.id != b.me.id], 1, key=lambda p: p.id)[
        0
    ]
    words = short.split()
    for _ in range(b.rng.randrange(20, 60)):  # a repository with some history: PR numbers of two digits
        svc.next_seq(f"num:{repo}")
    target = jira_issue(
        b, "OPS", f"{symptom.capitalize()} for {cust.name}", "In Review", 6, assignee=acct(author)
    )
    twin = jira_issue(b, "OPS", f"{symptom.capitalize()} for {cust.name} (first report)", "Done", 70)
    other = jira_issue(b, "ESC", f"Escalation: {cust.name} - {symptom}", "To Do", 3)
    pr = gh_pr(
        b,
        repo,
        f"Fix {short} for {cust.name}",
        f"Fixes {target['id']}.\n\nRoot cause found in the retry path.",
        gh_login(author),
        4,
        merged=True,
        state="closed",
        head=f"fix/{'-'.join(words)}",
    )
    abandoned = gh_pr(
        b,
        repo,
        f"Fix {short} for {cust.name} with a workaround",
        f"Alternative fix for the {short} bug in Jira ticket {twin['id']}. Closed without merging, see the PR that got merged.",
        gh_login(author),
        2,
        merged=False,
        state="closed",
        head=f"wip/{'-'.join(words)}",
    )
    # the first report's attempt, closed unmerged months ago: the merged PR is not the oldest one
    first_try = gh_pr(
        b,
        repo,
        f"Fix {short} for {cust.name} (first attempt)",
        f"First attempt at the {short} bug from Jira ticket {twin['id']}. Closed without merging: it did not reproduce then.",
        gh_login(author),
        b.rng.randrange(65, 90),
        merged=False,
        state="closed",
        head=f"try/{'-'.join(words)}",
    )
    b.begin()
    repos = b.call("code__search_repositories", {"query": rname})
    full = next(r["full_name"] for r in rows(repos) if r["full_name"].endswith("/" + rname))
    assert full == repo
    org = full.split("/")[0]
    found = b.call("code__search_issues", {"query": short, "owner": org, "repo": rname})
    cands = rows(found)
    b.decide()
    hit = next(x for x in cands if x.get("is_pr") and x.get("merged"))
    n = hit["number"]
    assert n == pr["number"]
    detail = b.call(
        "code__pull_request_read", {"owner": org, "repo": rname, "pullNumber": n, "method": "get"}
    )
    key = detail["body"].split()[1].rstrip(".")
    assert key == target["id"]
    b.call("tracker__jira_get_issue", {"issue_key": key})
    b.call("tracker__jira_add_comment", {"issue_key": key, "comment": f"Fixed by {repo}#{n} (merged)."})
    b.call("tracker__jira_update_issue", {"issue_key": key, "fields": {"status": "Done"}})
    b.call(
        "code__add_issue_comment",
        {"owner": org, "repo": rname, "issue_number": n, "body": f"Tracked in {key}, now Done."},
    )
    b.fact(key, f"#{n}")
    b.expect_change("tracker", "issues", key, "status", "Done", f"{key} is Done")
    b.expect_record(
        "tracker",
        "issues",
        {"id": key, "comments.body": {"contains": f"#{n}"}},
        f"{key} has a comment linking PR #{n}",
    )
    b.expect_record(
        "code",
        "issues",
        {"id": pr["id"], "comments.body": {"contains": key}},
        f"PR #{n} has a comment naming {key}",
    )
    b.keep("code", "issues", abandoned["id"], "the abandoned PR was left alone")
    b.keep("code", "issues", first_try["id"], "the first attempt's PR was left alone")
    b.keep("tracker", "issues", twin["id"], "the closed first report was left alone")
    b.keep("tracker", "issues", other["id"], "the support escalation was left alone")
    b.trap(
        "near_duplicate",
        "the newer closed-unmerged PR with a similar title",
        swap={n: abandoned["number"], key: twin["id"]},
    )
    b.trap(
        "near_duplicate",
        "the months-old closed-unmerged first attempt",
        swap={n: first_try["number"], key: twin["id"]},
    )
    b.trap("closed", "the similarly named Jira issue that is already Done", swap={key: twin["id"]})
    b.trap("near_duplicate", "the support escalation of the same symptom", swap={key: other["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"close out the Jira ticket for {author.first}'s merged fix of the {short} bug in {rname}, linking the PR there, and note the ticket on the PR",
                f"now that {author.first}'s {short} fix in {rname} is merged, move its Jira issue to Done with a comment pointing at the PR, and comment the key on the PR",
            ),
            context=b.say(
                f"It was {cust.name}'s problem",
                "The ticket is the one the PR names",
            ),
        ),
        hint="Search the repository's pull requests for the fix, take the merged one (not the closed-unmerged workaround), read the Jira key from its body, comment the PR on that issue and move it to Done, then comment the key on the PR.",
        subtasks=[
            f"Find the merged {short} PR in {rname}",
            "Read the Jira key it fixes",
            "Comment the PR link on the Jira issue and move it to Done",
            "Comment the Jira key on the PR",
        ],
    )


AREAS = ("billing", "search", "auth", "notifications", "exports")


def gh_branch(b: Builder, repo: str, branch: str, path: str, content: str, author: str) -> None:
    svc = b.svc("code")
    r = svc.repos.get(repo)
    base = r["branches"][r["default_branch"]]
    files = {**svc.commits.get(base)["files"], path: content}
    sha = svc._commit(repo, base, f"Work on {path}", author, ago(b, days=1), files)
    svc.repos.update(repo, {"branches": {**r["branches"], branch: sha}})


# ---------------------------------------------------------------------------------------------
@family("engineering.review_by_owner", "engineering", ("code", "wiki"))
def review_by_owner(b: Builder) -> None:
    """An open PR needs a reviewer: request the owner of the code it changes (wiki ownership table)."""
    svc = b.svc("code")
    repo = b.pick(sorted(svc.repos.rows))
    org, rname = repo.split("/")
    pool = [p for p in b.company.employees if p.id != b.me.id]
    author, owner, docs_owner, other_owner, other_author = b.fresh(pool, 5, key=lambda p: p.id)
    area, area2 = b.rng.sample(AREAS, 2)
    for _ in range(b.rng.randrange(15, 60)):
        svc.next_seq(f"num:{repo}")
    table = [(f"src/{area}/", owner), (f"src/{area2}/", other_owner), ("docs/", docs_owner)]
    b.rng.shuffle(table)
    page = (
        f"<h1>Code owners: {rname}</h1><p>Every pull request needs a review from the owner of the source directory it changes. "
        "Documentation owners are only asked when a PR changes nothing but docs.</p><table>"
        + "".join(f"<tr><td>{d}</td><td>{p.name} (GitHub: {gh_login(p)})</td></tr>" for d, p in table)
        + "</table>"
    )
    wiki_page(b, "ENG", f"Code owners: {rname}", page, days_ago=30)
    branch = f"feature/{area}-retries"
    gh_branch(
        b, repo, branch, f"src/{area}/retry.py", "def retry(n: int) -> int:\n    return n\n", gh_login(author)
    )
    r = svc.repos.get(repo)
    base_sha = r["branches"][r["default_branch"]]
    files = {**svc.commits.get(r["branches"][branch])["files"], "docs/retries.md": "# Retries\n"}
    sha = svc._commit(
        repo, r["branches"][branch], "Document retries", gh_login(author), ago(b, days=0.8), files
    )
    svc.repos.update(repo, {"branches": {**r["branches"], branch: sha}})
    old = gh_pr(
        b,
        repo,
        f"Add {area} retries (first attempt)",
        "First attempt: the code owner's review asked for changes, so this pull request was closed and a new one will be opened.",
        gh_login(author),
        20,
        merged=False,
        state="closed",
        head=f"old/{area}-retries",
    )
    pr = gh_pr(
        b,
        repo,
        f"Add retries to {area}",
        "Retries with backoff, plus docs.",
        gh_login(author),
        1.5,
        merged=False,
        state="open",
        head=branch,
    )
    assert pr["base_sha"] == base_sha
    newer = gh_pr(
        b,
        repo,
        f"Tune {area2} timeouts",
        "Small change.",
        gh_login(other_author),
        0.3,
        merged=False,
        state="open",
        head=f"feature/{area2}-timeouts",
    )
    b.begin()
    repos = b.call("code__search_repositories", {"query": rname})
    full = next(x["full_name"] for x in rows(repos) if x["full_name"].endswith("/" + rname))
    org = full.split("/")[0]
    prs = b.call("code__list_pull_requests", {"owner": org, "repo": rname, "state": "all"})
    b.decide()
    n = next(x["number"] for x in rows(prs) if x["user"] == gh_login(author) and x["state"] == "open")
    assert n == pr["number"]
    changed = b.call(
        "code__pull_request_read", {"owner": org, "repo": rname, "pullNumber": n, "method": "get_files"}
    )
    paths = [f["filename"] for f in rows(changed)]
    assert f"src/{area}/retry.py" in paths
    hits = b.call("wiki__confluence_search_content", {"must_contain_all": ["Code owners", rname]})
    pid = next(x["id"] for x in rows(hits) if x["title"] == f"Code owners: {rname}")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    b.decide()
    login = gh_login(owner)
    b.call(
        "code__issue_write",
        {"owner": org, "repo": rname, "method": "update", "issue_number": n, "assignees": [login]},
    )
    b.call(
        "code__add_issue_comment",
        {
            "owner": org,
            "repo": rname,
            "issue_number": n,
            "body": f"@{login} could you review? You own src/{area}/.",
        },
    )
    b.fact(f"#{n}", login)
    b.expect_change("code", "issues", pr["id"], "assignees", login, f"{owner.name} is requested on PR #{n}")
    b.expect_record(
        "code",
        "issues",
        {"id": pr["id"], "comments.body": {"contains": login}},
        f"PR #{n} has a comment pinging {login}",
    )
    b.not_written(
        "code",
        gh_login(docs_owner),
        "the docs owner was not asked: the PR changes source too",
        tables=["issues"],
    )
    b.not_written(
        "code", gh_login(other_owner), "the owner of another directory was not asked", tables=["issues"]
    )
    b.keep("code", "issues", old["id"], "the closed first attempt was left alone")
    b.keep("code", "issues", newer["id"], "the other open PR was left alone")
    b.trap("policy_exception", "the docs owner (the PR touches docs too)", swap={login: gh_login(docs_owner)})
    b.trap("near_duplicate", "the owner of the neighbouring directory", swap={login: gh_login(other_owner)})
    b.trap("closed", "the author's closed first attempt", swap={n: old["number"]})
    b.trap("recent", "a newer open PR by someone else", swap={n: newer["number"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"get {author.first}'s open pull request in {rname} in front of the right reviewer",
                f"request a review on {author.name}'s open PR in {rname} from whoever owns the code it changes",
            ),
            context=b.say(
                "Ownership is on the code owners page in the wiki; assign the owner on the PR and ping them in a comment",
                "Use the wiki's code owners table, add them to the PR and leave a comment asking for the review",
            ),
        ),
        hint="List the repository's PRs, take the author's open one, read which files it changes, look the directory up on the Confluence code owners page, then assign that owner on the PR and comment to ping them.",
        subtasks=[
            f"Find {author.name}'s open PR in {rname}",
            "List the files it changes",
            "Look the source directory's owner up on the wiki",
            "Assign the owner on the PR and ping them in a comment",
        ],
    )


def lin_user(p) -> str:
    from compoworld.services.issues.seed import uid

    return uid(p.id)


def lin_issue(
    b: Builder,
    team_key: str,
    title: str,
    state: str,
    created_days_ago: float,
    completed_days_ago: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Plant a Linear issue in a team (its next identifier), in the named workflow state."""
    svc = b.svc("issues")
    team = next(t for t in svc.teams.all() if t["key"] == team_key)
    st = next(s for s in svc.states.find(team_id=team["id"]) if s["name"] == state)
    counters = dict(svc.store.tables["_meta"].get("counters", {}))
    counters[team["id"]] = counters.get(team["id"], 0) + 1
    svc.store.put("_meta", "counters", counters)
    created = ago(b, days=created_days_ago)
    done = ago(b, days=completed_days_ago) if completed_days_ago is not None else None
    return svc.issues_.create(
        {
            "identifier": f"{team['key']}-{counters[team['id']]}",
            "team_id": team["id"],
            "title": title,
            "description": extra.pop("description", f"{title}."),
            "creator_id": extra.pop("creator_id", lin_user(b.me)),
            "state_id": st["id"],
            "created_at": created,
            "updated_at": extra.pop("updated_at", done or created),
            "completed_at": done if st["type"] == "completed" else None,
            **extra,
        }
    )


def _bump(b: Builder, n: int) -> None:
    """A workspace with history: every team's issue numbers have three digits."""
    svc = b.svc("issues")
    counters = dict(svc.store.tables["_meta"].get("counters", {}))
    for t in svc.teams.all():
        counters[t["id"]] = max(counters.get(t["id"], 0), 99) + n
    svc.store.put("_meta", "counters", counters)


SHIPPED = (
    "Retry failed webhook deliveries",
    "Paginate the audit log API",
    "Cache tenant settings",
    "Speed up the invoice PDF renderer",
    "Add SAML metadata refresh",
    "Fix timezone drift in reports",
    "Show sync errors in the admin console",
    "Rotate API signing keys",
)


# ---------------------------------------------------------------------------------------------
@family("engineering.release_notes", "engineering", ("issues", "wiki"))
def release_notes(b: Builder) -> None:
    """Draft the next release's notes: Engineering's Linear issues completed since the last release (wiki release log)."""
    svc = b.svc("issues")
    eng = next(t for t in svc.teams.all() if t["key"] == "ENG")
    done_state = f"st-{eng['key'].lower()}-done"

    def eng_done_on(day) -> bool:
        return any(
            i["completed_at"] and i["completed_at"][:10] == day.isoformat()
            for i in svc.issues_.find(team_id=eng["id"])
            if i["state_id"] == done_state
        )

    days = [d for d in range(5, 10) if not eng_done_on((b.now - timedelta(days=d)).date())]
    if not days:
        raise PlantError("no quiet day for the last release")
    gap = b.pick(days)
    last = (b.now - timedelta(days=gap)).date()
    prev = last - timedelta(days=b.rng.choice((14, 21, 28)))
    minor = b.rng.randrange(8, 30)
    v_prev, v_last, v_next = f"v3.{minor - 1}", f"v3.{minor}", f"v3.{minor + 1}"
    nxt = (b.now + timedelta(days=b.rng.randrange(3, 9))).date()
    log = (
        "<h1>Release log</h1><p>Release notes list every Engineering Linear issue completed after the previous "
        "release went out, by identifier; canceled issues never go in.</p><table>"
        f"<tr><td>{v_prev}</td><td>released {prev.isoformat()}</td></tr>"
        f"<tr><td>{v_last}</td><td>released {last.isoformat()}</td></tr>"
        f"<tr><td>{v_next}</td><td>planned for {nxt.isoformat()}</td></tr>"
        "</table>"
    )
    wiki_page(b, "ENG", "Release log", log, days_ago=gap)
    titles = b.rng.sample(SHIPPED, 6)
    dev = [lin_user(p) for p in _devs(b)] or [lin_user(b.me)]
    _bump(b, b.rng.randrange(120, 400))
    shipped = [
        lin_issue(b, "ENG", titles[0], "Done", gap + 6, gap - 1.5, assignee_id=b.pick(dev)),
        lin_issue(b, "ENG", titles[1], "Done", gap + 3, max(gap - 3.5, 0.4), assignee_id=b.pick(dev)),
    ]
    before = lin_issue(b, "ENG", f"{titles[2]} (release notes for {v_last})", "Done", gap + 9, gap + 1.5)
    canceled = lin_issue(
        b,
        "ENG",
        titles[3],
        "Canceled",
        2,
        None,
        updated_at=ago(b, hours=3),
        description="Not needed after all.",
    )
    review = lin_issue(b, "ENG", titles[4], "In Review", 4, None, assignee_id=b.pick(dev))
    other = lin_issue(b, "PRD", f"{titles[5]} for the next release", "Done", 3, 0.6)
    cutoff = last.isoformat()
    want = sorted(
        (
            i
            for i in svc.issues_.find(team_id=eng["id"])
            if i["state_id"] == done_state and i["completed_at"] and i["completed_at"][:10] > cutoff
        ),
        key=lambda i: i["completed_at"],
    )
    if not 2 <= len(want) <= 8:
        raise PlantError("release window too empty or too busy")
    b.begin()
    hits = b.call(
        "wiki__confluence_search_content", {"must_contain_all": ["release"], "can_contain_any": ["log"]}
    )
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Release log")
    page = b.call("wiki__confluence_get_page", {"page_identifier": pid})
    assert cutoff in page["content"]
    b.decide()
    teams = b.call("issues__linear_get_teams", {})
    tid = next(t["id"] for t in rows(teams) if t["key"] == "ENG")
    got = b.call("issues__linear_get_issues", {"team_id": tid, "limit": 250, "filter": {"state": "Done"}})
    b.aggregate()
    ids = [
        i["identifier"]
        for i in sorted(rows(got), key=lambda i: i["completed_at"] or "")
        if i["completed_at"] and i["completed_at"][:10] > cutoff
    ]
    assert ids == [i["identifier"] for i in want], (ids, [i["identifier"] for i in want])
    title = f"Release notes {v_next}"
    body = (
        f"<h1>{title}</h1><p>Completed since the last release, {v_last}.</p><ul>"
        + "".join(
            f"<li>{i['identifier']}: {i['title']}</li>"
            for i in sorted(rows(got), key=lambda i: i["completed_at"] or "")
            if i["identifier"] in ids
        )
        + "</ul>"
    )
    b.call("wiki__confluence_create_page", {"space_identifier": "ENG", "title": title, "content": body})
    b.fact(cutoff, v_next)
    b.expect_record(
        "wiki",
        "pages",
        {"title": {"contains": v_next}, "content": {"contains_all": ids}},
        f"a wiki page for {v_next} lists {', '.join(ids)}",
    )
    for t, why in (
        (before, "the issue shipped in the last release is not listed"),
        (canceled, "the canceled issue is not listed"),
        (review, "the issue still in review is not listed"),
        (other, "the Product team's issue is not listed"),
    ):
        b.not_written("wiki", t["identifier"], why, tables=["pages"])
    b.keep("issues", "issues", before["id"], "the shipped issue was left alone")
    b.trap("stale", "the issue completed just before the last release", swap={ids[0]: before["identifier"]})
    b.trap("closed", "a freshly canceled issue", swap={ids[0]: canceled["identifier"]})
    b.trap("filter", "an issue still in review", swap={ids[-1]: review["identifier"]})
    b.trap("near_duplicate", "another team's issue done this week", swap={ids[-1]: other["identifier"]})
    assert shipped
    b.write(
        frame(
            b.rng,
            b.say(
                "draft the release notes for our upcoming release as a new page in the ENG wiki space",
                "put together the notes for the next release on a new ENG wiki page",
                "write up the next release's notes page in the ENG space of the wiki",
            ),
            context=b.say(
                "It should list, by identifier, every Engineering issue in Linear finished since the last release went out; the dates are on the release log. Title it Release notes plus the version",
                "The release log on the wiki has the dates and versions. Title the page 'Release notes' with the next version, and list the Engineering Linear issues completed since the last release",
            ),
        ),
        hint="Read the Confluence release log for the last release date and the next version, list the Engineering team's Done issues in Linear, keep those completed after that date (not canceled, not another team's), and create 'Release notes <version>' in ENG listing their identifiers.",
        subtasks=[
            "Read the last release date and the next version from the release log",
            "List Engineering's completed Linear issues",
            "Keep the ones completed after the last release",
            "Create the release notes page listing their identifiers",
        ],
    )


AREA_BUGS = {
    "billing": "invoices show the wrong tax amount",
    "search": "search finds nothing for names with accents",
    "auth": "users are logged out every few minutes",
    "notifications": "email notifications arrive hours late",
    "exports": "CSV exports drop the last column",
}
WORKAROUNDS = (
    "re-running it by hand",
    "using the old admin screen",
    "downloading the data from the API instead",
)


def _chat_msg(b: Builder, channel: str, author, text: str, hours_ago: float) -> str:
    svc = b.svc("chat")
    ts = f"{int(b.env.clock.epoch() - hours_ago * 3600)}.{svc.next_seq('ts'):06d}"
    svc.insert(
        "messages",
        {
            "ts": ts,
            "channel": channel,
            "user": chat_user(author),
            "text": text,
            "thread_ts": None,
            "reply_count": 0,
            "reactions": {},
        },
        key="ts",
    )
    return ts


# ---------------------------------------------------------------------------------------------
@family("engineering.triage_customer_bug", "engineering", ("chat", "wiki", "issues"))
def triage_customer_bug(b: Builder) -> None:
    """A customer-facing colleague flags a bug in chat: file it in Linear for the owning team at the
    wiki's priority, and add it to the known-issues page."""
    facing = [p for p in b.company.employees if p.id != b.me.id and p.team in ("Sales", "Customer Success")]
    if len(facing) < 2:
        raise PlantError("too few customer-facing colleagues")
    rep, mate = b.fresh(facing, 2, key=lambda p: p.id)
    cust, other = b.customer(), b.customer()
    area, area2, area3 = b.rng.sample(sorted(AREA_BUGS), 3)
    svc = b.svc("issues")
    teams = sorted(svc.teams.all(), key=lambda t: t["key"])
    owner = {a: b.pick(teams) for a in AREA_BUGS}
    owner[area2] = b.pick([t for t in teams if t["id"] != owner[area]["id"]])
    workaround = b.rng.random() < 0.5
    prio, prio_name = (2, "High") if workaround else (1, "Urgent")
    rule = (
        "<h1>Customer bug triage</h1><p>Every bug a customer reports is filed in Linear for the team that owns "
        "the area, with the customer's name in the title. Priority: Urgent when the customer has no workaround, "
        "High when they can work around it. Then add the issue to the Known customer issues page.</p><table>"
        + "".join(f"<tr><td>{a}</td><td>{owner[a]['name']}</td></tr>" for a in sorted(AREA_BUGS))
        + "</table>"
    )
    wiki_page(b, "ENG", "Customer bug triage", rule, days_ago=40)
    known = wiki_page(
        b,
        "ENG",
        "Known customer issues",
        "<h1>Known customer issues</h1><p>Open bugs customers have reported, newest last.</p><ul></ul>",
        days_ago=9,
    )
    archive = wiki_page(
        b,
        "ENG",
        "Known customer issues archive",
        f"<h1>Known customer issues archive</h1><p>Customer issues fixed in earlier releases.</p><ul><li>{cust.name}: "
        f"{AREA_BUGS[area2]} (fixed)</li></ul>",
        days_ago=4,
    )
    mobile = wiki_page(
        b,
        "ENG",
        "Known issues in the mobile app",
        "<h1>Known issues in the mobile app</h1><p>Mobile only.</p>",
        days_ago=0.5,
    )
    _bump(b, b.rng.randrange(120, 400))
    members = [rep, mate]
    chan = chat_channel(b, "customer-bugs", members=members, topic="Bugs customers report")
    ch = b.svc("chat").get("channels", chan)
    b.svc("chat").update("channels", chan, members=sorted({*ch["members"], *(chat_user(p) for p in members)}))
    wa = (
        f"They can work around it by {b.pick(WORKAROUNDS)} for now."
        if workaround
        else "They have no workaround, it blocks them."
    )
    _chat_msg(b, chan, rep, f"{cust.name} says {AREA_BUGS[area2]}. Looks like it's back?", 24 * 20)
    today_h = b.now.hour + b.now.minute / 60
    if today_h < 1.2:
        raise PlantError("too early in the day for a report from today")
    tts = _chat_msg(b, chan, rep, f"New one from {cust.name}: {AREA_BUGS[area]}. {wa}", min(3, today_h - 0.2))
    _chat_msg(b, chan, mate, f"{other.name} reports that {AREA_BUGS[area3]}. No workaround.", 0.7)
    b.begin()
    chans = b.call("chat__slack_user_list_channels", {"channel_name": "customer-bugs"})
    cid = next(c["id"] for c in rows(chans) if c["name"] == "customer-bugs")
    hist = b.call("chat__slack_get_channel_history", {"channel_id": cid, "limit": 20})
    users = b.call("chat__slack_list_users", {"name": rep.name})
    ruid = next(u["id"] for u in rows(users) if rep.name in (u.get("real_name"), u.get("name")))
    b.decide()
    msg = next(m for m in rows(hist) if m["user_id"] == ruid and float(m["ts"]) > b.env.clock.epoch() - 86400)
    assert msg["ts"] == tts
    hits = b.call(
        "wiki__confluence_search_content", {"must_contain_all": ["triage"], "can_contain_any": ["bug"]}
    )
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Customer bug triage")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    b.decide(2)
    tl = b.call("issues__linear_get_teams", {})
    tid = next(t["id"] for t in rows(tl) if t["name"] == owner[area]["name"])
    title = f"{cust.name}: {AREA_BUGS[area]}"
    made = b.call(
        "issues__linear_create_issue",
        {
            "team_id": tid,
            "title": title,
            "description": f"Reported by {rep.name} for {cust.name}. {wa}",
            "priority": prio,
        },
    )
    ident = made["identifier"]
    kp = b.call("wiki__confluence_search_content", {"must_contain_all": ["known", "issues"]})
    kid = next(p["id"] for p in rows(kp) if p["title"] == "Known customer issues")
    assert kid == known["id"]
    b.call(
        "wiki__confluence_update_page_content",
        {"page_identifier": kid, "content": f"<p>{ident}: {title}</p>", "update_mode": "append"},
    )
    b.fact(owner[area]["name"], ident)
    b.expect_record(
        "issues",
        "issues",
        {"team_id": owner[area]["id"], "title": {"contains": cust.name}, "priority": prio},
        f"a {owner[area]['name']} issue for {cust.name} at priority {prio_name}",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": known["id"], "content": {"contains": ident}},
        f"{ident} is on Known customer issues",
    )
    b.keep("wiki", "pages", archive["id"], "the archive page was left alone")
    b.keep("wiki", "pages", mobile["id"], "the mobile known-issues page was left alone")
    b.not_written(
        "issues", other.name, "no issue was filed for the other customer's report", tables=["issues"]
    )
    wrong = next(t for t in teams if t["id"] != owner[area]["id"])
    b.trap("stale", "the customer's older report of another area's bug", swap={tid: owner[area2]["id"]})
    b.trap("recent", "a newer report about another customer", swap={cust.name: other.name})
    b.trap("near_duplicate", "the team owning another area", swap={tid: wrong["id"]})
    b.trap("closed", "the closed archive of known issues", swap={kid: archive["id"]})
    b.trap("recent", "the newer mobile known-issues page", swap={kid: mobile["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"triage the bug {rep.name} posted in #customer-bugs today: file it in Linear the way the wiki's triage rules say and add it to the known customer issues page",
                f"{rep.name} flagged a customer bug in #customer-bugs earlier today; get it into Linear following our triage rules on the wiki, and onto the known customer issues list",
            ),
            context=b.say(
                "Team and priority come from the triage page",
                "The wiki says which team owns what and how urgent it is",
                "",
            ),
        ),
        hint="Read today's message from the colleague in #customer-bugs (not their older report), look the area's team and the priority rule up on the Confluence triage page, create the Linear issue with the customer in the title, then append its identifier to the Known customer issues page (not the archive or the mobile page).",
        subtasks=[
            f"Read {rep.name}'s report from today in #customer-bugs",
            "Look the area's team and the priority up on the triage page",
            "File the Linear issue for that team at that priority",
            "Add its identifier to the Known customer issues page",
        ],
    )
