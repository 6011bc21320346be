"""Dropbox moves: a note file that carries a fact; saving a fact to a file."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("files")
    folder = "/Archive" if decoy else "/Inbox"
    if not svc.entries.get(folder.lower()):
        svc._put_folder(folder)
    name = key_text(key).replace("/", "-")
    path = f"{folder}/{name}{' (old)' if decoy else ''}.txt"
    if svc.entries.get(path.lower()):
        path = f"{folder}/{name} {g.rng.randrange(1000)}.txt"
    svc._put_file(path, f"{text}\n", g.env.clock.iso())
    return [
        ("files__dropbox_search_files", {"query": name}),
        ("files__dropbox_download_file", {"path": path}),
    ]


def _save(g: Gen, fact: Fact) -> WriteStep:
    path = f"/Personal/{g.rng.choice(('followup', 'todo', 'notes'))}-{g.rng.randrange(100, 999)}.txt"
    uri = "data:text/plain," + fact.value.replace(" ", "%20")
    return WriteStep(
        calls=[("files__dropbox_upload_file", {"dropbox_path": path, "source_uri": uri})],
        checks=[
            (
                f"{path} holds it",
                {
                    "predicate": "record_exists",
                    "service": "files",
                    "table": "entries",
                    "new": True,
                    "where": {"path_lower": path.lower(), "content": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "files", "table": "entries"}, {"service": "files", "table": "revisions"}],
        phrase=f"save that {{it}} in a new Dropbox file at {path}",
    )


MOVES = [
    Relay(
        "files",
        "note_file",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the note file",
        "in the Dropbox /Inbox folder",
        _plant,
    ),
    Write("files", "save_file", ("any",), None, _save),
]
