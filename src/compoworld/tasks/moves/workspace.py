"""Workspace moves: a local note file that carries a fact (found with grep); saving a fact to a file."""

from __future__ import annotations

import re
import shlex

from compoworld.services.workspace.service import HOME
from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40]


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("workspace")
    folder = "Documents/archive" if decoy else "Documents/notes"
    path = f"{HOME}/{folder}/{_slug(key_text(key))}.txt"
    if svc.read_file(path) is not None:
        path = path.removesuffix(".txt") + f"-{g.rng.randrange(1000)}.txt"
    svc.write_file(path, f"Re {key_text(key)}: {text}\n")  # one line, so grep shows the fact
    return [("workspace__shell", {"command": f"grep -r -i {shlex.quote(key_text(key))} Documents"})]


def _save(g: Gen, fact: Fact) -> WriteStep:
    path = f"{HOME}/Documents/followup-{g.rng.randrange(1000, 9999)}.txt"
    rel = path.removeprefix(HOME + "/")
    return WriteStep(
        calls=[("workspace__shell", {"command": f"echo {shlex.quote(fact.value)} >> {rel}"})],
        checks=[
            (
                f"the local file {rel} holds it",
                {
                    "predicate": "record_exists",
                    "service": "workspace",
                    "table": "entries",
                    "where": {"id": path, "content": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "workspace", "table": "entries", "key": path}],
        phrase=f"save {{it}} in the local file ~/{rel}",
    )


MOVES = [
    Relay(
        "workspace",
        "note_file",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the note file",
        "in my local Documents folder",
        _plant,
    ),
    Write("workspace", "save_file", ("any",), None, _save),
]
