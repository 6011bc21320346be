from __future__ import annotations

from compoworld.core.environment import Environment
from compoworld.services.sheets.formula import evaluate
from tests.services.helpers import err, ok

S = "sheets__google_sheets_"


def test_formula_evaluator() -> None:
    cells = {"A1": 2, "A2": 3, "A3": "=A1*A2", "B1": "x", "C1": "=A3+1"}
    get = cells.get
    assert evaluate("=SUM(A1:A3)", get) == 11
    assert evaluate("=(A1+A2)*2-1", get) == 9
    assert evaluate("=AVERAGE(A1:A2)", get) == 2.5
    assert evaluate("=C1/0", get) == "#DIV/0!"
    assert evaluate("=A1+", get) == "#ERROR!"
    assert evaluate("=__import__('os')", get) == "#ERROR!"
    assert evaluate("=COUNT(A1:B1)", get) == 1
    assert evaluate("=A1", {"A1": "=A1"}.get) == "#REF!"


def test_sheets_flow() -> None:
    env = Environment(services=["sheets"], seed=3)
    made = ok(
        env,
        S + "create_spreadsheet",
        {"title": "Q2 plan", "data": '{"1": {"A": "Item", "B": "Cost"}, "2": {"A": "Laptop", "B": 1200}}'},
    )
    sid = made["spreadsheet_id"]
    assert made["cells_written"] == 4
    err(env, S + "create_spreadsheet", {"title": "x", "data": '{"one": {"A": 1}}'}, 400)
    err(env, S + "create_spreadsheet", {"title": " "}, 400)
    ok(env, S + "write_to_cell", {"spreadsheet_id": sid, "column": "B", "row": 3, "value": "800"})
    r = ok(env, S + "write_to_cell", {"spreadsheet_id": sid, "column": "B", "row": 4, "value": "=SUM(B2:B3)"})
    assert r["value"] == "2000"
    err(env, S + "write_to_cell", {"spreadsheet_id": sid, "column": "B1", "row": 4, "value": "x"}, 400)
    err(env, S + "write_to_cell", {"spreadsheet_id": sid, "column": "B", "row": 0, "value": "x"}, 400)
    err(
        env,
        S + "write_to_cell",
        {"spreadsheet_id": sid, "column": "B", "row": 1, "value": "x", "sheet_name": "Nope"},
        404,
    )
    got = ok(
        env,
        S + "get_spreadsheet",
        {"spreadsheet_id": sid, "range": "Sheet1!B2:B4", "cell_value_format": "all"},
    )
    assert got["sheets"][0]["rows"]["4"]["B"] == {"userEnteredValue": "=SUM(B2:B3)", "formattedValue": "2000"}
    err(env, S + "get_spreadsheet", {"spreadsheet_id": "nope"}, 404)
    err(env, S + "get_spreadsheet", {"spreadsheet_id": sid, "range": "Sheet1!A1:ZZZ99999"}, 400)
    ok(env, S + "create_sheets", {"spreadsheet_id": sid, "sheet_names": ["Travel", "Hardware"]})
    err(env, S + "create_sheets", {"spreadsheet_id": sid, "sheet_names": ["travel"]}, 409)
    assert [s["title"] for s in ok(env, S + "list_sheets", {"spreadsheet_id": sid})] == [
        "Sheet1",
        "Travel",
        "Hardware",
    ]
    app = ok(env, S + "append_rows", {"spreadsheet_id": sid, "rows": [["Monitor", 300], ["Desk", 450]]})
    assert app["first_row"] == 5 and app["last_row"] == 6
    assert ok(env, S + "find_in_spreadsheet", {"spreadsheet_id": sid, "query": "desk"})[0]["cell"] == "A6"
    err(env, S + "find_in_spreadsheet", {"spreadsheet_id": sid, "query": ""}, 400)
    ok(env, S + "clear_range", {"spreadsheet_id": sid, "range": "Sheet1!A5:B6"})
    err(env, S + "clear_range", {"spreadsheet_id": sid, "range": "Sheet1!A5:B6"}, 422)
    ok(env, S + "delete_sheet", {"spreadsheet_id": sid, "sheet_name": "Travel"})
    ok(env, S + "delete_sheet", {"spreadsheet_id": sid, "sheet_name": "Hardware"})
    err(env, S + "delete_sheet", {"spreadsheet_id": sid, "sheet_name": "Sheet1"}, 422, "last_sheet")
    assert ok(env, S + "list_spreadsheets")[0]["id"] == sid
