"""Event skills: deterministic programs that leave a day's traces in a persona's world.

What the persona does goes through the agents' own tools (`Day.call`, `Day.shell`): sending and
replying to mail, posting in chat, booking meetings, logging CRM notes, working tickets, moving
cards, appending sheet rows, writing documents and exports in the workspace. What other people do
(a customer's reply, a colleague's message, a newsletter) arrives through the service's own record
helpers (`Day.arrive_mail`, `Day.arrive_chat`), as the outside world would write it.

A failed tool call raises `SkillError` naming the skill, so a rejected day says which activity
broke it. Skills keep their references (threads, tickets, deals, cards, files) in the ledger, which
is saved with every day: later days continue the same threads and read back earlier files.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from compoworld.core.environment import Environment
from compoworld.worlds.persona import Persona
from compoworld.worlds.prose import _SENT, prose  # noqa: F401  (re-exported: skills.prose)

SCALE = {"small": 0.12, "default": 0.35, "large": 1.0}  # activity volume per world size
CHUNK = 6000  # characters per shell append (the shell takes command lines up to 8 KiB)


class SkillError(RuntimeError):
    pass


@dataclass
class Day:
    """One day's context: the environment, who lives it, its date, its rng and the ledger."""

    env: Environment
    persona: Persona
    day: int
    date: datetime
    rng: random.Random
    ledger: dict[str, Any]
    size: str = "small"
    last: bool = False  # the last day of the horizon: the wrap-up
    events: int = 0  # tool calls and arrivals
    touched: set[str] = field(default_factory=set)  # services this day wrote to
    skill: str = ""

    @property
    def scale(self) -> float:
        return SCALE.get(self.size, SCALE["default"])

    def n(self, base: float, spread: float = 0.3) -> int:
        """How many of something today: `base` at size large, scaled, jittered, at least 1."""
        x = base * self.scale * (1 + self.rng.uniform(-spread, spread))
        return max(1, round(x))

    def has(self, service: str) -> bool:
        return service in self.env.services

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        r = self.env.call(tool, args)
        self.events += 1
        if not r["success"]:
            raise SkillError(f"{self.skill}: {tool} failed: {r['error']['message']}")
        if self.env.tool_spec(tool).mutates:
            self.touched.add(tool.split("__", 1)[0])
        return r["data"]

    def shell(self, command: str) -> str:
        out = self.call("workspace__shell", {"command": command})
        if out["exit_code"] != 0:
            raise SkillError(
                f"{self.skill}: shell `{command[:80]}` exited {out['exit_code']}: {out['stderr'].strip()}"
            )
        return out["stdout"]

    def write(self, path: str, text: str, append: bool = False) -> None:
        """Write a workspace file through the shell, in chunks the shell's line limit allows."""
        folder = path.rsplit("/", 1)[0]
        if "/" in path and folder not in self.ledger.setdefault("dirs", []):
            self.shell(f"mkdir -p {shlex.quote(folder)}")
            self.ledger["dirs"].append(folder)
        # echo ends every write with a line break, so chunks are whole lines
        chunks: list[str] = []
        for line in text.rstrip("\n").split("\n"):
            if chunks and len(chunks[-1]) + len(line) < CHUNK:
                chunks[-1] += "\n" + line
            else:
                chunks.append(line[:CHUNK])
        for i, part in enumerate(chunks):
            op = ">" if i == 0 and not append else ">>"
            self.shell(f"echo {shlex.quote(part)} {op} {shlex.quote(path)}")

    def iso(self, hour: int, minute: int = 0) -> str:
        return self.date.replace(hour=hour, minute=minute).strftime("%Y-%m-%dT%H:%M:%SZ")

    # ---- other people's actions --------------------------------------------------------
    def arrive_mail(self, sender: str, subject: str, body: str, thread: str | None = None) -> dict[str, Any]:
        svc = self.env.services["email"]
        when = self.date.replace(hour=7 + self.rng.randrange(11), minute=self.rng.randrange(60))
        rec = {
            "id": svc.next_id("m", 16),
            "threadId": thread or svc.next_id("t", 16),
            "from": sender,
            "to": [self.persona.email],
            "cc": [],
            "bcc": [],
            "subject": subject,
            "body": body,
            "htmlBody": None,
            "mimeType": "text/plain",
            "date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "labelIds": ["INBOX", "UNREAD"],
            "inReplyTo": None,
            "attachments": [],
        }
        svc.insert("messages", rec)
        svc.store.commit()
        self.events += 1
        self.touched.add("email")
        return rec

    def arrive_chat(self, channel: str, text: str, thread_ts: str | None = None) -> None:
        svc = self.env.services["chat"]
        members = [m for m in svc.table("channels")[channel]["members"] if m != svc._me and m[0] == "U"]
        if not members:
            return
        svc._post(members[self.rng.randrange(len(members))], channel, text, thread_ts)
        svc.store.commit()
        self.events += 1
        self.touched.add("chat")


