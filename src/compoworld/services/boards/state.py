"""Typed state of Kanban boards: Trello boards, lists, cards and checklists."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Board(_M):
    id: str
    name: str
    desc: str = ""
    closed: bool = False


class List(_M):
    id: str
    idBoard: str
    name: str
    pos: int
    closed: bool = False


class Card(_M):
    id: str
    idList: str
    idBoard: str
    name: str
    desc: str = ""
    pos: int
    dateLastActivity: str


class CheckItem(_M):
    id: str
    name: str
    state: str  # complete | incomplete


class Checklist(_M):
    id: str
    idCard: str
    name: str
    checkItems: list[CheckItem] = []
