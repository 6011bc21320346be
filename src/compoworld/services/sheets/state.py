"""Typed state of spreadsheets: Google Sheets spreadsheets, each with sheets of A1-addressed cells."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Cell = str | int | float | bool


class Sheet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sheetId: int
    title: str
    cells: dict[str, Cell]  # "B12" -> user-entered value (formulas start with '=')


class Spreadsheet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    sheets: list[Sheet]
    modified: str