# ---- text ---------------------------------------------------------------------------------
_OPEN = (
    "Following up on",
    "Quick note about",
    "As discussed, here is where we are with",
    "Sharing the latest on",
    "Circling back on",
)


def first(name: str) -> str:
    return name.split()[0]


# ---- setup: the persona's standing structures (day 1) -------------------------------------
def setup(d: Day) -> str:
    """Standing structures later days rely on: a team channel, a board, a tracker sheet, and the
    recurring meetings (a weekly 1:1 and a daily stand-up) whose notes accumulate in the workspace."""
    led = d.ledger
    made = []
    if d.has("chat") and "channel" not in led:
        svc = d.env.services["chat"]
        mine = [
            c["id"]
            for c in svc.table("channels").values()
            if svc._me in c["members"] and not c["is_archived"] and not c["is_im"]
        ]
        if mine:
            led["channel"] = mine[0]
            made.append("team channel")
    if d.has("boards") and "board" not in led:
        b = d.call(
            "boards__trello_create_board", {"name": f"{first(d.persona.name)}'s work", "desc": "My board"}
        )
        led["board"] = {x["name"]: x["id"] for x in b["lists"]}
        made.append("board")
    if d.has("sheets") and "sheet" not in led:
        s = d.call("sheets__google_sheets_create_spreadsheet", {"title": "Story tracker"})
        led["sheet"], led["sheet_tab"] = s["spreadsheet_id"], s["sheets"][0]
        d.call(
            "sheets__google_sheets_append_rows",
            {"spreadsheet_id": led["sheet"], "rows": [["date", "story", "customer", "event", "amount"]]},
        )
        made.append("tracker sheet")
    if d.has("calendar") and "series" not in led:
        led["series"] = []
        for title, rule, hour in (
            ("1:1 with manager", "RRULE:FREQ=WEEKLY;BYDAY=MO", 9),
            ("Team stand-up", "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", 10),
        ):
            ev = d.call(
                "calendar__google_calendar_create_event",
                {
                    "summary": title,
                    "start_datetime": d.iso(hour),
                    "end_datetime": d.iso(hour, 30),
                    "recurrence": [rule],
                },
            )
            led["series"].append({"id": ev["event"]["id"], "title": title, "days": rule.split("BYDAY=")[1]})
        made.append("recurring meetings")
    return "set up " + (", ".join(made) or "nothing new")


