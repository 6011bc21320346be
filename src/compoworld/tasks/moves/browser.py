"""Browser moves: an account note that only the web page shows (the GUI interface)."""

from __future__ import annotations

from compoworld.interfaces.web import slug
from compoworld.tasks.moves.base import Fact, Gen, Relay


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("browser")
    name = key.value
    if svc.facts.get(name) is None:
        svc.facts.create({"text": f"Re {name}: {text}"}, id=name)
    else:
        svc.facts.update(name, {"text": f"Re {name}: {text}"})
    # from the home page, as an agent finds its way: the home page links the accounts list
    return [
        ("browser__open", {"url": "/"}),
        ("browser__open", {"url": "/accounts"}),
        ("browser__open", {"url": f"/accounts/{slug(name)}"}),
    ]


MOVES = [
    Relay(
        "browser",
        "account_page_note",
        ("customer",),
        ("code", "amount", "date", "person", "phone"),
        "the internal account notes",
        "on the Accounts web page",
        _plant,
    ),
]
