"""Spreadsheets: Google Sheets, modelled on klavis_google_sheets.json (Klavis Google Sheets server).

All six tools of the spec are modelled with their real names and parameters; four more that the
Sheets API offers and other Sheets MCP servers expose (append rows, clear a range, delete a sheet,
find values) make edits and lookups possible without writing cell by cell. Formulas (=SUM(B2:B9),
=C2*D2, ...) are evaluated by a small safe evaluator, never by Python `eval`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.limits import ResourceLimit
from compoworld.core.query import matches
from compoworld.core.resource import Resource, json_object, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.sheets.formula import (
    Evaluation,
    TooMuchWork,
    col_index,
    col_name,
    evaluate,
    expand,
    row_of,
    split_ref,
)
from compoworld.services.sheets.seed import seed_sheets
from compoworld.services.sheets.state import Spreadsheet

MAX_COLS, MAX_ROWS = 18278, 100000
_COL = re.compile(r"^[A-Z]{1,3}$")


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


class SheetsService(Service):
    """Google Sheets: spreadsheets of sheets with cells, formulas, ranges and search."""

    name = "sheets"
    domain = "spreadsheets"
    spec = "klavis_google_sheets.json"

    books = Resource("spreadsheets", Spreadsheet, label="spreadsheet", width=20, prefix="1")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_sheets(self, ctx)

    def _sheet(self, book: dict[str, Any], name: str | None, field: str = "sheet_name") -> dict[str, Any]:
        if name is None:
            return book["sheets"][0]
        for s in book["sheets"]:
            if s["title"] == name:
                return s
        titles = ", ".join(s["title"] for s in book["sheets"])
        raise NotFound(f"'{field}': no sheet named {name!r}; sheets: {titles}", type="sheet_not_found")

    def _value(self, sheet: dict[str, Any], ref: str, ev: Evaluation | None = None) -> Any:
        v = sheet["cells"].get(ref)
        if isinstance(v, str) and v.startswith("="):
            try:
                return evaluate(v, sheet["cells"].get, ev)
            except TooMuchWork as e:
                raise ResourceLimit(f"{e}; refer to fewer or smaller ranges") from None
        return v

    def _save(self, book: dict[str, Any], sheets: list[dict[str, Any]]) -> dict[str, Any]:
        return self.books.update(book["id"], {"sheets": sheets, "modified": self.clock.iso()})

    def _rows(self, sheet: dict[str, Any], refs: list[str] | None, fmt: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        cells = sheet["cells"]
        keys = refs if refs is not None else cells.keys()
        ev = Evaluation(cells.get)  # one read: each formula cell is evaluated once
        for ref in keys:
            if ref not in cells:
                continue
            col, row = split_ref(ref)
            raw = cells[ref]
            if isinstance(raw, str) and raw.startswith("="):
                # a formula is evaluated twice, whatever the format (its cells' visits count
                # twice against `MAX_CELLS`, as they always have); a plain value is itself
                first, second = self._value(sheet, ref, ev), self._value(sheet, ref, ev)
            else:
                first = second = raw
            if fmt == "formatted":
                shown: Any = _fmt(first)
            elif fmt == "userEntered":
                shown = _fmt(raw)
            elif fmt == "all":
                shown = {"userEnteredValue": raw, "formattedValue": _fmt(second)}
            else:
                raise KeyError(fmt)
            out.setdefault(str(row), {})[col] = shown
        return {
            r: dict(sorted(out[r].items(), key=lambda kv: col_index(kv[0]))) for r in sorted(out, key=int)
        }

    @tool(mutates=True)
    def google_sheets_create_spreadsheet(
        self, title: str, data: str | dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Create a new spreadsheet with a title and optional data: a JSON object mapping row numbers to objects mapping column letters to values, e.g. {"1": {"A": "Name", "B": "Score"}, "2": {"A": "Ana", "B": 9}}.

        Args:
            title: The title of the new spreadsheet.
            data: The data to write (JSON string or object), rows -> columns -> values.
        """
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        cells = {}
        for row, cols in json_object(data, "data").items():
            if not str(row).isdigit() or not 1 <= int(row) <= MAX_ROWS or not isinstance(cols, dict):
                raise InvalidArguments(
                    f"'data': row key {row!r} must be a row number mapping to {{column: value}}"
                )
            for col, value in cols.items():
                if not _COL.match(str(col)) or isinstance(value, dict | list) or value is None:
                    raise InvalidArguments(
                        f"'data[{row}]': column {col!r} must be letters with a scalar value"
                    )
                cells[f"{col}{int(row)}"] = value
        book = self.books.create(
            {
                "title": title,
                "sheets": [{"sheetId": 0, "title": "Sheet1", "cells": cells}],
                "modified": self.clock.iso(),
            }
        )
        return {
            "spreadsheet_id": book["id"],
            "title": title,
            "sheets": ["Sheet1"],
            "cells_written": len(cells),
        }

    @tool
    def google_sheets_get_spreadsheet(
        self,
        spreadsheet_id: str,
        range: str | None = None,
        cell_value_format: Literal["formatted", "userEntered", "all"] = "formatted",
    ) -> dict[str, Any]:
        """Retrieve spreadsheet properties and cell data, optionally of one range ('Sheet1!A1:D10' or 'Sheet1').

        Args:
            spreadsheet_id: The ID of the spreadsheet to retrieve.
            range: The range in A1 notation, e.g. 'Sheet1!A1:D10' or 'Sheet1'; default all sheets.
            cell_value_format: formatted (display values), userEntered (formulas), or all.
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        if range is None:
            return {
                "spreadsheet_id": book["id"],
                "title": book["title"],
                "sheets": [
                    {"title": s["title"], "rows": self._rows(s, None, cell_value_format)}
                    for s in book["sheets"]
                ],
            }
        name, _, cells = range.rpartition("!") if "!" in range else (range, "", "")
        if not cells and re.fullmatch(r"[A-Z]+\d+(:[A-Z]+\d+)?", name):
            name, cells = None, name
        sheet = self._sheet(book, name.strip("'") if name else None, "range")
        try:
            refs = expand(cells) if cells else None
        except ValueError as e:
            raise InvalidArguments(f"'range' {range!r}: {e}") from None
        return {
            "spreadsheet_id": book["id"],
            "title": book["title"],
            "range": range,
            "sheets": [{"title": sheet["title"], "rows": self._rows(sheet, refs, cell_value_format)}],
        }

    @tool(mutates=True)
    def google_sheets_write_to_cell(
        self, spreadsheet_id: str, column: str, row: int, value: str, sheet_name: str | None = None
    ) -> dict[str, Any]:
        """Write a value (or a formula starting with '=') to one cell. Numbers given as text are stored as numbers.

        Args:
            spreadsheet_id: The ID of the spreadsheet to write to.
            column: The column, e.g. 'A', 'F' or 'AZ'.
            row: The row number (from 1).
            value: The value to write.
            sheet_name: The sheet to write to (default: the first sheet).
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        col = column.strip().upper()
        if not _COL.match(col) or col_index(col) > MAX_COLS:
            raise InvalidArguments(f"'column' {column!r} must be letters such as 'A' or 'AZ'")
        if not 1 <= row <= MAX_ROWS:
            raise InvalidArguments(f"'row' must be between 1 and {MAX_ROWS}")
        sheet = self._sheet(book, sheet_name)
        stored: Any = value
        if re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
            stored = float(value) if "." in value else int(value)
        ref = f"{col}{row}"
        sheets = [{**s, "cells": {**s["cells"], ref: stored}} if s is sheet else s for s in book["sheets"]]
        new = self._save(book, sheets)
        shown = self._value(self._sheet(new, sheet["title"]), ref)
        return {"spreadsheet_id": book["id"], "sheet": sheet["title"], "cell": ref, "value": _fmt(shown)}

    @tool
    def google_sheets_list_spreadsheets(self) -> list[dict[str, Any]]:
        """List all spreadsheets in the user's Drive, most recently modified first."""
        return [
            {"id": b["id"], "title": b["title"], "modified": b["modified"]}
            for b in sort_records(self.books.all(), "modified", descending=True)
        ]

    @tool
    def google_sheets_list_sheets(self, spreadsheet_id: str) -> list[dict[str, Any]]:
        """List all sheets in a spreadsheet with metadata (sheetId, title, index, rowCount, columnCount), without cell data.

        Args:
            spreadsheet_id: The ID of the spreadsheet.
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        out = []
        for i, s in enumerate(book["sheets"]):
            refs = [split_ref(r) for r in s["cells"]]
            out.append(
                {
                    "sheetId": s["sheetId"],
                    "title": s["title"],
                    "index": i,
                    "rowCount": max((r for _, r in refs), default=0),
                    "columnCount": max((col_index(c) for c, _ in refs), default=0),
                }
            )
        return out

    @tool(mutates=True)
    def google_sheets_create_sheets(self, spreadsheet_id: str, sheet_names: list[str]) -> dict[str, Any]:
        """Create multiple empty sheets in a spreadsheet (names must be new and distinct).

        Args:
            spreadsheet_id: The ID of the spreadsheet to add sheets to.
            sheet_names: Names for the new sheets.
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        if not sheet_names:
            raise InvalidArguments("'sheet_names' must list at least one name")
        taken = {s["title"].lower() for s in book["sheets"]}
        for n in sheet_names:
            if not n.strip() or n.lower() in taken or len(n) > 100:
                raise Conflict(f"sheet name {n!r} is empty, too long or already used", type="duplicate_sheet")
            taken.add(n.lower())
        next_id = max(s["sheetId"] for s in book["sheets"]) + 1
        new = [{"sheetId": next_id + i, "title": n, "cells": {}} for i, n in enumerate(sheet_names)]
        self._save(book, [*book["sheets"], *new])
        return {
            "spreadsheet_id": book["id"],
            "created": [{"sheetId": s["sheetId"], "title": s["title"]} for s in new],
        }

    @tool(mutates=True)
    def google_sheets_append_rows(
        self, spreadsheet_id: str, rows: list[list[str | int | float | bool]], sheet_name: str | None = None
    ) -> dict[str, Any]:
        """Append rows after the last used row of a sheet, starting at column A.

        Args:
            spreadsheet_id: The spreadsheet.
            rows: The rows to append, each a list of cell values.
            sheet_name: The sheet (default: the first sheet).
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        if not rows or len(rows) > 10000:
            raise InvalidArguments("'rows' must hold 1 to 10000 rows")
        sheet = self._sheet(book, sheet_name)
        start = max(map(row_of, sheet["cells"]), default=0) + 1
        cells = dict(sheet["cells"])
        for i, row in enumerate(rows):
            for j, v in enumerate(row):
                cells[f"{col_name(j + 1)}{start + i}"] = v
        self._save(book, [{**s, "cells": cells} if s is sheet else s for s in book["sheets"]])
        return {"sheet": sheet["title"], "first_row": start, "last_row": start + len(rows) - 1}

    @tool(mutates=True)
    def google_sheets_clear_range(self, spreadsheet_id: str, range: str) -> dict[str, Any]:
        """Clear the cells of a range, e.g. 'Sheet1!A2:C10'.

        Args:
            spreadsheet_id: The spreadsheet.
            range: The range in A1 notation, with an optional sheet name.
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        name, _, cells = range.rpartition("!")
        sheet = self._sheet(book, name.strip("'") or None, "range")
        try:
            refs = set(expand(cells))
        except ValueError as e:
            raise InvalidArguments(f"'range' {range!r}: {e}") from None
        cleared = [r for r in sheet["cells"] if r in refs]
        if not cleared:
            raise RuleViolation(f"the range {range} is already empty", type="range_empty")
        self._save(
            book,
            [
                {**s, "cells": {k: v for k, v in s["cells"].items() if k not in refs}} if s is sheet else s
                for s in book["sheets"]
            ],
        )
        return {"sheet": sheet["title"], "cleared_cells": len(cleared)}

    @tool(mutates=True)
    def google_sheets_delete_sheet(self, spreadsheet_id: str, sheet_name: str) -> dict[str, Any]:
        """Delete a sheet from a spreadsheet (a spreadsheet keeps at least one sheet).

        Args:
            spreadsheet_id: The spreadsheet.
            sheet_name: The sheet to delete.
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        sheet = self._sheet(book, sheet_name)
        if len(book["sheets"]) == 1:
            raise RuleViolation("a spreadsheet must keep at least one sheet", type="last_sheet")
        self._save(book, [s for s in book["sheets"] if s is not sheet])
        return {"deleted": sheet_name}

    @tool
    def google_sheets_find_in_spreadsheet(self, spreadsheet_id: str, query: str) -> list[dict[str, Any]]:
        """Find the cells whose displayed value contains the query (case-insensitive), in every sheet.

        Args:
            spreadsheet_id: The spreadsheet.
            query: Text to look for.
        """
        book = self.books.require(spreadsheet_id, "spreadsheet_id")
        if not query.strip():
            raise InvalidArguments("'query' must not be empty")
        hits = []
        for s in book["sheets"]:
            ev = Evaluation(s["cells"].get)
            for ref in sorted(s["cells"], key=lambda r: (split_ref(r)[1], col_index(split_ref(r)[0]))):
                shown = _fmt(self._value(s, ref, ev))
                if matches(query, shown):
                    hits.append({"sheet": s["title"], "cell": ref, "value": shown})
        return hits[:500]