# ---- routine skills (habits) -----------------------------------------------------------------
def inbox(d: Day, s: dict[str, Any] | None) -> str:
    """Mail arrives (contacts in open threads, colleagues, newsletters) and the persona answers some."""
    if not d.has("email"):
        return "no mailbox"
    stories = [x for x in d.ledger["stories"] if x.get("thread") and not x.get("closed")]
    people = d.persona.contacts or [d.persona.email]
    arrived = []
    for _ in range(d.n(65)):
        if stories and d.rng.random() < 0.6:
            st = stories[d.rng.randrange(len(stories))]
            body = f"Hi {first(d.persona.name)},\n\n{prose(d.rng, 80 + d.rng.randrange(300))}\n\nBest,\n{st['contact_name']}"
            quoted = "\n".join("> " + line for line in st.get("last_body", "").splitlines()[:30])
            rec = d.arrive_mail(st["contact"], "Re: " + st["subject"], body + "\n\n" + quoted, st["thread"])
            st["last_msg"], st["last_body"] = rec["id"], body
            arrived.append(rec)
        else:
            who = people[d.rng.randrange(len(people))]
            arrived.append(
                d.arrive_mail(
                    who,
                    f"{d.rng.choice(_OPEN)} {d.rng.choice(['pricing', 'timeline', 'the pilot', 'next steps'])}",
                    prose(d.rng, 80 + d.rng.randrange(150)),
                )
            )
    for _ in range(d.n(10)):
        d.arrive_mail(
            "digest@news.example.com",
            f"Industry digest {d.date:%Y-%m-%d}",
            "\n\n".join(f"## {i + 1}. {d.rng.choice(_SENT)}\n{prose(d.rng, 200)}" for i in range(8)),
        )
    replies = 0
    weekend = d.date.weekday() >= 5 and "answers email first thing" not in d.persona.habits
    for rec in arrived[: 0 if weekend else d.n(8)]:
        d.call(
            "email__gmail_send_email",
            {
                "to": [rec["from"]],
                "subject": rec["subject"] if rec["subject"].startswith("Re:") else "Re: " + rec["subject"],
                "body": f"Thanks, noted. {prose(d.rng, 40)}",
                "inReplyTo": rec["id"],
            },
        )
        replies += 1
    if arrived:
        d.call("email__gmail_modify_email", {"messageId": arrived[0]["id"], "removeLabelIds": ["UNREAD"]})
    return f"{len(arrived)} mails in, {replies} answered"


def chat_day(d: Day, s: dict[str, Any] | None) -> str:
    """Colleagues talk in the team channel; the persona posts the daily update and answers a thread."""
    ch = d.ledger.get("channel")
    if not d.has("chat") or not ch:
        return "no team channel"
    for _ in range(d.n(60)):
        d.arrive_chat(ch, d.rng.choice(_SENT))
    open_ = [x for x in d.ledger["stories"] if not x.get("closed")]
    text = f"Update {d.date:%a %d %b}: " + "; ".join(
        f"{x['customer']} {x['kind'].replace('_', ' ')} at stage {x['stage']}" for x in open_[:6]
    )
    post = d.call("chat__slack_user_post_message", {"channel_id": ch, "text": text or "No open items."})
    ts = post["ts"]
    if ts and d.rng.random() < 0.7:
        d.arrive_chat(ch, "Thanks for the update!", ts)
        d.call(
            "chat__slack_user_reply_to_thread",
            {"channel_id": ch, "thread_ts": ts, "text": "Will keep you posted."},
        )
    return f"posted the daily update in {ch}"


def meetings(d: Day, s: dict[str, Any] | None) -> str:
    """Today's occurrences of the recurring meetings leave notes, one file per meeting."""
    code = d.date.strftime("%a").upper()[:2]
    done = []
    for series in d.ledger.get("series", []):
        if code not in series["days"]:
            continue
        slug = series["title"].lower().replace(" ", "-").replace(":", "")
        lines = [f"# {series['title']} {d.date:%Y-%m-%d}", ""]
        lines += [
            f"- {x['customer']}: {d.rng.choice(_SENT)}" for x in d.ledger["stories"] if not x.get("closed")
        ]
        lines += ["", prose(d.rng, d.n(250))]
        d.write(f"Documents/meetings/{slug}/{d.date:%Y-%m-%d}.md", "\n".join(lines))
        done.append(series["title"])
    return ("notes of " + ", ".join(done)) if done else "no recurring meeting today"


def focus_block(d: Day, s: dict[str, Any] | None) -> str:
    if not d.has("calendar"):
        return "no calendar"
    d.call(
        "calendar__google_calendar_create_event",
        {"summary": "Focus time", "start_datetime": d.iso(14), "end_datetime": d.iso(16)},
    )
    return "blocked focus time"


