"""Docs and compliance workflows: retention, acknowledgements, registers and links kept by written policy."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import bases_row as _bases_row
from compoworld.tasks.families._common import bases_table as _bases_table
from compoworld.tasks.families._common import rows
from compoworld.tasks.families._common import team_space as _team_space
from compoworld.tasks.families._common import wiki_page as _wiki_page
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


@family("docs.dpa_register_sync", "docs_compliance", ("wiki", "workspace", "bases"))
def dpa_register_sync(b: Builder) -> None:
    """Bring the Airtable data-processing register in line with procurement's vendor list; flag missing DPAs."""
    ws = b.svc("workspace")
    fname = f"vendor-list-{b.now.strftime('%Y-%m')}.csv"
    path = f"/home/user/Downloads/{fname}"
    if ws.entries.get(path):
        raise PlantError("vendor list exists")
    signed_now, new_missing, old_missing, no_pd, new_signed, twin_of = b.pick(VENDORS, 6)
    twin = f"{signed_now} Data Services"
    day = lambda n: (b.now - timedelta(days=n)).date().isoformat()  # noqa: E731
    lines = [
        "vendor,service,processes_personal_data,dpa_signed",
        f"{signed_now},Payroll processing,yes,{day(b.rng.randrange(3, 20))}",
        f"{new_missing},Customer support outsourcing,yes,",
        f"{old_missing},Email marketing,yes,",
        f"{no_pd},Office cleaning,no,",
        f"{new_signed},Cloud backup,yes,{day(b.rng.randrange(30, 200))}",
    ]
    body = [lines[0], *b.rng.sample(lines[1:], len(lines) - 1)]
    ws.write_file(path, "\n".join(body) + "\n")
    _base(b, "Vendor register archive")  # the old register: no live table
    base = _base(b, "Compliance")
    t, fid = _bases_table(
        b,
        base,
        "Data processing register",
        "Vendors that process personal data, with their DPA status",
        _text_fields("Vendor", "Service", "DPA status", "Flag"),
    )
    r_signed = _bases_row(
        b,
        t,
        fid,
        {"Vendor": signed_now, "Service": "Payroll processing", "DPA status": "Missing", "Flag": "Needs DPA"},
        90,
    )
    r_twin = _bases_row(
        b,
        t,
        fid,
        {"Vendor": twin, "Service": "Payroll processing", "DPA status": "Missing", "Flag": "Needs DPA"},
        5,
    )
    r_old = _bases_row(
        b,
        t,
        fid,
        {"Vendor": old_missing, "Service": "Email marketing", "DPA status": "Missing", "Flag": "Needs DPA"},
        60,
    )
    r_other = _bases_row(
        b, t, fid, {"Vendor": twin_of, "Service": "Analytics", "DPA status": "Signed", "Flag": ""}, 120
    )
    space = _team_space(b)
    policy = _wiki_page(
        b,
        space,
        "Data processing register rules",
        "<p>Every vendor that processes personal data has one row in the Airtable table 'Data processing register' "
        "(Compliance base). Vendors that do not process personal data are not registered.</p><p>DPA status is "
        "'Signed' when procurement's vendor list gives a signing date, otherwise 'Missing'. Rows with a missing DPA "
        "carry the Flag 'Needs DPA'; signed rows have an empty Flag.</p><p>After each update, list every vendor "
        "flagged 'Needs DPA' on the page 'DPA follow-ups'.</p>",
        days_ago=70,
    )
    log = _wiki_page(
        b, space, "DPA follow-ups", "<ul><li>Follow-ups are chased by Legal every Friday.</li></ul>", 20
    )
    b.begin()
    hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": ["register"], "limit": 10}))
    pid = next(p["id"] for p in hits if p["title"] == "Data processing register rules")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    out = b.call("workspace__shell", {"command": "ls Downloads"})["stdout"]
    assert fname in out
    csv = b.call("workspace__shell", {"command": f"cat Downloads/{fname}"})["stdout"]
    vendors = {}
    for line in csv.strip().splitlines()[1:]:
        v, svc_, pd, signed = line.split(",")
        if pd == "yes":
            vendors[v] = (svc_, "Signed" if signed else "Missing")
    bases = rows(b.call("bases__airtable_list_bases_info", {}))
    bid = next(x["id"] for x in bases if x["name"] == "Compliance")
    tables = rows(b.call("bases__airtable_list_tables_info", {"base_id": bid}))
    tid = next(x["id"] for x in tables if x["name"] == "Data processing register")
    recs = rows(b.call("bases__airtable_list_records", {"base_id": bid, "table_id": tid}))
    by_name = {r["fields"].get("Vendor"): r for r in recs}
    b.decide(2)
    updates, creates = [], []
    for v, (svc_, st) in vendors.items():
        flag = "Needs DPA" if st == "Missing" else ""
        r = by_name.get(v)
        if r is None:
            creates.append({"fields": {"Vendor": v, "Service": svc_, "DPA status": st, "Flag": flag}})
        elif r["fields"].get("DPA status") != st or (r["fields"].get("Flag") or "") != flag:
            updates.append({"id": r["id"], "fields": {"DPA status": st, "Flag": flag}})
    assert [u["id"] for u in updates] == [r_signed["id"]]
    assert sorted(c["fields"]["Vendor"] for c in creates) == sorted((new_missing, new_signed))
    with b.together():
        b.call("bases__airtable_update_records", {"base_id": bid, "table_id": tid, "records": updates})
        b.call("bases__airtable_create_records", {"base_id": bid, "table_id": tid, "records": creates})
    flagged = sorted(
        [v for v, (_, st) in vendors.items() if st == "Missing"]
        + [n for n, r in by_name.items() if n not in vendors and r["fields"].get("Flag") == "Needs DPA"]
    )
    b.aggregate()
    b.call(
        "wiki__confluence_update_page_content",
        {
            "page_identifier": "DPA follow-ups",
            "content": f"<p>{b.now.date().isoformat()} — vendors flagged Needs DPA: {', '.join(flagged)}</p>",
            "update_mode": "append",
        },
    )
    b.expect_change(
        "bases", "records", r_signed["id"], f"fields.{fid['DPA status']}", "Signed", f"{signed_now} is Signed"
    )
    b.expect_record(
        "bases",
        "records",
        {"id": r_signed["id"], f"fields.{fid['Flag']}": {"empty": True}},
        f"{signed_now}'s flag is cleared",
    )
    b.expect_record(
        "bases",
        "records",
        {
            f"fields.{fid['Vendor']}": new_missing,
            f"fields.{fid['DPA status']}": "Missing",
            f"fields.{fid['Flag']}": "Needs DPA",
        },
        f"{new_missing} is registered and flagged Needs DPA",
    )
    b.expect_record(
        "bases",
        "records",
        {f"fields.{fid['Vendor']}": new_signed, f"fields.{fid['DPA status']}": "Signed"},
        f"{new_signed} is registered as Signed",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": log["id"], "content": {"contains_all": [new_missing, old_missing, twin]}},
        "the follow-up page lists every vendor flagged Needs DPA",
    )
    b.guard(
        f"{no_pd} (no personal data) is not registered",
        {
            "predicate": "record_absent",
            "service": "bases",
            "table": "records",
            "new": True,
            "where": {f"fields.{fid['Vendor']}": no_pd},
        },
    )
    b.keep("bases", "records", r_twin["id"], f"{twin}, another vendor, is untouched")
    b.keep("bases", "records", r_old["id"], f"{old_missing}, still missing, needs no edit")
    b.keep("bases", "records", r_other["id"], "a vendor not on the list is untouched")
    b.keep("wiki", "pages", policy["id"], "the rules page is not edited")
    b.trap(
        "near_duplicate", f"{twin}, a similarly named vendor (newer row)", swap={r_signed["id"]: r_twin["id"]}
    )
    b.trap("policy_exception", "a vendor that processes no personal data", swap={new_missing: no_pd})
    b.fact(signed_now, new_missing, new_signed)
    ask = b.say(
        "procurement dropped the latest vendor list in my Downloads: bring our data-processing register in Airtable in line with it per the wiki rules, and update the DPA follow-ups",
        "update the data processing register from the new vendor list in my Downloads, flagging vendors without a signed DPA the way our wiki says",
        "sync the Airtable data-processing register with this month's vendor list (it is in my Downloads folder), following our register rules on the wiki",
    )
    b.write(
        frame(b.rng, ask, context=b.say("Legal chases the follow-ups on Friday", "", "")),
        hint="Read the register rules on the wiki, read the vendor list CSV in ~/Downloads, compare it with the Data processing register in the Compliance base, update changed rows and add missing vendors that process personal data, then list every vendor flagged Needs DPA on the DPA follow-ups page.",
        subtasks=[
            "Read the data processing register rules",
            "Read the vendor list in Downloads",
            "Compare it with the register rows",
            "Update changed rows and add the missing vendors",
            "List the vendors flagged Needs DPA on the follow-ups page",
        ],
    )


