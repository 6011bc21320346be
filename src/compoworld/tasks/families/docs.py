"""Docs and compliance workflows: retention, acknowledgements, registers and links kept by written policy."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

VENDORS = (
    "Northwind Freight",
    "Brightline Print",
    "Quanta Cleaning",
    "Apex Couriers",
    "Meridian Catering",
    "Polar IT Services",
    "Harbor Security",
    "Summit Office Supply",
    "Bluebird Translations",
    "Granite Facilities",
)


def _team_space(b: Builder) -> dict[str, Any]:
    team = next(t for t in b.company.teams if t.name == b.me.team)
    hits = b.svc("wiki").spaces.find(lambda s: s["key"] == team.slug.upper()[:10])
    if not hits:
        raise PlantError("no team space")
    return hits[0]


def _wiki_page(
    b: Builder, space: dict[str, Any], title: str, content: str, days_ago: float = 20
) -> dict[str, Any]:
    ts = format_time(b.now - timedelta(days=days_ago))
    return b.svc("wiki").pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": content,
            "parent_id": space.get("homepage_id"),
            "author_id": b.me.email,
            "created_at": ts,
            "updated_at": ts,
        }
    )


def _folder(b: Builder, path: str) -> None:
    fs = b.svc("files")
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        p = "/" + "/".join(parts[:i])
        if not fs.entries.get(p.lower()):
            fs._put_folder(p)


def _file(b: Builder, path: str, content: str, days_ago: float) -> dict[str, Any]:
    _folder(b, path.rsplit("/", 1)[0])
    return b.svc("files")._put_file(path, content, format_time(b.now - timedelta(days=days_ago)))


def _years_back(d: date, n: int) -> date:
    try:
        return d.replace(year=d.year - n)
    except ValueError:
        return d.replace(year=d.year - n, day=28)


@family("docs.contract_retention_archive", "docs_compliance", ("wiki", "files"))
def contract_retention_archive(b: Builder) -> None:
    """Archive the vendor contracts past the wiki's retention period, except the one under legal hold; log it."""
    if b.svc("files").entries.get("/legal"):
        raise PlantError("a /Legal folder exists")
    years = b.pick((3, 5, 7))
    today = b.now.date()
    cutoff = _years_back(today, years)
    names = b.pick(VENDORS, 5)
    due = names[:2]
    hold, inside, active = names[2], names[3], names[4]
    ended = {
        due[0]: cutoff - timedelta(days=b.rng.randrange(200, 900)),
        due[1]: cutoff - timedelta(days=b.rng.randrange(20, 150)),
        hold: cutoff - timedelta(days=b.rng.randrange(100, 700)),
        inside: cutoff + timedelta(days=b.rng.randrange(15, 60)),
    }
    matter = b.code("LH")
    files = {}
    mods = {due[0]: 400, due[1]: 300, inside: 120, active: 60, hold: 2}
    for v in names:
        if v == active:
            body = f"Vendor: {v}\nServices agreement\nTerm ends: {(today + timedelta(days=b.rng.randrange(90, 600))).isoformat()}\n"
        else:
            body = f"Vendor: {v}\nServices agreement\nTerm ended: {ended[v].isoformat()}\n"
        if v == hold:
            body += f"Note: legal hold {matter} placed by Legal; do not move or delete.\n"
        files[v] = _file(b, f"/Legal/Contracts/{v} agreement.txt", body, days_ago=mods[v])
    _folder(b, "/Legal/Archive")
    space = _team_space(b)
    policy = _wiki_page(
        b,
        space,
        "Contract retention policy",
        f"<p>Vendor contracts stay in /Legal/Contracts for {years} years after their term ends; after that they are "
        "moved to /Legal/Archive (same file name). Contracts whose term has not ended stay where they are.</p>"
        f"<p>Legal hold: contracts under a legal hold are never moved or deleted, whatever their age. Current holds: "
        f"{hold} (matter {matter}).</p><p>Record every archiving run on the page 'Records retention log' with the "
        "date and the files moved.</p>",
        days_ago=90,
    )
    log = _wiki_page(
        b, space, "Records retention log", "<ul><li>Retention log started.</li></ul>", days_ago=40
    )
    b.begin()
    hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": ["retention"], "limit": 10}))
    pid = next(p["id"] for p in hits if p["title"] == "Contract retention policy")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    listing = rows(b.call("files__dropbox_list_folder", {"path": "/Legal/Contracts"}))
    texts = {}
    for e in listing:
        if e[".tag"] == "file":
            texts[e["path_display"]] = b.call("files__dropbox_download_file", {"path": e["path_display"]})[
                "content"
            ]
    move = []
    for path, text in sorted(texts.items()):
        line = next((x for x in text.splitlines() if x.startswith("Term ended: ")), None)
        if line is None or "legal hold" in text.lower():
            continue
        if date.fromisoformat(line.split(": ")[1]) < cutoff:
            move.append(path)
    b.decide(2)
    assert sorted(move) == sorted(files[v]["path_display"] for v in due)
    dest = {p: "/Legal/Archive/" + p.rsplit("/", 1)[1] for p in move}
    b.composed(*dest.values())
    with b.together():
        for p in move:
            b.call("files__dropbox_move_file", {"from_path": p, "to_path": dest[p]})
    moved = [p.rsplit("/", 1)[1] for p in move]
    b.call(
        "wiki__confluence_update_page_content",
        {
            "page_identifier": "Records retention log",
            "content": f"<p>{today.isoformat()}: moved to /Legal/Archive: {', '.join(moved)}</p>",
            "update_mode": "append",
        },
    )
    for v in due:
        low = files[v]["path_lower"]
        b.expect_record(
            "files",
            "entries",
            {"path_lower": "/legal/archive/" + low.rsplit("/", 1)[1], "tag": "file"},
            f"{v}'s contract is in /Legal/Archive",
        )
        b.goal(
            f"{v}'s contract is no longer in /Legal/Contracts",
            {
                "predicate": "record_absent",
                "service": "files",
                "table": "entries",
                "new": False,
                "where": {"path_lower": low},
            },
        )
    b.expect_record(
        "wiki",
        "pages",
        {"id": log["id"], "content": {"contains_all": list(due)}},
        "the run is logged with the files moved",
    )
    b.keep("files", "entries", files[hold]["path_lower"], "the contract under legal hold stays put")
    b.keep(
        "files", "entries", files[inside]["path_lower"], "a contract still inside the retention period stays"
    )
    b.keep("files", "entries", files[active]["path_lower"], "a running contract stays")
    b.keep("wiki", "pages", policy["id"], "the policy page is not edited")
    b.trap(
        "policy_exception",
        "an old contract under legal hold (and the most recently modified)",
        swap={
            files[due[0]]["path_display"]: files[hold]["path_display"],
            dest[files[due[0]]["path_display"]]: "/Legal/Archive/" + files[hold]["name"],
        },
    )
    b.trap(
        "near_duplicate",
        "a contract that ended just inside the retention period",
        swap={
            files[due[1]]["path_display"]: files[inside]["path_display"],
            dest[files[due[1]]["path_display"]]: "/Legal/Archive/" + files[inside]["name"],
        },
    )
    b.fact(*due)
    ask = b.say(
        "run this month's contract retention: archive the vendor contracts that are past our retention period and log the run, as the wiki policy says",
        "clean up /Legal/Contracts per our contract retention policy on the wiki, moving whatever has expired its retention to the archive, and log it",
        "apply the contract retention policy to the vendor contracts in Dropbox and record what you archived",
    )
    b.write(
        frame(b.rng, ask, context=b.say("Legal asked for it before the audit", "", "Mind any legal holds")),
        hint="Read the retention policy on the wiki (years, archive folder, legal holds), list /Legal/Contracts in Dropbox and read each contract's end date, move those that ended before the cutoff and are not on hold to /Legal/Archive, then append the run to the retention log.",
        subtasks=[
            "Read the contract retention policy",
            "List the contracts and read their term end dates",
            "Work out which ended before the retention cutoff, skipping legal holds",
            "Move them to /Legal/Archive",
            "Log the run on the retention log page",
        ],
    )