def daily_export(d: Day, s: dict[str, Any] | None) -> str:
    """Export today's activity to a dated CSV; the weekly report reads these back."""
    rows = ["date,story,customer,kind,stage,amount"]
    for x in d.ledger["stories"]:
        if x.get("closed") and x["closed"] < d.day:  # what is still moving (a day's cost, not history's)
            continue
        for _ in range(d.n(700)):
            rows.append(
                f"{d.date:%Y-%m-%d},{x['id']},{x['customer'].replace(',', ' ')},{x['kind']},{x['stage']},"
                f"{d.rng.randrange(100, 9000)}.{d.rng.randrange(100):02d}"
            )
    path = f"Documents/exports/activity-{d.date:%Y-%m-%d}.csv"
    d.write(path, "\n".join(rows) + "\n")
    d.ledger.setdefault("exports", []).append(path)
    return f"exported {len(rows) - 1} rows to {path}"


def weekly_report(d: Day, s: dict[str, Any] | None) -> str:
    """Read back the week's exports through the shell, total them, write and send the report."""
    week = [p for p in d.ledger.get("exports", [])[-5:]]
    if not week:
        return "no exports to report on"
    totals: dict[str, float] = {}
    for path in week:
        out = d.shell(f"csv select story,amount {shlex.quote(path)}")
        for line in out.splitlines()[1:]:
            story, _, amount = line.partition(",")
            try:
                totals[story] = totals.get(story, 0.0) + float(amount)
            except ValueError:
                continue
    lines = [f"# Week ending {d.date:%Y-%m-%d}", "", "| story | total |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in sorted(totals.items())]
    lines += ["", prose(d.rng, d.n(300))]
    path = f"Documents/reports/week-{d.date:%Y-%m-%d}.md"
    d.write(path, "\n".join(lines))
    d.ledger.setdefault("reports", []).append(path)
    if d.has("email"):
        d.call(
            "email__gmail_send_email",
            {
                "to": [d.persona.contacts[0] if d.persona.contacts else d.persona.email],
                "subject": f"Weekly report {d.date:%Y-%m-%d}",
                "body": "\n".join(lines[:40]),
            },
        )
    return f"weekly report over {len(week)} exports: {len(totals)} stories"


def wrap_up(d: Day, s: dict[str, Any] | None) -> str:
    """The horizon's last day: a month-end review that reads back every weekly report and export."""
    reports = d.ledger.get("reports", [])
    seen = 0
    for path in reports:
        seen += len(d.shell(f"cat {shlex.quote(path)}").splitlines())
    grand = 0
    for path in d.ledger.get("exports", []):
        grand += int(d.shell(f"wc -l {shlex.quote(path)}").split()[0]) - 1
    body = [
        f"# Month-end review {d.date:%Y-%m-%d}",
        "",
        f"Exports: {grand} rows; weekly reports: {len(reports)} ({seen} lines)",
        "",
    ]
    for x in d.ledger["stories"]:
        state = f"closed on day {x['closed']}" if x.get("closed") else f"open at stage {x['stage']}"
        body.append(f"## {x['customer']} ({x['kind'].replace('_', ' ')}, {x['code']}): {state}")
        body.append(prose(d.rng, d.n(200)))
    d.write(f"Documents/reports/month-end-{d.date:%Y-%m-%d}.md", "\n\n".join(body))
    for x in d.ledger["stories"]:
        if not x.get("closed"):
            advance(d, x)
    # month-end bookkeeping in every tool the persona keeps
    if d.has("sheets") and d.ledger.get("sheet"):
        rows = [
            [f"{d.date:%Y-%m-%d}", x["id"], x["customer"], "month-end", str(x["stage"])]
            for x in d.ledger["stories"]
        ]
        d.call(
            "sheets__google_sheets_append_rows",
            {"spreadsheet_id": d.ledger["sheet"], "rows": rows, "sheet_name": d.ledger["sheet_tab"]},
        )
    if d.has("boards") and d.ledger.get("board"):
        d.call(
            "boards__trello_create_card",
            {
                "idList": d.ledger["board"]["Done"],
                "name": f"Month-end review {d.date:%Y-%m}",
                "desc": prose(d.rng, 80),
            },
        )
    if d.has("crm"):
        d.call(
            "crm__hubspot_create_note",
            {
                "note_body": f"Month-end review {d.date:%Y-%m-%d}: {len(d.ledger['stories'])} story lines. {prose(d.rng, 60)}"
            },
        )
    if d.has("helpdesk"):
        for x in d.ledger["stories"]:
            if x.get("ticket"):
                d.call(
                    "helpdesk__freshdesk_add_note_to_ticket",
                    {
                        "ticket_id": x["ticket"],
                        "body": "Month-end review: " + prose(d.rng, 30),
                        "private": True,
                    },
                )
    return f"month-end review of {len(d.ledger['stories'])} story lines"


# ---- story skills: each advances one story line ----------------------------------------------
def email_thread(d: Day, s: dict[str, Any]) -> str:
    """Write in the story's thread (the first time, start it); the contact's answers come later."""
    if not d.has("email"):
        return crm_note(d, s) if d.has("crm") else file_report(d, s)
    body = f"Hi {first(s['contact_name'])},\n\n{d.rng.choice(_OPEN)} {s['code']}.\n\n{prose(d.rng, d.n(180))}\n\nThanks,\n{d.persona.name}"
    args: dict[str, Any] = {"to": [s["contact"]], "subject": s["subject"], "body": body}
    if s.get("last_msg"):
        args["inReplyTo"] = s["last_msg"]
        args["subject"] = "Re: " + s["subject"]
    r = d.call("email__gmail_send_email", args)
    s["thread"], s["last_msg"], s["last_body"] = r["threadId"], r["messageId"], body
    return f"wrote to {s['contact']} about {s['code']}"


def meeting_with_notes(d: Day, s: dict[str, Any]) -> str:
    title = f"{s['customer']} sync ({s['code']})"
    hour = 11 + d.rng.randrange(5)
    if d.has("calendar"):  # without a calendar the meeting still leaves its notes
        d.call(
            "calendar__google_calendar_create_event",
            {
                "summary": title,
                "start_datetime": d.iso(hour),
                "end_datetime": d.iso(hour + 1),
                "attendees": [s["contact"]],
            },
        )
    note = f"## {d.date:%Y-%m-%d} {title}\nWith {s['contact_name']}.\n{prose(d.rng, d.n(150))}\n"
    d.write(
        f"Documents/customers/{slug(s['customer'])}/{s['id']}-notes.md",
        note,
        append=f"{s['id']}-notes" in s.get("files", ""),
    )
    s["files"] = s.get("files", "") + f"{s['id']}-notes;"
    return f"met {s['contact_name']} and saved notes"


def crm_note(d: Day, s: dict[str, Any]) -> str:
    """A CRM note on the story's deal (opened the first time), and the deal's stage moves on."""
    if not d.has("crm"):
        return email_thread(d, s) if d.has("email") else file_report(d, s)
    if not s.get("deal"):
        deal = d.call(
            "crm__hubspot_create_deal",
            {
                "properties": {
                    "dealname": f"{s['customer']} {s['kind'].replace('_', ' ')} {s['code']}",
                    "amount": str(1000 * (5 + d.rng.randrange(90))),
                    "dealstage": "appointmentscheduled",
                }
            },
        )
        s["deal"] = deal.get("id")
    stages = (
        "appointmentscheduled",
        "qualifiedtobuy",
        "presentationscheduled",
        "decisionmakerboughtin",
        "contractsent",
    )
    d.call(
        "crm__hubspot_update_deal_by_id",
        {"deal_id": s["deal"], "updates": {"dealstage": stages[min(s["stage"], len(stages) - 1)]}},
    )
    d.call(
        "crm__hubspot_create_note",
        {
            "note_body": f"{d.date:%Y-%m-%d}: spoke with {s['contact_name']} about {s['code']}. {prose(d.rng, d.n(60))}",
            "deal_ids": [s["deal"]],
        },
    )
    return f"logged a CRM note on {s['code']}"


def ticket_work(d: Day, s: dict[str, Any]) -> str:
    """The story's ticket: opened by the customer, then replies and notes, solved at the end."""
    if not d.has("helpdesk"):
        return crm_note(d, s) if d.has("crm") else email_thread(d, s)
    if not s.get("ticket"):
        t = d.call(
            "helpdesk__freshdesk_create_ticket",
            {
                "subject": f"{s['customer']}: {s['code']}",
                "description": prose(d.rng, d.n(120)),
                "email": s["contact"],
                "priority": 2 + d.rng.randrange(3),
            },
        )
        s["ticket"] = t["id"]
    d.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {"ticket_id": s["ticket"], "body": f"Hi {first(s['contact_name'])}, {prose(d.rng, d.n(80))}"},
    )
    d.call(
        "helpdesk__freshdesk_add_note_to_ticket",
        {"ticket_id": s["ticket"], "body": prose(d.rng, d.n(40)), "private": True},
    )
    if d.has("chat") and d.ledger.get("channel") and s["stage"] == 1:
        d.call(
            "chat__slack_user_post_message",
            {"channel_id": d.ledger["channel"], "text": f"Escalated {s['code']} for {s['customer']}."},
        )
    return f"worked ticket {s['ticket']} ({s['code']})"


