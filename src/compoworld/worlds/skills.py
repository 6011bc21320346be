"""Event skills: deterministic programs that leave a day's traces through the agents' own tools.

Each skill takes (env, persona, story, day, rng) and makes tool calls; a failed call raises
`SkillError` naming the skill, so a rejected day says which activity broke it.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Callable
from typing import Any

from compoworld.core.environment import Environment
from compoworld.worlds.persona import Persona


class SkillError(RuntimeError):
    pass


def _call(env: Environment, skill: str, tool: str, args: dict[str, Any]) -> Any:
    r = env.call(tool, args)
    if not r["success"]:
        raise SkillError(f"{skill}: {tool} failed: {r['error']['message']}")
    return r["data"]


def _shell(env: Environment, skill: str, command: str) -> None:
    out = _call(env, skill, "workspace__shell", {"command": command})
    if out["exit_code"] != 0:
        raise SkillError(f"{skill}: shell `{command}` exited {out['exit_code']}: {out['stderr'].strip()}")


def email_thread(env: Environment, p: Persona, s: dict[str, Any], day: int, rng: random.Random) -> str:
    subject = f"{s['customer']}: {s['kind'].replace('_', ' ')} ({s['code']})"
    body = f"Hi {s['contact_name'].split()[0]}, following up on {s['code']} (day {day}). " + rng.choice(
        [
            "Can we confirm the next steps?",
            "I attached the summary we discussed.",
            "Let me know what you think.",
        ]
    )
    _call(
        env,
        "email_thread",
        "email__gmail_send_email",
        {"to": [s["contact"]], "subject": subject, "body": body},
    )
    return f"emailed {s['contact']} about {s['code']}"


def meeting_with_notes(env: Environment, p: Persona, s: dict[str, Any], day: int, rng: random.Random) -> str:
    start = env.clock.now().replace(hour=10 + rng.randrange(6), minute=0, second=0)
    end = start.replace(hour=start.hour + 1)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    title = f"{s['customer']} sync ({s['code']})"
    if "calendar" in env.services:  # without a calendar the meeting still leaves its notes
        _call(
            env,
            "meeting_with_notes",
            "calendar__google_calendar_create_event",
            {
                "summary": title,
                "start_datetime": start.strftime(fmt),
                "end_datetime": end.strftime(fmt),
                "attendees": [s["contact"]],
            },
        )
    note = f"{start.date()} {title}: agreed on next steps with {s['contact_name']}"
    _shell(
        env,
        "meeting_with_notes",
        f"mkdir -p Documents/meetings && echo {shlex.quote(note)} >> Documents/meetings/{s['id']}-notes.txt",
    )
    return f"met {s['contact_name']} and saved notes"


def ticket_escalation(env: Environment, p: Persona, s: dict[str, Any], day: int, rng: random.Random) -> str:
    if "helpdesk" not in env.services:
        return crm_note(env, p, s, day, rng)
    _call(
        env,
        "ticket_escalation",
        "helpdesk__freshdesk_create_ticket",
        {
            "subject": f"{s['customer']} escalation {s['code']}",
            "description": f"Raised on day {day} by {p.name}.",
            "email": s["contact"],
            "priority": 3,
        },
    )
    if "chat" in env.services:
        chans = _call(env, "ticket_escalation", "chat__slack_user_list_channels", {"limit": 50})
        items = chans.get("channels", chans) if isinstance(chans, dict) else chans
        text = f"Escalated {s['code']} for {s['customer']}."
        # post where the persona is a member: a refused post changes nothing, so try in order
        if not any(
            env.call("chat__slack_user_post_message", {"channel_id": c["id"], "text": text})["success"]
            for c in items
        ):
            raise SkillError("ticket_escalation: no channel accepted the escalation post")
    return f"escalated {s['code']}"


def crm_note(env: Environment, p: Persona, s: dict[str, Any], day: int, rng: random.Random) -> str:
    if "crm" not in env.services:
        return email_thread(env, p, s, day, rng)
    _call(
        env,
        "crm_note",
        "crm__hubspot_create_note",
        {
            "note_body": f"Day {day}: spoke with {s['contact_name']} about {s['code']} ({s['kind'].replace('_', ' ')})."
        },
    )
    return f"logged a CRM note on {s['code']}"


def file_report(env: Environment, p: Persona, s: dict[str, Any], day: int, rng: random.Random) -> str:
    amount = f"{rng.randrange(100, 9000)}.{rng.randrange(0, 99):02d}"
    _shell(env, "file_report", "mkdir -p Documents/reports")
    path = f"Documents/reports/{s['id']}.csv"
    _shell(env, "file_report", f"touch {path}")
    line = f"day{day},{s['code']},{amount}"
    _shell(env, "file_report", f"echo {shlex.quote(line)} >> {path}")
    return f"added a line to {path}"


SKILLS: dict[str, Callable[[Environment, Persona, dict[str, Any], int, random.Random], str]] = {
    "email_thread": email_thread,
    "meeting_with_notes": meeting_with_notes,
    "ticket_escalation": ticket_escalation,
    "crm_note": crm_note,
    "file_report": file_report,
}