POLICIES = ("Expense policy", "Travel policy", "Remote work policy", "Information security policy")


def _base(b: Builder, name: str) -> dict[str, Any]:
    svc = b.svc("bases")
    hit = next((x for x in svc.bases.all() if x["name"] == name), None)
    return hit or svc.bases.create({"name": name}, id="app" + svc.next_id("", 14))


def _bases_table(
    b: Builder, base: dict[str, Any], table: str, desc: str, fields: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, str]]:
    svc = b.svc("bases")
    t = svc._create_table(base["id"], table, desc, fields)
    return t, {f["name"]: f["id"] for f in svc.fields.find(table_id=t["id"])}


def _bases_row(
    b: Builder, t: dict[str, Any], fid: dict[str, str], values: dict[str, Any], days_ago: float
) -> dict[str, Any]:
    svc = b.svc("bases")
    return svc.records.create(
        {
            "table_id": t["id"],
            "createdTime": format_time(b.now - timedelta(days=days_ago)),
            "fields": {fid[k]: v for k, v in values.items()},
        },
        id="rec" + svc.next_id("", 14),
    )


def _text_fields(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "type": "singleLineText"} for n in names]


@family("docs.policy_ack_requests", "docs_compliance", ("wiki", "bases", "files"))
def policy_ack_requests(b: Builder) -> None:
    """A policy was revised: add pending acknowledgement rows for the team it applies to, skipping who has one."""
    teams = [t for t in b.company.teams if t.name != b.me.team and t.member_ids]
    big = [t for t in teams if len(t.member_ids) >= 2]
    if len(big) < 2 or len(teams) < 3:
        raise PlantError("need three other teams")
    covered = b.pick(big, 2)
    other_team = b.pick([t for t in teams if t not in covered])
    for tm in covered:
        if not b.svc("files").entries.get(f"/teams/{tm.name.lower()}/members.txt"):
            raise PlantError("no members file")
    members = [b.company.person(m) for tm in covered for m in tm.member_ids]
    if len(members) > 10:
        raise PlantError("too many people for one create call")
    outsiders = [b.company.person(m) for m in other_team.member_ids]
    team_names = f"{covered[0].name} and {covered[1].name}"
    policy, other_policy = b.pick(POLICIES, 2)
    ver = b.rng.randrange(3, 6)
    v, v_old = f"v{ver}", f"v{ver - 1}"
    revised = (b.now - timedelta(days=b.rng.randrange(1, 4))).date().isoformat()
    base = _base(b, "Compliance")
    t, fid = _bases_table(
        b,
        base,
        "Policy acknowledgements",
        "One row per person and policy version",
        [
            *_text_fields("Policy", "Version", "Name", "Email", "Status"),
            {"name": "Requested", "type": "date"},
        ],
    )
    old_day = (b.now - timedelta(days=b.rng.randrange(200, 300))).date().isoformat()
    for k, p in enumerate(members):
        row = {"Policy": policy, "Version": v_old, "Name": p.name, "Email": p.email, "Status": "Acknowledged"}
        _bases_row(b, t, fid, {**row, "Requested": old_day}, days_ago=250 - k)
    done = members[b.rng.randrange(len(members))]
    pending = _bases_row(
        b,
        t,
        fid,
        {
            "Policy": policy,
            "Version": v,
            "Name": done.name,
            "Email": done.email,
            "Status": "Acknowledged",
            "Requested": revised,
        },
        days_ago=0.5,
    )
    stray = outsiders[0]
    newest = _bases_row(
        b,
        t,
        fid,
        {
            "Policy": other_policy,
            "Version": "v2",
            "Name": stray.name,
            "Email": stray.email,
            "Status": "Pending",
            "Requested": b.now.date().isoformat(),
        },
        days_ago=0.1,
    )
    space = _team_space(b)
    page = _wiki_page(
        b,
        space,
        policy,
        f"<p><b>Version {ver}</b>, revised {revised}.</p><p>Applies to: the {team_names} teams (each team's member "
        "list is in Dropbox).</p><p>Everyone this policy applies to acknowledges each new version: add a row per person to "
        "the Airtable table 'Policy acknowledgements' (Compliance base) with the policy, the version as "
        f"v&lt;number&gt;, name, email, Status 'Pending' and the request date. Nobody needs a second row for the same "
        "version.</p>",
        days_ago=2,
    )
    _wiki_page(
        b,
        space,
        f"{other_policy}",
        f"<p>Version 2.</p><p>Applies to: the {other_team.name} team.</p>",
        days_ago=30,
    )
    b.begin()
    pg = b.call("wiki__confluence_get_page", {"page_identifier": policy})
    assert pg["id"] == page["id"]
    bases = rows(b.call("bases__airtable_list_bases_info", {}))
    bid = next(x["id"] for x in bases if x["name"] == "Compliance")
    tables = rows(b.call("bases__airtable_list_tables_info", {"base_id": bid}))
    tid = next(x["id"] for x in tables if x["name"] == "Policy acknowledgements")
    recs = rows(b.call("bases__airtable_list_records", {"base_id": bid, "table_id": tid}))
    have = {
        r["fields"].get("Email")
        for r in recs
        if r["fields"].get("Policy") == policy and r["fields"].get("Version") == v
    }
    found = rows(b.call("files__dropbox_search_files", {"query": "members", "filename_only": True}))
    paths = [
        next(m["path_display"] for m in found if m["path_lower"] == f"/teams/{tm.name.lower()}/members.txt")
        for tm in covered
    ]
    text = "".join(b.call("files__dropbox_download_file", {"path": p})["content"] for p in paths)
    people = []
    for line in text.splitlines():
        if "<" in line:
            name, email = line.split(" <")
            people.append((name.strip(), email.rstrip(">").strip()))
    todo = [(n, e) for n, e in people if e not in have]
    b.decide(2)
    assert {e for _, e in todo} == {p.email for p in members if p.id != done.id}
    today = b.now.date().isoformat()
    b.composed(v, today)
    b.call(
        "bases__airtable_create_records",
        {
            "base_id": bid,
            "table_id": tid,
            "records": [
                {
                    "fields": {
                        "Policy": policy,
                        "Version": v,
                        "Name": n,
                        "Email": e,
                        "Status": "Pending",
                        "Requested": today,
                    }
                }
                for n, e in todo
            ],
        },
    )
    for p in members:
        if p.id == done.id:
            continue
        b.expect_record(
            "bases",
            "records",
            {
                f"fields.{fid['Email']}": p.email,
                f"fields.{fid['Version']}": v,
                f"fields.{fid['Policy']}": policy,
                f"fields.{fid['Status']}": "Pending",
            },
            f"{p.name} has a pending {v} acknowledgement row",
        )
    b.guard(
        f"{done.name}, who already acknowledged {v}, gets no second row",
        {
            "predicate": "record_absent",
            "service": "bases",
            "table": "records",
            "new": True,
            "where": {f"fields.{fid['Email']}": done.email},
        },
    )
    for p in outsiders:
        b.guard(
            f"{p.name} of another team gets no row",
            {
                "predicate": "record_absent",
                "service": "bases",
                "table": "records",
                "new": True,
                "where": {f"fields.{fid['Email']}": p.email},
            },
        )
    b.keep("bases", "records", pending["id"], "the existing acknowledgement is untouched")
    b.keep("bases", "records", newest["id"], "another policy's row is untouched")
    swapped = next(p for p in members if p.id != done.id)
    b.trap(
        "near_duplicate",
        "another team's member list",
        swap={
            paths[0]: f"/Teams/{other_team.name}/members.txt",
            swapped.email: outsiders[-1].email,
            swapped.name: outsiders[-1].name,
        },
    )
    b.trap(
        "recent",
        "the newest row, another policy and team",
        swap={swapped.email: stray.email, swapped.name: stray.name},
    )
    b.fact(covered[0].name, covered[1].name, v)
    ask = b.say(
        f"the {policy} on the wiki was just revised: get acknowledgements going for everyone it applies to, the way the page says",
        f"set up the acknowledgement requests for the new version of our {policy}, for the people it covers",
        f"make sure everyone covered by the revised {policy} has an acknowledgement request in the tracker",
    )
    b.write(
        frame(b.rng, ask, context=b.say("Compliance chased me about it", "", "The page explains how")),
        hint="Read the policy page for the version and the team it applies to, check the acknowledgements table in the Compliance base for rows of this version, get the team's member list from Dropbox, and add a Pending row for each member who has none.",
        subtasks=[
            "Read the revised policy page (version, team)",
            "Check the existing acknowledgement rows for this version",
            "Get the team's member list from Dropbox",
            "Add a Pending row for each member without one",
        ],
    )