def ticket_escalation(d: Day, s: dict[str, Any]) -> str:
    return ticket_work(d, s)


def board_card(d: Day, s: dict[str, Any]) -> str:
    """The story's card on the persona's board moves To Do -> Doing -> Done as stages pass."""
    lists = d.ledger.get("board")
    if not d.has("boards") or not lists:
        return file_report(d, s)
    if not s.get("card"):
        c = d.call(
            "boards__trello_create_card",
            {"idList": lists["To Do"], "name": f"{s['customer']} {s['code']}", "desc": prose(d.rng, 40)},
        )
        s["card"] = c["id"]
    where = "Done" if s.get("closing") else "Doing"
    d.call(
        "boards__trello_update_card",
        {"card_id": s["card"], "idList": lists[where], "desc": prose(d.rng, d.n(60))},
    )
    return f"moved card {s['code']} to {where}"


def sheet_row(d: Day, s: dict[str, Any]) -> str:
    sid = d.ledger.get("sheet")
    if not d.has("sheets") or not sid:
        return file_report(d, s)
    rows = [
        [f"{d.date:%Y-%m-%d}", s["id"], s["customer"], f"stage {s['stage']}", f"{d.rng.randrange(100, 9000)}"]
        for _ in range(d.n(12))
    ]
    d.call(
        "sheets__google_sheets_append_rows",
        {"spreadsheet_id": sid, "rows": rows, "sheet_name": d.ledger["sheet_tab"]},
    )
    return f"logged {len(rows)} rows for {s['code']}"


