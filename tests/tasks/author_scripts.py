"""Scripted authors for the task-author tests: one good proposal and the bad ones the gates catch.

The skeleton of seed 0, index 0 with `--services chat,email --k 2 --distractors 1` is
chat -> email -> chat over Slack and Gmail (plus a distractor); the designs below are written for
that world (Liam Hansen's company, Slack #ops is CBPJ6N3JL7M)."""

from __future__ import annotations

import copy
from typing import Any

FINANCE = "CBPJ6N3JL7M"  # #ops, where Liam is a member
JULIA = "julia.novak@tidewaterlabs.com"
PO, OLD_PO = "PO-48213", "PO-48231"

GOOD: dict[str, Any] = {
    "instruction": f"Please email Julia Novak ({JULIA}) the purchase order number for this year's Halvorsen "
    "renewal that was shared in Slack, then confirm in that Slack channel that you sent it.",
    "plant": [
        {
            "insert": {
                "service": "chat",
                "table": "messages",
                "key": "ts",
                "record": {
                    "ts": "1772400000.000901",
                    "channel": FINANCE,
                    "user": "UE1007",
                    "text": f"Halvorsen renewal for 2026 is signed, the purchase order is {PO}.",
                    "thread_ts": None,
                    "reply_count": 0,
                    "reactions": {},
                },
            }
        },
        {
            "insert": {
                "service": "chat",
                "table": "messages",
                "key": "ts",
                "record": {
                    "ts": "1740800000.000902",
                    "channel": FINANCE,
                    "user": "UE1007",
                    "text": f"Halvorsen renewal for 2025 is signed, the purchase order is {OLD_PO}.",
                    "thread_ts": None,
                    "reply_count": 0,
                    "reactions": {},
                },
            }
        },
    ],
    "reference": [
        {"tool": "chat__slack_user_search_messages", "arguments": {"query": "Halvorsen renewal"}},
        {
            "tool": "email__gmail_send_email",
            "arguments": {
                "to": [JULIA],
                "subject": "Halvorsen renewal purchase order",
                "body": f"Hi Julia, the purchase order for the Halvorsen renewal is {PO}.",
            },
        },
        {
            "tool": "chat__slack_user_post_message",
            "arguments": {
                "channel_id": "${ref.0.messages.0.channel_id}",
                "text": "Sent the Halvorsen PO to Julia.",
            },
        },
    ],
    "rubric": [
        {
            "predicate": "message_sent",
            "service": "email",
            "to": [JULIA, "Julia Novak"],
            "contains": [PO],
            "exclusive": True,
            "exclude": [OLD_PO],
            "description": "Julia got this year's PO",
        },
        {
            "predicate": "message_sent",
            "service": "chat",
            "to": FINANCE,
            "contains": ["Julia"],
            "description": "the channel was told",
        },
        {
            "predicate": "record_unchanged",
            "service": "chat",
            "table": "messages",
            "key": "1740800000.000902",
            "kind": "guard",
            "description": "last year's message is left alone",
        },
    ],
    "traps": [{"kind": "stale", "description": "last year's purchase order", "swap": {PO: OLD_PO}}],
    "answer": None,
    "hint": "Search Slack for the Halvorsen renewal, take the 2026 PO, email Julia, confirm in the channel.",
    "subtasks": ["Find the 2026 PO in Slack", "Email it to Julia", "Confirm in the channel"],
}


def variant(kind: str) -> dict[str, Any]:
    d = copy.deepcopy(GOOD)
    if kind == "leak":  # the instruction gives away the fact the agent has to find
        d["instruction"] = d["instruction"].replace("the purchase order number", f"the purchase order {PO}")
    elif kind == "unknown_predicate":
        d["rubric"][1] = {"predicate": "channel_was_pleased", "service": "chat", "description": "vibes"}
    elif kind == "label":  # the trap says it is the wrong one instead of evidence showing it
        d["plant"][1]["insert"]["record"]["text"] += " (superseded, do not use)"
    elif kind == "ungrounded":  # the reference emails the PO without ever looking it up
        d["reference"][0]["arguments"]["query"] = "lunch"
        d["reference"][2]["arguments"]["channel_id"] = FINANCE
    return d
