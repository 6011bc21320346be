"""Typed state of no-code databases: Airtable bases, tables, typed fields and records."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Base(_M):
    id: str
    name: str


class Table(_M):
    id: str
    base_id: str
    name: str
    description: str = ""
    primary_field_id: str


class Field(_M):
    id: str
    table_id: str
    name: str
    type: str
    description: str = ""
    options: dict[str, Any] = {}


class Record(_M):
    id: str
    table_id: str
    fields: dict[str, Any]  # field id -> value
    createdTime: str
