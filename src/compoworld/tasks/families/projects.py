"""Project-management workflows: Asana tasks, Trello boards and status pages kept in step."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from compoworld.tasks.families._common import ago, chat_channel, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

WORK = (
    "Draft the rollout checklist",
    "Review vendor quote",
    "Update the risk register",
    "Prepare steering committee slides",
    "Chase legal sign-off",
    "Book user interviews",
    "Write the migration runbook",
    "Collect budget actuals",
)


def _ws(b: Builder) -> str:
    for w in b.svc("projects").workspaces.all():
        if w["is_organization"]:
            return w["gid"]
    raise PlantError("no organisation workspace")


def asana_user(b: Builder, p) -> str:
    hits = b.svc("projects").users.find(lambda u: u["email"].lower() == p.email.lower())
    if not hits:
        raise PlantError(f"no Asana user {p.email}")
    return hits[0]["gid"]


def asana_task(
    b: Builder,
    name: str,
    assignee: str | None,
    due_days: float,
    project: str | None = None,
    completed: bool = False,
    created_days_ago: float = 20,
    notes: str = "",
) -> dict[str, Any]:
    svc = b.svc("projects")
    due = (b.now + timedelta(days=due_days)).date().isoformat()
    rec = {
        "name": name,
        "notes": notes,
        "workspace_gid": _ws(b),
        "project_gids": [project] if project else [],
        "assignee_gid": assignee,
        "due_on": due,
        "completed": completed,
        "completed_at": ago(b, days=max(-due_days, 0) + 0.5) if completed else None,
        "created_at": ago(b, days=created_days_ago),
        "modified_at": ago(b, days=created_days_ago),
    }
    return svc.tasks.create(rec, id=_gid(b))


def _gid(b: Builder) -> str:
    from compoworld.core.state import META

    svc = b.svc("projects")
    n = svc.store.tables[META]["next_gid"]
    svc.store.put(META, "next_gid", n + 1)
    return str(1200000000000000 + n)


def _space(b: Builder, key: str) -> dict[str, Any]:
    for s in b.svc("wiki").spaces.all():
        if s["key"] == key:
            return s
    raise PlantError(f"no wiki space {key}")


def wiki_page(b: Builder, space_key: str, title: str, content: str, days_ago: float = 3) -> dict[str, Any]:
    space = _space(b, space_key)
    ts = ago(b, days=days_ago)
    return b.svc("wiki").pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": content,
            "parent_id": space["homepage_id"],
            "author_id": b.me.email,
            "created_at": ts,
            "updated_at": ts,
        }
    )


# ---------------------------------------------------------------------------------------------
@family("projects.cover_while_on_leave", "project_management", ("projects", "wiki", "chat"))
def cover_while_on_leave(b: Builder) -> None:
    """Someone is on leave: hand their overdue open Asana tasks to the cover named on the wiki, tell the channel."""
    pool = [p for p in b.company.employees if p.id != b.me.id]
    away, cover, past, past_cover = b.fresh(pool, 4, key=lambda p: p.id)
    start = (b.now - timedelta(days=1)).date()
    end = (b.now + timedelta(days=13)).date()
    old_s, old_e = (b.now - timedelta(days=60)).date(), (b.now - timedelta(days=46)).date()
    page = (
        "<h1>Leave and cover plan</h1><p>While someone is away, their overdue open tasks move to their cover.</p><table>"
        f"<tr><td>{past.name}</td><td>{old_s.isoformat()} to {old_e.isoformat()}</td><td>cover: {past_cover.name}</td></tr>"
        f"<tr><td>{away.name}</td><td>{start.isoformat()} to {end.isoformat()}</td><td>cover: {cover.name}</td></tr>"
        "</table>"
    )
    wiki_page(b, "PEOPLE", "Leave and cover plan", page, days_ago=4)
    ua = asana_user(b, away)
    names = b.rng.sample(WORK, 5)
    t1 = asana_task(b, names[0], ua, -4, created_days_ago=25)
    t2 = asana_task(b, names[1], ua, -1, created_days_ago=15)
    done = asana_task(b, names[2], ua, -6, completed=True, created_days_ago=30)
    later = asana_task(
        b,
        f"{names[3]} (overdue items from leave handover)",
        ua,
        9,
        created_days_ago=0.5,
        notes="Not due yet; reassign when overdue.",
    )
    chan = chat_channel(b, "project-updates", topic="Project staffing and status")
    today = b.now.date().isoformat()
    due_now = [
        t
        for t in b.svc("projects").tasks.all()
        if t["assignee_gid"] == ua and not t["completed"] and t["due_on"] and t["due_on"] < today
    ]
    if len(due_now) > 4:
        raise PlantError("too much overdue work for one handover")
    b.begin()
    ws = b.call("projects__asana_get_workspaces", {})
    wid = next(w["gid"] for w in rows(ws) if w["is_organization"])
    users = b.call("projects__asana_get_users", {"workspace_id": wid, "limit": 100})
    uid = next(u["gid"] for u in rows(users) if u["name"] == away.name)
    tasks = b.call("projects__asana_search_tasks", {"workspace_id": wid, "assignee_id": uid, "limit": 100})
    b.decide()
    overdue = [t["gid"] for t in rows(tasks) if not t["completed"] and t["due_on"] and t["due_on"] < today]
    assert sorted(overdue) == sorted(t["gid"] for t in due_now)
    hits = b.call(
        "wiki__confluence_search_content", {"must_contain_all": ["cover"], "can_contain_any": ["leave"]}
    )
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Leave and cover plan")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    b.decide()
    cid = next(u["gid"] for u in rows(users) if u["name"] == cover.name)
    for g in overdue:
        b.call("projects__asana_update_task", {"task_id": g, "assignee_id": cid})
    chans = b.call("chat__slack_user_list_channels", {"limit": 200})
    ch = next(c["id"] for c in rows(chans) if c["name"] == "project-updates")
    b.call(
        "chat__slack_user_post_message",
        {
            "channel_id": ch,
            "text": f"{cover.name} is covering {away.name}'s {len(overdue)} overdue tasks while {away.first} is on leave.",
        },
    )
    b.aggregate()
    b.fact(cover.name)
    for t in due_now:
        b.expect_change(
            "projects", "tasks", t["gid"], "assignee_gid", cid, f"'{t['name']}' is now {cover.name}'s"
        )
    b.expect_message(
        "chat",
        chan,
        contains=[cover.first, str(len(overdue))],
        description="#project-updates heard who covers and how many tasks",
    )
    b.keep("projects", "tasks", done["gid"], "the completed task was left alone")
    b.keep("projects", "tasks", later["gid"], "the task that is not yet due stays with its owner")
    b.trap("stale", "last leave's cover", swap={cid: asana_user(b, past_cover)})
    b.trap("filter", "the task not due yet", swap={t1["gid"]: later["gid"]})
    b.trap("closed", "the completed overdue task", swap={t2["gid"]: done["gid"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"hand {away.name}'s overdue Asana tasks to their cover and let #project-updates know",
                f"move whatever {away.first} has open and overdue in Asana to the person covering for them, then post it in #project-updates",
            ),
            context=b.say(
                f"{away.first} started leave yesterday; the cover is on the wiki's leave plan",
                f"{away.name} is out for two weeks, and the wiki's leave plan names who covers",
            ),
        ),
        hint="List the person's Asana tasks, keep the open ones due before today, read their cover from the Confluence leave plan (this leave, not an earlier one), reassign those tasks and post who covers how many in #project-updates.",
        subtasks=[
            f"List {away.name}'s Asana tasks and keep the open, overdue ones",
            "Read the cover for this leave on the wiki",
            "Reassign each overdue task to the cover",
            "Post the cover and the number of tasks in #project-updates",
        ],
    )


def trello_board(b: Builder, name: str) -> dict[str, Any]:
    svc = b.svc("boards")
    for bd in svc.boards.all():
        if bd["name"] == name:
            return bd
    raise PlantError(f"no Trello board {name}")


def trello_list(b: Builder, board: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in b.svc("boards").lists.find(idBoard=board["id"]) if x["name"] == name)


def trello_card(b: Builder, lst: dict[str, Any], name: str, desc: str, days_ago: float) -> dict[str, Any]:
    svc = b.svc("boards")
    c = svc._card(lst, name, desc)
    return svc.cards.update(c["id"], {"dateLastActivity": ago(b, days=days_ago)})


def asana_project(b: Builder, name: str, team: int = 0) -> dict[str, Any]:
    svc = b.svc("projects")
    teams = svc.teams.all()
    return svc.projects.create(
        {
            "name": name,
            "workspace_gid": _ws(b),
            "team_gid": teams[team % len(teams)]["gid"] if teams else None,
            "owner_gid": asana_user(b, b.me),
            "created_at": ago(b, days=90),
        },
        id=_gid(b),
    )


# ---------------------------------------------------------------------------------------------
@family("projects.card_to_asana", "project_management", ("boards", "projects"))
def card_to_asana(b: Builder) -> None:
    """A customer launch starts: move its Trello card to Doing and open the Asana task for the card's owner."""
    cust, other = b.customer(), b.customer()
    pool = [p for p in b.company.employees if p.id != b.me.id]
    owner, old_owner, other_owner = b.fresh(pool, 3, key=lambda p: p.id)
    board = trello_board(b, "Customer launches")
    todo, doing, done = (trello_list(b, board, n) for n in ("To Do", "Doing", "Done"))
    due = (b.now + timedelta(days=b.rng.randrange(8, 20))).date().isoformat()
    old_due = (b.now - timedelta(days=80)).date().isoformat()
    name = f"Kickoff with {cust.name}"
    card = trello_card(b, todo, name, f"Owner: {owner.name}. Due: {due}.", 6)
    stale = trello_card(
        b,
        done,
        f"{name} (pilot)",
        f"Owner: {old_owner.name}. Due: {old_due}. Kickoff with {cust.name} done for the pilot.",
        1,
    )
    near = trello_card(b, todo, f"Kickoff with {other.name}", f"Owner: {other_owner.name}. Due: {due}.", 0.5)
    dup = trello_card(
        b,
        todo,
        f"{name} (duplicate)",
        "Duplicate of the kickoff card for this customer: do not move this card to Doing or open an Asana task for it.",
        3,
    )
    proj = asana_project(b, "Customer launches")
    b.begin()
    ws = b.call("projects__asana_get_workspaces", {})
    wid = next(w["gid"] for w in rows(ws) if w["is_organization"])
    users = b.call("projects__asana_get_users", {"workspace_id": wid, "limit": 100})
    boards = b.call("boards__trello_get_my_boards", {})
    bid = next(x["id"] for x in rows(boards) if x["name"] == "Customer launches")
    lists = b.call("boards__trello_get_board_lists", {"board_id": bid})
    lid = {x["name"]: x["id"] for x in rows(lists)}
    cards = b.call("boards__trello_get_list_cards", {"list_id": lid["To Do"]})
    c = next(x for x in rows(cards) if x["name"] == name)
    assert c["id"] == card["id"]
    b.call("boards__trello_update_card", {"card_id": c["id"], "idList": lid["Doing"]})
    uid = next(u["gid"] for u in rows(users) if u["name"] == owner.name)
    b.decide()
    made = b.call(
        "projects__asana_create_task",
        {
            "name": name,
            "workspace_id": wid,
            "project": "Customer launches",
            "assignee_id": uid,
            "due_date": due,
        },
    )
    assert made
    b.fact(owner.name)
    b.expect_record(
        "projects",
        "tasks",
        {
            "name": {"contains": cust.name},
            "assignee_gid": uid,
            "due_on": {"at": due},
            "project_gids": proj["gid"],
        },
        f"an Asana task for the {cust.name} kickoff in Customer launches, {owner.name}'s, due {due}",
    )
    b.expect_change("boards", "cards", card["id"], "idList", doing["id"], "the card is in Doing")
    b.keep("boards", "cards", stale["id"], "the finished pilot card was left alone")
    b.keep("boards", "cards", near["id"], "the other customer's card was left alone")
    b.keep("boards", "cards", dup["id"], "the duplicate card was left alone")
    b.trap("near_duplicate", "the duplicate card of the same kickoff", swap={card["id"]: dup["id"]})
    b.trap(
        "stale",
        "the finished pilot kickoff card and its owner",
        swap={card["id"]: stale["id"], uid: asana_user(b, old_owner)},
    )
    b.trap(
        "near_duplicate",
        "another customer's kickoff card",
        swap={card["id"]: near["id"], uid: asana_user(b, other_owner)},
    )
    b.write(
        frame(
            b.rng,
            b.say(
                f"kick off {cust.name}: move their card on the Customer launches board to Doing and open the matching task in the Customer launches project in Asana",
                f"start the {cust.name} kickoff: the Trello card goes to Doing and Asana gets a task for it in the Customer launches project",
            ),
            context=b.say(
                "The Asana task should go to the owner written on the card, with the card's due date",
                "Give the task to whoever the card names as owner, due when the card says",
            ),
        ),
        hint="Find the kickoff card in To Do on the Customer launches board (not the finished pilot card), read its owner and due date, create the Asana task for that owner in the Customer launches project, then move the card to Doing.",
        subtasks=[
            f"Find the {cust.name} kickoff card in To Do",
            "Read the owner and due date from the card",
            "Create the Asana task for the owner, due that day",
            "Move the card to Doing",
        ],
    )


