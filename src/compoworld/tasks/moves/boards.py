"""Trello moves: a card whose description carries a fact; adding a card."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("boards")
    board = g.rng.choice(svc.boards.all())
    lst = next(x for x in svc.lists.find(idBoard=board["id"]) if x["name"] == ("Done" if decoy else "To Do"))
    svc._card(lst, f"{key_text(key)}", text)
    return [
        ("boards__trello_get_my_boards", {}),
        ("boards__trello_get_board_lists", {"board_id": board["id"]}),
        ("boards__trello_get_list_cards", {"list_id": lst["id"]}),
    ]


def _card(g: Gen, fact: Fact) -> WriteStep:
    board = g.rng.choice(g.svc("boards").boards.all())
    lst = next(x for x in g.svc("boards").lists.find(idBoard=board["id"]) if x["name"] == "To Do")
    return WriteStep(
        calls=[("boards__trello_create_card", {"idList": lst["id"], "name": f"Follow up {fact.value}"})],
        checks=[
            (
                f"a card on '{board['name']}' names it",
                {
                    "predicate": "record_exists",
                    "service": "boards",
                    "table": "cards",
                    "new": True,
                    "where": {"idList": lst["id"], "name": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "boards", "table": "cards"}],
        phrase=f"add a card naming that {{it}} to the To Do list of the '{board['name']}' Trello board",
    )


MOVES = [
    Relay(
        "boards",
        "card_description",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the To Do card",
        "on Trello",
        _plant,
    ),
    Write("boards", "add_card", ("any",), None, _card),
]