GUIDES = (
    ("remote-work-guide", "Remote work guide", "People handbook"),
    ("expense-claims-guide", "Expense claims guide", "Finance FAQ"),
    ("security-basics", "Security basics", "New starter checklist"),
    ("brand-guidelines", "Brand guidelines", "Marketing playbook"),
)


@family("docs.fix_moved_file_link", "docs_compliance", ("wiki", "files"))
def fix_moved_file_link(b: Builder) -> None:
    """A wiki page links to a Dropbox file that moved: share the current version and fix the link."""
    slug_, title, page_title = b.pick(GUIDES)
    if b.svc("files").entries.get("/policies") or b.svc("files").entries.get("/archive"):
        raise PlantError("folders exist")
    ver = b.rng.randrange(3, 7)
    folder = b.pick(("Published", "Library", "Documents"))
    old_path = f"/HR/Handbook/{slug_}.txt"
    _folder(b, "/HR/Handbook")
    cur = _file(
        b,
        f"/Policies/{folder}/{slug_}.txt",
        f"{title}\nVersion: {ver}\nApproved and published.\n",
        days_ago=b.rng.randrange(20, 60),
    )
    arch = _file(
        b,
        f"/Archive/{b.now.year - 1}/{slug_}.txt",
        f"{title}\nVersion: {ver - 1}\nApproved and published.\n",
        days_ago=b.rng.randrange(150, 300),
    )
    draft = _file(
        b,
        f"/Drafts/{slug_}-next-version-draft.txt",
        f"{title}\nVersion: {ver + 1} (DRAFT, not approved)\n",
        days_ago=1,
    )
    space = _team_space(b)
    content = (
        f'<p>Welcome! Before your first week, read the <a href="{old_path}">{title}</a> (version {ver}).</p>'
        "<p>Questions go to your manager.</p>"
    )
    page = _wiki_page(b, space, page_title, content, days_ago=100)
    conv = _wiki_page(
        b,
        space,
        "Wiki conventions",
        "<p>Link Dropbox documents with a shared link to the approved version, never a draft or an archived copy.</p>",
        days_ago=200,
    )
    b.begin()
    pg = b.call("wiki__confluence_get_page", {"page_identifier": page_title})
    body = pg["content"] if isinstance(pg.get("content"), str) else pg["body"]
    assert old_path in body
    found = rows(b.call("files__dropbox_search_files", {"query": slug_, "filename_only": True}))
    vers = {}
    for m in found:
        text = b.call("files__dropbox_download_file", {"path": m["path_display"]})["content"]
        vers[m["path_display"]] = text
    pick = next(p for p, t in vers.items() if f"Version: {ver}\n" in t)
    assert pick == cur["path_display"]
    b.decide()
    url = b.call("files__dropbox_share_file", {"path": pick})["id"]
    b.call(
        "wiki__confluence_update_page_content",
        {"page_identifier": pg["id"], "content": body.replace(old_path, url), "update_mode": "replace"},
    )
    b.expect_record(
        "files",
        "shared_links",
        {"path_lower": cur["path_lower"]},
        "the current version has a shared link",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": page["id"], "content": {"contains": "dropbox.com/s/"}},
        "the page links the shared link",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": page["id"], "content": {"not_contains": old_path}},
        "the broken path is gone from the page",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": page["id"], "content": {"contains": "Questions go to your manager"}},
        "the rest of the page is kept",
    )
    for f, why in ((arch, "the archived copy"), (draft, "the draft")):
        b.guard(
            f"{why} is not shared",
            {
                "predicate": "record_absent",
                "service": "files",
                "table": "shared_links",
                "new": True,
                "where": {"path_lower": f["path_lower"]},
            },
        )
        b.keep("files", "entries", f["path_lower"], f"{why} is untouched")
    b.keep("wiki", "pages", conv["id"], "the conventions page is not edited")
    b.trap("recent", "a newer draft of the guide", swap={cur["path_display"]: draft["path_display"]})
    b.trap(
        "stale",
        "last year's archived copy with the same file name",
        swap={cur["path_display"]: arch["path_display"]},
    )
    b.fact(cur["path_display"])
    ask = b.say(
        f"point the broken {title} link on our {page_title} wiki page (the file moved in Dropbox) at the current approved version, with a shared link",
        f"fix the dead {title} link on the {page_title} page; the document was moved in Dropbox, so link the version the page refers to via a shared link",
        f"repair the {page_title} page's link to the {title}, which moved in Dropbox, to the current version as our wiki conventions say",
    )
    b.write(
        frame(b.rng, ask, context=b.say("New starters keep asking about it", "", "")),
        hint="Read the page for the old link and the version it cites, search Dropbox for the file name, read the candidates to find that version (not the draft or the archive), create a shared link for it and replace the old path in the page with the link.",
        subtasks=[
            "Read the page and the version it cites",
            "Search Dropbox for the moved file",
            "Pick the copy with that version",
            "Create a shared link",
            "Replace the broken link on the page",
        ],
    )