SPRINT_WORK = (
    "Refactor the session store",
    "Add audit events for exports",
    "Fix flaky checkout test",
    "Cache feature flags at the edge",
    "Split the billing worker",
    "Remove the legacy search index",
    "Tighten CSP headers",
    "Backfill missing invoice ids",
)


def _lin_project(
    b: Builder, name: str, team_id: str, state: str, target_days: int, created_days: float
) -> dict[str, Any]:
    return b.svc("issues").projects.create(
        {
            "name": name,
            "description": f"{name}: two-week sprint",
            "team_ids": [team_id],
            "lead_id": _lin_user(b, b.me),
            "state": state,
            "target_date": (b.now + timedelta(days=target_days)).date().isoformat(),
            "created_at": ago(b, days=created_days),
        }
    )


def _lin_user(b: Builder, p) -> str:
    from compoworld.services.issues.seed import uid

    return uid(p.id)


# ---------------------------------------------------------------------------------------------
@family("projects.sprint_carry_over", "project_management", ("issues", "wiki", "chat"))
def sprint_carry_over(b: Builder) -> None:
    """The Engineering sprint closed: move its unfinished Linear issues to the next sprint (wiki rule: not
    the won't-fix ones), then post the carry-over in #eng-sprints."""
    from compoworld.tasks.families.engineering import _bump, lin_issue

    svc = b.svc("issues")
    eng = next(t for t in svc.teams.all() if t["key"] == "ENG")
    prd = next(t for t in svc.teams.all() if t["key"] == "PRD")
    n = b.rng.randrange(20, 60)
    ended = -b.rng.randrange(1, 4)
    old = _lin_project(b, f"Sprint {n - 1}", eng["id"], "completed", ended - 14, 45)
    closed = _lin_project(b, f"Sprint {n}", eng["id"], "completed", ended, 31)
    nxt = _lin_project(b, f"Sprint {n + 1}", eng["id"], "started", ended + 14, 17)
    later = _lin_project(b, f"Sprint {n + 2}", eng["id"], "planned", ended + 28, 2)
    other = _lin_project(b, f"Product sprint {n + 1}", prd["id"], "started", ended + 14, 16)
    page = (
        "<h1>Sprint process</h1><p>When a sprint closes, every unfinished issue in it (anything not Done or "
        "Canceled) moves to the next sprint, the one that follows it in number. Issues labelled wont-fix stay "
        "in the closed sprint for the product review. Post what carried over in #eng-sprints.</p>"
    )
    wiki_page(b, "ENG", "Sprint process", page, days_ago=60)
    _bump(b, b.rng.randrange(120, 400))
    work = b.rng.sample(SPRINT_WORK, 8)
    dev = [
        _lin_user(b, p)
        for p in b.company.employees
        if p.id != b.me.id and p.team in ("Engineering", "Product")
    ] or [_lin_user(b, b.me)]
    mk = lambda title, state, c, done=None, **kw: lin_issue(  # noqa: E731
        b, "ENG", title, state, c, done, project_id=closed["id"], assignee_id=b.pick(dev), **kw
    )
    carry = [mk(work[0], "In Progress", 12), mk(work[1], "Todo", 10), mk(work[2], "In Review", 8)]
    if b.rng.random() < 0.5:
        carry.append(mk(work[3], "Backlog", 11))
    done = mk(work[4], "Done", 13, -ended + 2)
    cancel = mk(work[5], "Canceled", 9)
    wontfix = mk(
        work[6], "Todo", -ended + 0.5, labels=["wont-fix"], description=f"{work[6]}. Won't fix: not worth it."
    )
    stale = lin_issue(b, "ENG", work[7], "Todo", 20, None, project_id=old["id"], labels=["wont-fix"])
    chan = chat_channel(b, "eng-sprints", topic="Sprint planning and carry-over")
    eng_ch = chat_channel(b, "eng")
    b.begin()
    teams = b.call("issues__linear_get_teams", {})
    tid = next(t["id"] for t in rows(teams) if t["key"] == "ENG")
    projs = b.call("issues__linear_get_projects", {"team_id": tid, "limit": 100})
    b.aggregate()
    sprints = [p for p in rows(projs) if p["name"].startswith("Sprint ")]
    last = max((p for p in sprints if p["state"] == "completed"), key=lambda p: p["target_date"])
    assert last["id"] == closed["id"]
    got = b.call(
        "issues__linear_get_issues", {"team_id": tid, "limit": 100, "filter": {"project": last["id"]}}
    )
    hits = b.call(
        "wiki__confluence_search_content", {"must_contain_all": ["sprint"], "can_contain_any": ["closes"]}
    )
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Sprint process")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    b.decide(2)
    num = int(last["name"].split()[1])
    target = next(p for p in sprints if p["name"] == f"Sprint {num + 1}")
    assert target["id"] == nxt["id"]
    moving = [
        i
        for i in rows(got)
        if i["state"]["type"] not in ("completed", "canceled") and "wont-fix" not in i["labels"]
    ]
    assert sorted(i["id"] for i in moving) == sorted(i["id"] for i in carry)
    for i in moving:
        b.call("issues__linear_update_issue", {"issue_id": i["id"], "project_id": target["id"]})
    chans = b.call("chat__slack_user_list_channels", {"channel_name": "eng-sprints"})
    cid = next(c["id"] for c in rows(chans) if c["name"] == "eng-sprints")
    idents = [i["identifier"] for i in moving]
    b.call(
        "chat__slack_user_post_message",
        {
            "channel_id": cid,
            "text": f"Carried {len(moving)} issues from {last['name']} to {target['name']}: {', '.join(idents)}.",
        },
    )
    b.composed(len(moving))
    b.fact(target["name"], *idents)
    for i in carry:
        b.expect_change(
            "issues", "issues", i["id"], "project_id", nxt["id"], f"{i['identifier']} moved to {nxt['name']}"
        )
    b.expect_message(
        "chat",
        chan,
        contains=[str(len(carry)), nxt["name"]],
        description="#eng-sprints heard how many issues carried over and where",
    )
    for i, why in (
        (wontfix, "the wont-fix issue stays in the closed sprint"),
        (done, "the finished issue stays in the closed sprint"),
        (cancel, "the canceled issue stays in the closed sprint"),
        (stale, "the older sprint's issue was left alone"),
    ):
        b.keep("issues", "issues", i["id"], why)
    b.no_message("chat", eng_ch, "nothing was posted in #eng")
    b.trap("policy_exception", "the unfinished issue labelled wont-fix", swap={carry[0]["id"]: wontfix["id"]})
    b.trap("closed", "the finished issue of the sprint", swap={carry[1]["id"]: done["id"]})
    b.trap("stale", "the sprint before", swap={carry[0]["id"]: stale["id"]})
    b.trap("recent", "the planned sprint after next", swap={nxt["id"]: later["id"]})
    b.trap("near_duplicate", "Product's sprint of the same number", swap={nxt["id"]: other["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                "carry the unfinished work of the Engineering sprint that just closed over to the next sprint in Linear",
                "roll over whatever didn't get finished in Engineering's last sprint into the next one in Linear",
                "the Engineering sprint in Linear just ended; move its leftover issues on to the next sprint",
            ),
            context=b.say(
                "Follow the sprint process page on the wiki and post the carry-over in #eng-sprints",
                "The wiki's sprint process has the rules; let #eng-sprints know what moved",
            ),
        ),
        hint="List Engineering's Linear projects, take the most recently ended completed sprint, list its issues, read the Confluence sprint process (wont-fix issues stay), move the unfinished ones to the sprint numbered next, and post the count and identifiers in #eng-sprints.",
        subtasks=[
            "Find the Engineering sprint that just closed and its issues",
            "Read the carry-over rule on the wiki",
            "Move the unfinished issues (not wont-fix) to the next sprint",
            "Post what carried over in #eng-sprints",
        ],
    )