def doc_draft(d: Day, s: dict[str, Any]) -> str:
    """A document for the story (proposal, plan, review), revised on later days."""
    path = f"Documents/customers/{slug(s['customer'])}/{s['kind']}-{s['code']}.md"
    text = f"# {s['customer']}: {s['kind'].replace('_', ' ')} ({s['code']})\nRevision of {d.date:%Y-%m-%d}\n\n{prose(d.rng, d.n(3000))}\n"
    d.write(path, text)
    s["doc"] = path
    return f"revised {path}"


def file_report(d: Day, s: dict[str, Any]) -> str:
    """Append the day's line for the story to its CSV (read back by the wrap-up)."""
    path = f"Documents/reports/{s['id']}.csv"
    new = s.get("csv") != path
    line = f"day{d.day},{s['code']},{d.rng.randrange(100, 9000)}.{d.rng.randrange(0, 99):02d}"
    d.write(path, ("day,code,amount\n" if new else "") + line, append=not new)
    s["csv"] = path
    return f"added a line to {path}"


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")


def advance(d: Day, s: dict[str, Any]) -> str:
    """One stage of a story line: its kind's skill for this stage; the last stage closes it."""
    s["stage"] += 1
    arc = ARCS.get(s["kind"], ARCS["renewal"])
    s["closing"] = s["stage"] >= s["stages"]
    name = arc[(s["stage"] - 1) % len(arc)]
    d.skill = name
    out = STORY_SKILLS[name](d, s)
    if s["closing"]:
        s["closed"] = d.day
        if d.has("email") and s.get("last_msg"):
            d.call(
                "email__gmail_send_email",
                {
                    "to": [s["contact"]],
                    "subject": "Re: " + s["subject"],
                    "body": f"Closing this out: {s['code']} is done. Thank you!",
                    "inReplyTo": s["last_msg"],
                },
            )
    return out


