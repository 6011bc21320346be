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
                f"{away.first} started leave yesterday; the cover is on the wiki's leave plan. Leave anything not yet due with {away.first}",
                f"{away.name} is out for two weeks. Only overdue, unfinished work moves, and the wiki's leave plan names who covers",
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