def _next_friday(d):
    return d + timedelta(days=(4 - d.weekday()) % 7 or 7)


# ---------------------------------------------------------------------------------------------
@family("projects.busiest_launch_status", "project_management", ("projects", "wiki"))
def busiest_launch_status(b: Builder) -> None:
    """Which active launch project has the most open Asana tasks? Answer it and, per the wiki's
    portfolio rule, give its owner a status-update task due next Friday."""
    prods = [p.name for p in b.company.products]
    if len(prods) < 5:
        raise PlantError("too few products for a launch portfolio")
    names = b.rng.sample(prods, 5)
    if any(x != y and x.lower() in y.lower() for x in names for y in names):
        raise PlantError("one launch name contains another")
    pool = [p for p in b.company.employees if p.id != b.me.id]
    owners = b.fresh(pool, 5, key=lambda p: p.id)
    top = b.rng.randrange(5, 8)
    # (open, completed, archived, created days ago): the target, a bigger archived one, one with the
    # most tasks in all (mostly finished), a close second (the oldest launch: the target is neither
    # the newest nor the oldest project), a small newer one
    plan = [
        (top, 1, False, 50),
        (top + 2, 0, True, 8),
        (top - 2, 7, False, 30),
        (top - 1, 2, False, 75),
        (2, 0, False, 3),
    ]
    projs = []
    for i, (n_open, n_done, archived, made) in enumerate(plan):
        p = asana_project(b, f"Launch: {names[i]}", team=i)
        b.svc("projects").projects.update(
            p["gid"],
            {
                "owner_gid": asana_user(b, owners[i]),
                "archived": archived,
                "created_at": ago(b, days=made),
                "notes": "Archived: this launch is paused, so no weekly status update or portfolio review "
                "until the project is active again."
                if archived
                else "",
            },
        )
        tasks = b.rng.sample(WORK, min(len(WORK), n_open + n_done))
        while len(tasks) < n_open + n_done:
            tasks.append(f"{b.pick(WORK)} ({len(tasks)})")
        for k, t in enumerate(tasks):
            asana_task(
                b,
                f"{t} for {names[i]}",
                asana_user(b, b.pick(pool)),
                b.rng.randrange(-5, 20),
                project=p["gid"],
                completed=k >= n_open,
                created_days_ago=made - 1,
            )
        projs.append(p)
    target, archived_p, big, second, small = projs
    friday = _next_friday(b.now.date()).isoformat()
    rule = (
        "<h1>Launch portfolio review</h1><p>Each week the active (not archived) launch project with the most "
        "open tasks gets a task named 'Status update' in that project, assigned to the project owner and due "
        "the next Friday. Completed tasks do not count.</p>"
    )
    wiki_page(
        b,
        "OPS" if any(s["key"] == "OPS" for s in b.svc("wiki").spaces.all()) else "ENG",
        "Launch portfolio review",
        rule,
        days_ago=30,
    )
    b.begin()
    ws = b.call("projects__asana_get_workspaces", {})
    wid = next(w["gid"] for w in rows(ws) if w["is_organization"])
    got = b.call(
        "projects__asana_get_projects", {"workspace_id": wid, "limit": 100, "filter": {"name": "Launch"}}
    )
    live = [p for p in rows(got) if p["name"].startswith("Launch:") and not p["archived"]]
    counts = {}
    for p in live:
        d = b.call("projects__asana_get_project", {"project_id": p["gid"]})
        counts[p["gid"]] = d["num_tasks"] - d["num_completed_tasks"]
    b.aggregate()
    best = max(live, key=lambda p: counts[p["gid"]])
    assert best["gid"] == target["gid"]
    hits = b.call("wiki__confluence_search_content", {"must_contain_all": ["launch", "portfolio"]})
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Launch portfolio review")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    b.decide()
    b.call(
        "projects__asana_create_task",
        {
            "name": "Status update",
            "workspace_id": wid,
            "project": best["gid"],
            "assignee_id": best["owner_gid"],
            "due_date": friday,
        },
    )
    b.composed(friday)
    b.fact(best["name"])
    b.ask(
        best["name"],
        kind="text",
        alternates=(names[0],),
        exclude=tuple(p["name"] for p in (archived_p, big, second, small)),
        what="the busiest launch project",
    )
    b.expect_record(
        "projects",
        "tasks",
        {
            "name": {"contains": "Status update"},
            "project_gids": target["gid"],
            "assignee_gid": asana_user(b, owners[0]),
            "due_on": {"at": friday},
        },
        f"a 'Status update' task in {target['name']} for {owners[0].name}, due {friday}",
    )
    for p, why in (
        (archived_p, "the archived project"),
        (big, "the project with the most tasks in all"),
        (second, "the runner-up"),
        (small, "the newest project"),
    ):
        b.not_written("projects", p["gid"], f"no task was added to {why}", tables=["tasks"])
    b.trap(
        "stale",
        "the archived launch with more open tasks",
        swap={target["gid"]: archived_p["gid"], target["name"]: archived_p["name"]},
    )
    b.trap(
        "filter",
        "the launch with the most tasks counting finished ones",
        swap={target["gid"]: big["gid"], target["name"]: big["name"]},
    )
    b.trap(
        "recent",
        "the newest launch project",
        swap={target["gid"]: small["gid"], target["name"]: small["name"]},
    )
    b.trap(
        "near_duplicate", "the runner-up", swap={target["gid"]: second["gid"], target["name"]: second["name"]}
    )
    b.write(
        frame(
            b.rng,
            b.say(
                "tell me which of our launch projects in Asana is the busiest right now, and set up its weekly status update the way the portfolio review page says",
                "work out which active Launch project in Asana has the most open work and give it this week's status-update task per the wiki",
                "find the launch project with the most open tasks in Asana, tell me its name, and create the status update task the portfolio review rule asks for",
            ),
            context=b.say(
                "It's for the weekly launch portfolio review",
                "The review rules are on the wiki",
                "",
            ),
        ),
        hint="List the Launch projects in Asana, skip the archived one, count each one's open (incomplete) tasks, take the highest, read the Confluence portfolio review rule, and create 'Status update' in that project for its owner due next Friday; answer the project's name.",
        subtasks=[
            "List the active Launch projects",
            "Count the open tasks of each and take the busiest",
            "Read the portfolio review rule on the wiki",
            "Create the status update task for the project owner, due next Friday",
            "Reply with the project's name",
        ],
    )


