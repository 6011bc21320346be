"""Sheets moves: an account-notes row that carries a fact; appending a row."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text

NOTES = "Account notes"


def _book(g: Gen) -> dict:
    svc = g.svc("sheets")
    found = [b for b in svc.books.all() if b["title"] == NOTES]
    if found:
        return found[0]
    return svc.books.create(
        {
            "title": NOTES,
            "sheets": [
                {"sheetId": 0, "title": "Notes", "cells": {"A1": "Key", "B1": "Note", "C1": "Status"}}
            ],
            "modified": g.env.clock.iso(),
        }
    )


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("sheets")
    book = _book(g)
    cells = dict(book["sheets"][0]["cells"])
    row = max(int("".join(ch for ch in ref if ch.isdigit())) for ref in cells) + 1
    cells.update({f"A{row}": key_text(key), f"B{row}": text, f"C{row}": "superseded" if decoy else "current"})
    svc.books.update(book["id"], {"sheets": [{**book["sheets"][0], "cells": cells}]})
    return [
        ("sheets__google_sheets_list_spreadsheets", {}),
        ("sheets__google_sheets_find_in_spreadsheet", {"spreadsheet_id": book["id"], "query": key_text(key)}),
    ]


def _append(g: Gen, fact: Fact) -> WriteStep:
    book = next(b for b in g.svc("sheets").books.all() if b["title"] != NOTES)
    return WriteStep(
        calls=[
            (
                "sheets__google_sheets_append_rows",
                {"spreadsheet_id": book["id"], "rows": [["Follow-up", fact.value]]},
            )
        ],
        checks=[
            (
                f"'{book['title']}' has it in a new row",
                {
                    "predicate": "record_exists",
                    "service": "sheets",
                    "table": "spreadsheets",
                    "where": {"id": book["id"], "sheets.cells": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "sheets", "table": "spreadsheets", "key": book["id"]}],
        phrase=f"append a row with that {{it}} to the '{book['title']}' spreadsheet",
    )


MOVES = [
    Relay(
        "sheets",
        "notes_row",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the current row in the 'Account notes' spreadsheet",
        "in Google Sheets",
        _plant,
    ),
    Write("sheets", "append_row", ("any",), None, _append),
]