# a story kind's arc: which skill each stage uses, cycling over its length
ARCS: dict[str, tuple[str, ...]] = {
    "customer_escalation": (
        "ticket_work",
        "email_thread",
        "ticket_work",
        "meeting_with_notes",
        "doc_draft",
        "ticket_work",
    ),
    "renewal": ("email_thread", "crm_note", "meeting_with_notes", "doc_draft", "crm_note", "sheet_row"),
    "onboarding": (
        "email_thread",
        "board_card",
        "meeting_with_notes",
        "doc_draft",
        "board_card",
        "sheet_row",
    ),
    "quarterly_review": ("email_thread", "doc_draft", "crm_note", "meeting_with_notes", "file_report"),
    "vendor_order": ("email_thread", "sheet_row", "board_card", "file_report", "email_thread"),
    "hiring_loop": ("email_thread", "meeting_with_notes", "board_card", "doc_draft", "meeting_with_notes"),
}

Skill = Callable[[Day, Any], str]
STORY_SKILLS: dict[str, Skill] = {
    "email_thread": email_thread,
    "meeting_with_notes": meeting_with_notes,
    "crm_note": crm_note,
    "ticket_escalation": ticket_escalation,
    "ticket_work": ticket_work,
    "board_card": board_card,
    "sheet_row": sheet_row,
    "doc_draft": doc_draft,
    "file_report": file_report,
}
ROUTINE_SKILLS: dict[str, Skill] = {
    "setup": lambda d, s: setup(d),
    "inbox": inbox,
    "chat_day": chat_day,
    "meetings": meetings,
    "focus_block": focus_block,
    "daily_export": daily_export,
    "weekly_report": weekly_report,
    "wrap_up": wrap_up,
}


def _compiled_work(d: Day, s: dict[str, Any] | None) -> str:
    from compoworld.worlds.compiled import compiled_work

    return compiled_work(d, s)


ROUTINE_SKILLS["compiled_work"] = _compiled_work
SKILLS: dict[str, Skill] = {**STORY_SKILLS, **ROUTINE_SKILLS}
# the services a skill writes to when the persona has them (the planner's vocabulary)
SKILL_SERVICES: dict[str, tuple[str, ...]] = {
    "email_thread": ("email",),
    "meeting_with_notes": ("calendar", "workspace"),
    "crm_note": ("crm",),
    "ticket_escalation": ("helpdesk", "chat"),
    "ticket_work": ("helpdesk", "chat"),
    "board_card": ("boards",),
    "sheet_row": ("sheets",),
    "doc_draft": ("workspace",),
    "file_report": ("workspace",),
    "inbox": ("email",),
    "chat_day": ("chat",),
    "meetings": ("workspace",),
    "focus_block": ("calendar",),
    "daily_export": ("workspace",),
    "weekly_report": ("workspace", "email"),
    "wrap_up": ("workspace",),
    "setup": ("chat", "boards", "sheets", "calendar"),
    "compiled_work": (),  # the persona's compiled services that fit (`worlds.compiled`)
}