def _cal_event(
    b: Builder, summary: str, start, minutes: int, guests: list[str], description: str = ""
) -> dict:
    cal = b.svc("calendar")
    return cal.insert(
        "events",
        {
            "id": cal.next_id("ev", 16),
            "calendar_id": b.me.email,
            "summary": summary,
            "description": description,
            "location": "",
            "start": b.iso(start),
            "end": b.iso(start + timedelta(minutes=minutes)),
            "attendees": [{"email": g, "responseStatus": "accepted"} for g in guests],
            "organizer": b.me.email,
            "visibility": "default",
            "recurrence": [],
            "hangoutLink": None,
            "status": "confirmed",
        },
    )


def _prev_business_day(d):
    d -= timedelta(days=1)
    while d.weekday() >= 5:
        d -= timedelta(days=1)
    return d


def _at(b: Builder, d, hour: int):
    from datetime import datetime, time

    return datetime.combine(d, time(hour), tzinfo=b.now.tzinfo)


# ---------------------------------------------------------------------------------------------
@family("projects.prep_before_review", "project_management", ("calendar", "projects"))
def prep_before_review(b: Builder) -> None:
    """A steering review was rescheduled: move its Asana prep task to the business day before the new
    date and make sure the task's assignee is invited to the review."""
    prods = [p.name for p in b.company.products]
    prod, prod2 = b.rng.sample(prods, 2)
    if prod.lower() in prod2.lower() or prod2.lower() in prod.lower():
        raise PlantError("product names overlap")
    pool = [p for p in b.company.employees if p.id != b.me.id]
    owner, other_owner, g1, g2, old_owner = b.fresh(pool, 5, key=lambda p: p.id)
    today = b.now.date()
    days = [today + timedelta(days=k) for k in range(6, 17)]
    mondays = [d for d in days if d.weekday() == 0]
    weekdays = [d for d in days if d.weekday() < 5]
    new = b.pick(mondays) if mondays and b.rng.random() < 0.4 else b.pick(weekdays)
    old = new - timedelta(days=b.rng.choice((3, 4, 5, 6)))
    if old <= today + timedelta(days=1):
        old = new + timedelta(days=7)
    while old.weekday() >= 5:
        old -= timedelta(days=1)
    due = _prev_business_day(new).isoformat()
    old_due_day = _prev_business_day(old)
    old_due = old_due_day.isoformat()
    ev = _cal_event(
        b,
        f"{prod} steering review",
        _at(b, new, b.rng.choice((10, 14, 15))),
        60,
        [g1.email, g2.email],
        description=f"Moved from {old.isoformat()} at the sponsor's request.",
    )
    prep_day = b.pick([d for d in weekdays if d < new] or [new])
    prep_ev = _cal_event(
        b,
        f"{prod} steering review deck prep",
        _at(b, prep_day, 9),
        45,
        [owner.email],
        description="Working session to prep the deck for the rescheduled steering review (not the review itself).",
    )
    other_day = b.pick([d for d in weekdays if d != new])
    ev2 = _cal_event(b, f"{prod2} steering review", _at(b, other_day, 11), 60, [other_owner.email, g1.email])
    task = asana_task(
        b,
        f"Prepare the {prod} steering review deck",
        asana_user(b, owner),
        (old_due_day - today).days,
        created_days_ago=12,
    )
    done = asana_task(
        b,
        f"Prepare the {prod} steering review deck (last quarter: review was rescheduled, prep done)",
        asana_user(b, old_owner),
        -85,
        completed=True,
        created_days_ago=100,
    )
    b.svc("projects").tasks.update(
        done["gid"],
        {"modified_at": ago(b, days=2), "notes": "Final deck attached for the archive."},
    )
    other = asana_task(
        b,
        f"Prepare the {prod2} steering review deck",
        asana_user(b, other_owner),
        (_prev_business_day(other_day) - today).days,
        created_days_ago=1,
    )
    b.begin()
    evs = b.call(
        "calendar__google_calendar_list_events",
        {
            "min_end_datetime": b.iso(b.now),
            "max_start_datetime": b.iso(b.now + timedelta(days=30)),
            "max_results": 200,
        },
    )
    e = next(x for x in rows(evs) if x["summary"] == f"{prod} steering review")
    assert e["id"] == ev["id"]
    b.decide()
    ws = b.call("projects__asana_get_workspaces", {})
    wid = next(w["gid"] for w in rows(ws) if w["is_organization"])
    found = b.call(
        "projects__asana_search_tasks",
        {"workspace_id": wid, "keywords": "steering review", "limit": 50},
    )
    t = next(x for x in rows(found) if not x["completed"] and prod in x["name"] and prod2 not in x["name"])
    assert t["gid"] == task["gid"]
    user = b.call("projects__asana_get_user", {"user_id": t["assignee_gid"]})
    b.decide()
    b.call("projects__asana_update_task", {"task_id": t["gid"], "due_date": due})
    b.call(
        "calendar__google_calendar_add_attendees_to_event",
        {"event_id": e["id"], "attendees": [user["email"]]},
    )
    b.composed(due)
    b.fact(owner.name, new.isoformat())
    b.expect_change("projects", "tasks", task["gid"], "due_on", due, f"the prep task is due {due}")
    b.goal(
        f"{owner.name} is invited to the {prod} steering review, nobody else added",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [g1.email, g2.email, owner.email],
            "names": [g1.name, g2.name, owner.name],
            "start": ev["start"],
            "summary_contains": f"{prod} steering review",
            "exclusive": True,
        },
    )
    b.keep("projects", "tasks", done["gid"], "last quarter's finished prep task was left alone")
    b.keep("projects", "tasks", other["gid"], "the other review's prep task was left alone")
    b.keep("calendar", "events", ev2["id"], "the other steering review was left alone")
    b.keep("calendar", "events", prep_ev["id"], "the deck prep session was left alone")
    b.trap("near_duplicate", "the deck prep working session", swap={ev["id"]: prep_ev["id"]})
    b.trap("closed", "last quarter's completed prep task", swap={task["gid"]: done["gid"]})
    b.trap("recent", "another product's review prep task", swap={task["gid"]: other["gid"]})
    b.trap("near_duplicate", "another product's steering review", swap={ev["id"]: ev2["id"]})
    b.trap("policy_exception", "due on the review day itself", swap={due: new.isoformat()})
    b.trap("stale", "the day before the old review date", swap={due: old_due})
    b.write(
        frame(
            b.rng,
            b.say(
                f"the {prod} steering review got rescheduled; move its prep task in Asana so it's due the business day before the new date, and make sure whoever has the task is invited",
                f"since the {prod} steering review moved, re-date the Asana task for preparing it to the last business day before the review and add its assignee to the meeting",
                f"fix up the prep for the rescheduled {prod} steering review: the Asana deck task should be due one business day before it, and the person doing it should be on the invite",
            ),
            context=b.say("The calendar has the new date", "", "Weekends don't count as business days"),
        ),
        hint="Find the review in the calendar (its new date), find the open prep task in Asana (not last quarter's completed one or another product's), set its due date to the business day before the review, look up the assignee's email and add them to the event.",
        subtasks=[
            f"Find the {prod} steering review's new date in the calendar",
            "Find the open prep task in Asana and its assignee",
            "Set the task's due date to the business day before the review",
            "Add the assignee to the review event",
        ],
    )
