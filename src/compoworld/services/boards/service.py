"""Kanban boards: Trello, modelled on klavis_trello.json (Klavis Trello MCP server).

All 10 tools of the spec are modelled with their real names and parameters. Cards live in the open
lists of their board; a card moves only to a list of the same board, and a checklist item is
changed through the card that holds it.
"""

from __future__ import annotations

from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.boards.seed import seed_boards
from compoworld.services.boards.state import Board, Card, Checklist, List


class BoardsService(Service):
    """Trello: boards, lists, cards and checklists."""

    name = "boards"
    domain = "project_management"
    spec = "klavis_trello.json"

    boards = Resource("boards", Board, width=24)
    lists = Resource("lists", List, width=24)
    cards = Resource("cards", Card, width=24)
    checklists = Resource("checklists", Checklist, width=24)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_boards(self, ctx)

    def _board(self, name: str, desc: str) -> dict[str, Any]:
        b = self.boards.create({"name": name, "desc": desc})
        for i, n in enumerate(("To Do", "Doing", "Done")):
            self.lists.create({"idBoard": b["id"], "name": n, "pos": (i + 1) * 16384})
        return b

    def _card(self, lst: dict[str, Any], name: str, desc: str) -> dict[str, Any]:
        pos = max((c["pos"] for c in self.cards.find(idList=lst["id"])), default=0) + 16384
        return self.cards.create(
            {
                "idList": lst["id"],
                "idBoard": lst["idBoard"],
                "name": name,
                "desc": desc,
                "pos": pos,
                "dateLastActivity": self.clock.iso(),
            }
        )

    def _open_list(self, list_id: str, field: str) -> dict[str, Any]:
        lst = self.lists.require(list_id, field)
        if lst["closed"] or self.boards.get(lst["idBoard"])["closed"]:
            raise RuleViolation(f"list {list_id} is archived", type="list_closed")
        return lst

    @tool
    def trello_get_my_boards(self) -> list[dict[str, Any]]:
        """Get all open boards of the user."""
        return sort_records(self.boards.find(closed=False), "name")

    @tool(mutates=True)
    def trello_create_board(self, name: str, desc: str | None = None) -> dict[str, Any]:
        """Create a board with the default lists To Do, Doing and Done.

        Args:
            name: The board name.
            desc: The board description.
        """
        if not name.strip() or len(name) > 16384:
            raise InvalidArguments("'name' must not be empty")
        b = self._board(name, desc or "")
        return {**b, "lists": self.trello_get_board_lists(b["id"])}

    @tool
    def trello_get_board_lists(self, board_id: str) -> list[dict[str, Any]]:
        """Get the open lists of a board, in order.

        Args:
            board_id: The board ID.
        """
        self.boards.require(board_id, "board_id")
        return sorted(self.lists.find(idBoard=board_id, closed=False), key=lambda x: x["pos"])

    @tool
    def trello_get_list_cards(self, list_id: str) -> list[dict[str, Any]]:
        """Get the cards of a list, in order.

        Args:
            list_id: The list ID.
        """
        self.lists.require(list_id, "list_id")
        return sorted(self.cards.find(idList=list_id), key=lambda c: c["pos"])

    @tool(mutates=True)
    def trello_create_card(self, idList: str, name: str, desc: str | None = None) -> dict[str, Any]:
        """Create a card at the bottom of a list.

        Args:
            idList: The ID of the list.
            name: The card name.
            desc: The card description.
        """
        lst = self._open_list(idList, "idList")
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        return self._card(lst, name, desc or "")

    @tool(mutates=True)
    def trello_update_card(
        self, card_id: str, name: str | None = None, desc: str | None = None, idList: str | None = None
    ) -> dict[str, Any]:
        """Update a card's name or description, or move it to another list of the same board.

        Args:
            card_id: The card ID.
            name: New name.
            desc: New description.
            idList: The list to move the card to.
        """
        card = self.cards.require(card_id, "card_id")
        changes: dict[str, Any] = {}
        if name is not None:
            if not name.strip():
                raise InvalidArguments("'name' must not be empty")
            changes["name"] = name
        if desc is not None:
            changes["desc"] = desc
        if idList is not None and idList != card["idList"]:
            lst = self._open_list(idList, "idList")
            if lst["idBoard"] != card["idBoard"]:
                raise RuleViolation("the list is on another board", type="list_on_other_board")
            changes["idList"] = idList
            changes["pos"] = max((c["pos"] for c in self.cards.find(idList=idList)), default=0) + 16384
        if not changes:
            raise InvalidArguments("give at least one of name, desc, idList")
        return self.cards.update(card_id, {**changes, "dateLastActivity": self.clock.iso()})

    @tool(mutates=True)
    def trello_delete_card(self, card_id: str) -> dict[str, Any]:
        """Delete a card and its checklists.

        Args:
            card_id: The card ID.
        """
        self.cards.require(card_id, "card_id")
        for cl in self.checklists.find(idCard=card_id):
            self.checklists.delete(cl["id"])
        self.cards.delete(card_id)
        return {"deleted": card_id}

    @tool(mutates=True)
    def trello_create_checklist(self, idCard: str, name: str) -> dict[str, Any]:
        """Create a checklist on a card.

        Args:
            idCard: The card ID.
            name: The checklist name.
        """
        self.cards.require(idCard, "idCard")
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        return self.checklists.create({"idCard": idCard, "name": name})

    @tool(mutates=True)
    def trello_add_item_to_checklist(
        self, idChecklist: str, name: str, checked: bool = False
    ) -> dict[str, Any]:
        """Add an item to a checklist.

        Args:
            idChecklist: The checklist ID.
            name: The item name.
            checked: Whether the item starts complete.
        """
        cl = self.checklists.require(idChecklist, "idChecklist")
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        item = {"id": self.next_id("", 24), "name": name, "state": "complete" if checked else "incomplete"}
        self.checklists.update(idChecklist, {"checkItems": [*cl["checkItems"], item]})
        return item

    @tool(mutates=True)
    def trello_update_checklist_item_state(
        self, idCard: str, idCheckItem: str, state: Literal["complete", "incomplete"]
    ) -> dict[str, Any]:
        """Updates the state of an item on a checklist (e.g., 'complete' or 'incomplete').

        Args:
            idCard: The ID of the card containing the checklist item.
            idCheckItem: The ID of the checklist item to update.
            state: The new state of the item.
        """
        self.cards.require(idCard, "idCard")
        for cl in self.checklists.find(idCard=idCard):
            for it in cl["checkItems"]:
                if it["id"] == idCheckItem:
                    if it["state"] == state:
                        raise Conflict(f"the item is already {state}", type="same_state")
                    items = [{**x, "state": state} if x["id"] == idCheckItem else x for x in cl["checkItems"]]
                    self.checklists.update(cl["id"], {"checkItems": items})
                    return {**it, "state": state, "idChecklist": cl["id"]}
        raise NotFound(f"check item {idCheckItem} is not on card {idCard}", type="check_item_not_found")
