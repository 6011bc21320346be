"""Helpdesk service: Freshdesk, modelled on klavis_freshdesk.json (Klavis Freshdesk MCP server).

47 of the spec's 55 tools are modelled with their real names and parameters: tickets (with notes,
replies, forwards, merge, watchers, soft delete and archive), contacts, companies and agents. Not
modelled: the eight `*_thread*` tools, which drive Freshdesk's Collaboration threads (a separate
product with its own participants and anchors) that no other tool here reads or writes.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.limits import ResourceLimit, checkpoint
from compoworld.core.query import check_emails, check_limit, matches, norm, parse_datetime_arg
from compoworld.core.resource import Resource, page_number
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.helpdesk.seed import seed_helpdesk
from compoworld.services.helpdesk.state import Agent, Company, Contact, Conversation, Ticket

Priority = Literal[1, 2, 3, 4]
Status = Literal[2, 3, 4, 5]
Source = Literal[1, 2, 3, 7, 9, 10]
CLOSED, RESOLVED = 5, 4
MAX_BULK_AGENTS = 100  # agents one bulk create may make (each is checked against every agent)
STATUS = {2: "Open", 3: "Pending", 4: "Resolved", 5: "Closed"}
_CLAUSE = re.compile(r"(\w+)\s*:\s*([<>]?)\s*('[^']*'|\"[^\"]*\"|[^\s()]+)")


def _query_filter(query: str, fields: dict[str, str]) -> Any:
    """Freshdesk filter syntax: field:value clauses joined by AND / OR (AND binds tighter)."""
    q = query.strip().strip('"')
    if not q:
        raise InvalidArguments("'query' must not be empty, e.g. \"priority:3 AND status:2\"")
    groups = []
    for part in re.split(r"\s+OR\s+", q.replace("(", " ").replace(")", " ")):
        clauses = []
        for piece in re.split(r"\s+AND\s+", part.strip()):
            m = _CLAUSE.fullmatch(piece.strip())
            if not m:
                raise InvalidArguments(
                    f"'query': cannot read {piece.strip()!r}; write field:value, e.g. status:2 or tag:'vip'"
                )
            name, op, raw = m.group(1), m.group(2), m.group(3).strip("'\"")
            if name not in fields:
                raise InvalidArguments(
                    f"'query': unknown field {name!r}; use one of {', '.join(sorted(fields))}"
                )
            clauses.append((fields[name], op, raw))
        groups.append(clauses)

    def test(rec: dict[str, Any]) -> bool:
        return any(all(_clause(rec, *c) for c in clauses) for clauses in groups)

    return test


def _clause(rec: dict[str, Any], field: str, op: str, raw: str) -> bool:
    val = rec.get(field)
    if isinstance(val, list):
        return any(norm(v) == norm(raw) for v in val)
    if op:
        if val is None:
            return False
        a, b = str(val)[:10], raw[:10]
        return a > b if op == ">" else a < b
    if isinstance(val, bool):
        return val == (raw.lower() == "true")
    if isinstance(val, int):
        return raw.lstrip("-").isdigit() and val == int(raw)
    return val is not None and norm(val) == norm(raw)


TICKET_FIELDS = {
    "status": "status",
    "priority": "priority",
    "group_id": "group_id",
    "agent_id": "responder_id",
    "type": "type",
    "tag": "tags",
    "company_id": "company_id",
    "requester_id": "requester_id",
    "created_at": "created_at",
    "updated_at": "updated_at",
    "due_by": "due_by",
    "source": "source",
}
CONTACT_FIELDS = {
    "name": "name",
    "email": "email",
    "phone": "phone",
    "company_id": "company_id",
    "job_title": "job_title",
    "active": "active",
    "tag": "tags",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
COMPANY_FIELDS = {
    "name": "name",
    "domain": "domains",
    "industry": "industry",
    "account_tier": "account_tier",
    "health_score": "health_score",
    "renewal_date": "renewal_date",
    "created_at": "created_at",
}


class HelpdeskService(Service):
    """Freshdesk helpdesk: tickets with notes and replies, contacts, companies and agents."""

    name = "helpdesk"
    domain = "support"
    spec = "klavis_freshdesk.json"

    tickets = Resource("tickets", Ticket, id_kind="int", start=1000)
    conversations = Resource("conversations", Conversation, id_kind="int", start=50000)
    contacts = Resource("contacts", Contact, id_kind="int", start=7000, text=("name", "email", "phone"))
    companies = Resource("companies", Company, id_kind="int", start=300, text=("name",))
    agents = Resource("agents", Agent, id_kind="int", start=9000, text=("name", "email"))

    def seed_data(self, ctx: SeedContext) -> None:
        seed_helpdesk(self, ctx)

    # ---- internals ----------------------------------------------------------------------
    def _ticket(self, tid: int, *, live: bool = True) -> dict[str, Any]:
        t = self.tickets.require(tid)
        if live and (t["deleted"] or t["archived"]):
            state = (
                "deleted (restore it first)"
                if t["deleted"]
                else "archived (see freshdesk_get_archived_ticket)"
            )
            raise NotFound(f"ticket '{tid}' is {state}", type="ticket_not_found")
        return t

    def _view(self, t: dict[str, Any]) -> dict[str, Any]:
        return {**t, "status_name": STATUS[t["status"]]}

    def _requester(self, email: str, name: str | None) -> int:
        email = check_emails([email], "email")[0]
        found = self.contacts.find(lambda c: (c["email"] or "").lower() == email)
        if found:
            return found[0]["id"]
        now = self.clock.iso()
        return self.contacts.create(
            {"name": name or email.split("@")[0], "email": email, "created_at": now, "updated_at": now}
        )["id"]

    def _agent_ok(self, agent_id: int | None, field: str) -> None:
        if agent_id is not None:
            self.agents.require(agent_id, field)

    def _touch(self, tid: int, **changes: Any) -> dict[str, Any]:
        return self.tickets.update(tid, {**changes, "updated_at": self.clock.iso()})

    def _create_ticket(
        self,
        subject,
        description,
        email,
        name,
        priority,
        status,
        source,
        tags,
        custom_fields,
        cc_emails,
        due_by,
        fr_due_by,
        attachments,
        responder_id,
        parent_id,
        company_id,
        ticket_type,
        group_id,
    ):
        if not subject.strip():
            raise InvalidArguments("'subject' must not be empty")
        self._agent_ok(responder_id, "responder_id")
        if parent_id is not None:
            self._ticket(parent_id)
        if company_id is not None:
            self.companies.require(company_id, "company_id")
        now = self.clock.iso()
        due = parse_datetime_arg(due_by, "due_by") if due_by else None
        fr_due = parse_datetime_arg(fr_due_by, "fr_due_by") if fr_due_by else None
        if due and fr_due and fr_due > due:
            raise RuleViolation(
                "'fr_due_by' (first response) cannot be after 'due_by'", type="invalid_due_dates"
            )
        requester = self._requester(email, name)
        files = [
            {
                "id": self.next_seq("attachment") + 800000,
                "name": str(a.get("name") or f"file{i + 1}"),
                "content_type": str(a.get("content_type") or "application/octet-stream"),
                "size": len(str(a.get("content") or "")),
            }
            for i, a in enumerate(attachments or [])
        ]
        t = self.tickets.create(
            {
                "subject": subject,
                "description": description,
                "requester_id": requester,
                "responder_id": responder_id,
                "company_id": company_id
                if company_id is not None
                else self.contacts.get(requester).get("company_id"),
                "group_id": group_id,
                "status": status,
                "priority": priority,
                "source": source,
                "type": ticket_type,
                "tags": list(dict.fromkeys(tags or [])),
                "cc_emails": check_emails(cc_emails or [], "cc_emails"),
                "custom_fields": custom_fields or {},
                "due_by": due_by and str(due_by),
                "fr_due_by": fr_due_by and str(fr_due_by),
                "parent_id": parent_id,
                "attachments": files,
                "created_at": now,
                "updated_at": now,
            }
        )
        return self._view(t)

    # ---- tickets ------------------------------------------------------------------------
    @tool(mutates=True)
    def freshdesk_create_ticket(
        self,
        subject: str,
        description: str,
        email: str,
        name: str | None = None,
        priority: Priority = 2,
        status: Status = 2,
        source: Source = 2,
        tags: list[str] | None = None,
        custom_fields: dict[str, Any] | None = None,
        cc_emails: list[str] | None = None,
        due_by: str | None = None,
        fr_due_by: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
        responder_id: int | None = None,
        parent_id: int | None = None,
        company_id: int | None = None,
        product_id: int | None = None,
        ticket_type: str | None = None,
        group_id: int | None = None,
    ) -> dict[str, Any]:
        """Create a new ticket in Freshdesk. The requester is found by email, or created.

        Args:
            subject: The subject of the ticket.
            description: The HTML content of the ticket.
            email: Email address of the requester.
            name: Name of the requester.
            priority: Priority of the ticket (1=Low, 2=Medium, 3=High, 4=Urgent).
            status: Status of the ticket (2=Open, 3=Pending, 4=Resolved, 5=Closed).
            source: Source of the ticket (1=Email, 2=Portal, 3=Phone, 7=Chat, 9=Feedback, 10=Outbound Email).
            tags: List of tags to associate with the ticket.
            custom_fields: Key-value pairs of custom fields.
            cc_emails: List of email addresses to CC.
            due_by: Due date for the ticket (ISO 8601).
            fr_due_by: First response due date (ISO 8601).
            attachments: Attachments as objects with name, content and content_type.
            responder_id: ID of the agent to assign.
            parent_id: ID of the parent ticket (creates a child ticket).
            company_id: ID of the company to assign the ticket to.
            product_id: ID of the product (not used by this helpdesk).
            ticket_type: Type of the ticket (Question, Incident, Problem, Feature Request).
            group_id: ID of the group to assign the ticket to.
        """
        return self._create_ticket(
            subject,
            description,
            email,
            name,
            priority,
            status,
            source,
            tags,
            custom_fields,
            cc_emails,
            due_by,
            fr_due_by,
            attachments,
            responder_id,
            parent_id,
            company_id,
            ticket_type,
            group_id,
        )

    @tool(mutates=True)
    def freshdesk_create_ticket_with_attachments(
        self,
        subject: str,
        description: str,
        email: str,
        name: str | None = None,
        priority: Priority = 2,
        status: Status = 2,
        source: Source = 2,
        tags: list[str] | None = None,
        custom_fields: dict[str, Any] | None = None,
        cc_emails: list[str] | None = None,
        attachments: list[dict[str, Any]] | None = None,
        due_by: str | None = None,
        fr_due_by: str | None = None,
        group_id: int | None = None,
        responder_id: int | None = None,
        parent_id: int | None = None,
    ) -> dict[str, Any]:
        """Create a new ticket with attachments (objects with name, content and content_type).

        Args:
            subject: The subject of the ticket.
            description: The HTML content of the ticket.
            email: Email address of the requester.
            name: Name of the requester.
            priority: Priority (1=Low, 2=Medium, 3=High, 4=Urgent).
            status: Status (2=Open, 3=Pending, 4=Resolved, 5=Closed).
            source: Source (1=Email, 2=Portal, 3=Phone, 7=Chat, 9=Feedback, 10=Outbound Email).
            tags: Tags of the ticket.
            custom_fields: Key-value pairs of custom fields.
            cc_emails: Emails to CC.
            attachments: The files to attach.
            due_by: Due date (ISO 8601).
            fr_due_by: First response due date (ISO 8601).
            group_id: Group to assign.
            responder_id: Agent to assign.
            parent_id: Parent ticket ID.
        """
        if not attachments:
            raise InvalidArguments("'attachments' must list at least one file")
        return self._create_ticket(
            subject,
            description,
            email,
            name,
            priority,
            status,
            source,
            tags,
            custom_fields,
            cc_emails,
            due_by,
            fr_due_by,
            attachments,
            responder_id,
            parent_id,
            None,
            None,
            group_id,
        )

    @tool
    def freshdesk_get_ticket_by_id(self, ticket_id: int, include: str | None = None) -> dict[str, Any]:
        """Get a ticket by its ID; include='conversations' adds its notes and replies, 'requester' its requester.

        Args:
            ticket_id: The ID of the ticket.
            include: Extra data: conversations, requester, company (comma-separated).
        """
        t = self._view(self._ticket(ticket_id))
        extras = {x.strip() for x in (include or "").split(",") if x.strip()}
        bad = extras - {"conversations", "requester", "company", "stats", "description"}
        if bad:
            raise InvalidArguments(f"'include' has unknown value(s) {sorted(bad)}")
        if "conversations" in extras:
            t["conversations"] = sorted(self.conversations.find(ticket_id=ticket_id), key=lambda c: c["id"])
        if "requester" in extras:
            t["requester"] = self.contacts.get(t["requester_id"])
        if "company" in extras and t["company_id"] is not None:
            t["company"] = self.companies.get(t["company_id"])
        return t

    @tool(mutates=True)
    def freshdesk_update_ticket(
        self,
        ticket_id: int,
        subject: str | None = None,
        description: str | None = None,
        priority: Priority | None = None,
        status: Status | None = None,
        tags: list[str] | None = None,
        custom_fields: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Update a ticket's subject, description, priority, status, tags or custom fields.

        Args:
            ticket_id: The ID of the ticket to update.
            subject: New subject.
            description: New HTML description.
            priority: New priority (1=Low, 2=Medium, 3=High, 4=Urgent).
            status: New status (2=Open, 3=Pending, 4=Resolved, 5=Closed).
            tags: Replaces the ticket's tags.
            custom_fields: Custom fields to set (merged into the existing ones).
        """
        t = self._ticket(ticket_id)
        changes = {
            k: v
            for k, v in {
                "subject": subject,
                "description": description,
                "priority": priority,
                "status": status,
                "tags": tags,
            }.items()
            if v is not None
        }
        if custom_fields:
            changes["custom_fields"] = {**t["custom_fields"], **custom_fields}
        if not changes:
            raise InvalidArguments("give at least one field to update")
        if subject is not None and not subject.strip():
            raise InvalidArguments("'subject' must not be empty")
        return self._view(self._touch(ticket_id, **changes))

    @tool(mutates=True)
    def freshdesk_delete_ticket(self, ticket_id: int) -> dict[str, Any]:
        """Delete a ticket (it goes to Trash and can be restored with freshdesk_restore_ticket).

        Args:
            ticket_id: The ID of the ticket to delete.
        """
        self._ticket(ticket_id)
        self._touch(ticket_id, deleted=True)
        return {"id": ticket_id, "deleted": True}

    @tool(mutates=True)
    def freshdesk_delete_multiple_tickets(self, ticket_ids: list[int]) -> dict[str, Any]:
        """Delete several tickets at once (all must exist, or none is deleted).

        Args:
            ticket_ids: IDs of the tickets to delete.
        """
        if not ticket_ids:
            raise InvalidArguments("'ticket_ids' must list at least one ticket")
        for tid in ticket_ids:
            self._ticket(tid)
        for tid in dict.fromkeys(ticket_ids):
            self._touch(tid, deleted=True)
        return {"deleted": list(dict.fromkeys(ticket_ids))}

    @tool(mutates=True)
    def freshdesk_restore_ticket(self, ticket_id: int) -> dict[str, Any]:
        """Restore a deleted ticket.

        Args:
            ticket_id: The ID of the deleted ticket.
        """
        t = self.tickets.require(ticket_id)
        if not t["deleted"]:
            raise RuleViolation(f"ticket '{ticket_id}' is not deleted", type="not_deleted")
        return self._view(self._touch(ticket_id, deleted=False))

    @tool
    def freshdesk_get_archived_ticket(self, ticket_id: int) -> dict[str, Any]:
        """Get an archived ticket by its ID.

        Args:
            ticket_id: The ID of the archived ticket.
        """
        t = self.tickets.require(ticket_id)
        if not t["archived"]:
            raise NotFound(f"ticket '{ticket_id}' is not archived", type="archived_ticket_not_found")
        return self._view(t)

    @tool(mutates=True)
    def freshdesk_delete_archived_ticket(self, ticket_id: int) -> dict[str, Any]:
        """Permanently delete an archived ticket.

        Args:
            ticket_id: The ID of the archived ticket.
        """
        self.freshdesk_get_archived_ticket(ticket_id)
        for c in self.conversations.find(ticket_id=ticket_id):
            self.conversations.delete(c["id"])
        self.tickets.delete(ticket_id)
        return {"id": ticket_id, "deleted": True}

    @tool(mutates=True)
    def freshdesk_delete_attachment(self, attachment_id: int) -> dict[str, Any]:
        """Delete an attachment from the ticket it belongs to.

        Args:
            attachment_id: The ID of the attachment.
        """
        for t in self.tickets.all():
            if any(a["id"] == attachment_id for a in t["attachments"]):
                self._touch(t["id"], attachments=[a for a in t["attachments"] if a["id"] != attachment_id])
                return {"id": attachment_id, "ticket_id": t["id"], "deleted": True}
        raise NotFound(f"attachment '{attachment_id}' not found", type="attachment_not_found")

    @tool
    def freshdesk_list_tickets(
        self,
        status: Status | None = None,
        priority: Priority | None = None,
        requester_id: int | None = None,
        email: str | None = None,
        agent_id: int | None = None,
        company_id: int | None = None,
        group_id: int | None = None,
        ticket_type: str | None = None,
        updated_since: str | None = None,
        created_since: str | None = None,
        due_by: str | None = None,
        order_by: Literal["created_at", "updated_at", "priority", "status"] = "created_at",
        order_type: Literal["asc", "desc"] = "desc",
        include: str | None = None,
        page: int = 1,
        per_page: int = 30,
    ) -> dict[str, Any]:
        """List tickets with optional filtering, ordering and pages (deleted and archived tickets are left out).

        Args:
            status: Filter by status (2=Open, 3=Pending, 4=Resolved, 5=Closed).
            priority: Filter by priority (1=Low, 2=Medium, 3=High, 4=Urgent).
            requester_id: Filter by requester ID.
            email: Filter by the requester's email address.
            agent_id: Filter by the assigned agent's ID.
            company_id: Filter by company ID.
            group_id: Filter by group ID.
            ticket_type: Filter by ticket type.
            updated_since: Only tickets updated since this date (ISO 8601).
            created_since: Only tickets created since this date (ISO 8601).
            due_by: Only tickets due by this date (ISO 8601).
            order_by: Order by created_at, updated_at, priority or status.
            order_type: asc or desc (default desc).
            include: Additional data (stats, requester, description).
            page: Page number (from 1).
            per_page: Results per page (max 100).
        """
        bounds = {
            k: parse_datetime_arg(v, k).strftime("%Y-%m-%dT%H:%M:%SZ")
            for k, v in (
                ("updated_since", updated_since),
                ("created_since", created_since),
                ("due_by", due_by),
            )
            if v
        }
        if email:
            found = self.contacts.find(lambda c: (c["email"] or "").lower() == email.strip().lower())
            requester_id = found[0]["id"] if found else -1
        recs = self.tickets.find(
            lambda t: (
                not t["deleted"]
                and not t["archived"]
                and (not bounds.get("updated_since") or t["updated_at"] >= bounds["updated_since"])
                and (not bounds.get("created_since") or t["created_at"] >= bounds["created_since"])
                and (not bounds.get("due_by") or (t["due_by"] or "9") <= bounds["due_by"])
            ),
            status=status,
            priority=priority,
            requester_id=requester_id,
            responder_id=agent_id,
            company_id=company_id,
            group_id=group_id,
            type=ticket_type,
        )
        recs.sort(key=lambda t: (t[order_by], t["id"]), reverse=order_type == "desc")
        out = page_number([self._view(t) for t in recs], page, per_page, 100)
        if include and "requester" in include:
            for t in out["results"]:
                t["requester"] = self.contacts.get(t["requester_id"])
        return out

    @tool
    def freshdesk_filter_tickets(self, query: str, page: int = 1, per_page: int = 30) -> dict[str, Any]:
        """Filter tickets with Freshdesk's query language, e.g. "priority:3 AND status:2", "tag:'vip' OR type:'Incident'", "created_at:>'2026-02-01'".

        Args:
            query: Query string: (ticket_field:integer OR ticket_field:'string') AND ticket_field:boolean.
            page: Page number (from 1, max 10).
            per_page: Results per page (max 30).
        """
        check_limit(page, "page", 1, 10)
        test = _query_filter(query, TICKET_FIELDS)
        recs = sorted(
            (t for t in self.tickets.all() if not t["deleted"] and not t["archived"] and test(t)),
            key=lambda t: (t["created_at"], t["id"]),
            reverse=True,
        )
        return page_number([self._view(t) for t in recs], page, per_page, 30)

    @tool(mutates=True)
    def freshdesk_merge_tickets(
        self, primary_ticket_id: int, ticket_ids: int, convert_recepients_to_cc: bool = False
    ) -> dict[str, Any]:
        """Merge a ticket into a primary ticket: the merged ticket is closed and its conversations move to the primary.

        Args:
            primary_ticket_id: ID of the ticket that stays open.
            ticket_ids: ID of the ticket to merge into the primary (it will be closed).
            convert_recepients_to_cc: Add the merged ticket's requester to the primary's CC.
        """
        if primary_ticket_id == ticket_ids:
            raise RuleViolation("a ticket cannot be merged into itself", type="merge_self")
        primary = self._ticket(primary_ticket_id)
        other = self._ticket(ticket_ids)
        for c in self.conversations.find(ticket_id=ticket_ids):
            self.conversations.update(c["id"], {"ticket_id": primary_ticket_id})
        self.conversations.create(
            {
                "ticket_id": primary_ticket_id,
                "kind": "note",
                "body": f"Merged ticket #{ticket_ids}: {other['subject']}",
                "private": True,
                "incoming": False,
                "user_id": self._me_agent(),
                "created_at": self.clock.iso(),
            }
        )
        cc = primary["cc_emails"]
        if convert_recepients_to_cc:
            email = (self.contacts.get(other["requester_id"]) or {}).get("email")
            cc = [*cc, email] if email and email not in cc else cc
        self._touch(ticket_ids, status=CLOSED, parent_id=primary_ticket_id)
        return self._view(self._touch(primary_ticket_id, cc_emails=cc))

    def _me_agent(self) -> int:
        return self.store.tables[META]["me_agent"]

    @tool(mutates=True)
    def freshdesk_watch_ticket(self, ticket_id: int, user_id: int | None = None) -> dict[str, Any]:
        """Watch a ticket (as yourself, or as another agent).

        Args:
            ticket_id: The ticket to watch.
            user_id: The agent who watches (default: you).
        """
        t = self._ticket(ticket_id)
        uid = user_id if user_id is not None else self._me_agent()
        self.agents.require(uid, "user_id")
        if uid in t["watchers"]:
            raise Conflict(f"agent {uid} already watches ticket {ticket_id}", type="already_watching")
        self._touch(ticket_id, watchers=[*t["watchers"], uid])
        return {"ticket_id": ticket_id, "watchers": [*t["watchers"], uid]}

    @tool(mutates=True)
    def freshdesk_unwatch_ticket(self, ticket_id: int) -> dict[str, Any]:
        """Stop watching a ticket.

        Args:
            ticket_id: The ticket to stop watching.
        """
        t = self._ticket(ticket_id)
        me = self._me_agent()
        if me not in t["watchers"]:
            raise RuleViolation(f"you are not watching ticket {ticket_id}", type="not_watching")
        self._touch(ticket_id, watchers=[w for w in t["watchers"] if w != me])
        return {"ticket_id": ticket_id, "watching": False}

    # ---- conversations ------------------------------------------------------------------
    @tool(mutates=True)
    def freshdesk_add_note_to_ticket(
        self,
        ticket_id: int,
        body: str,
        user_id: int | None = None,
        incoming: bool = False,
        notify_emails: list[str] | None = None,
        private: bool = True,
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Add a note (private by default) to a ticket.

        Args:
            ticket_id: The ID of the ticket.
            body: The HTML content of the note.
            user_id: The agent adding the note (default: you).
            incoming: Whether the note comes from outside (shown as incoming).
            notify_emails: Agent emails to notify.
            private: Whether the note is private (default true).
            attachments: Files to attach.
        """
        self._ticket(ticket_id)
        if not body.strip():
            raise InvalidArguments("'body' must not be empty")
        uid = user_id if user_id is not None else self._me_agent()
        self.agents.require(uid, "user_id")
        note = self.conversations.create(
            {
                "ticket_id": ticket_id,
                "kind": "note",
                "body": body,
                "private": private,
                "incoming": incoming,
                "user_id": uid,
                "to_emails": check_emails(notify_emails or [], "notify_emails"),
                "created_at": self.clock.iso(),
            }
        )
        self._touch(ticket_id)
        return note

    @tool(mutates=True)
    def freshdesk_reply_to_a_ticket(
        self,
        ticket_id: int,
        body: str,
        user_id: int | None = None,
        cc_emails: list[str] | None = None,
        bcc_emails: list[str] | None = None,
        from_email: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Reply to a ticket (the requester receives it). A closed ticket must be reopened before a reply;
        replying to an Open ticket (status 2) sets it to Pending (3), awaiting the customer.

        Args:
            ticket_id: The ID of the ticket.
            body: The HTML content of the reply.
            user_id: The agent replying (default: you).
            cc_emails: Emails to CC.
            bcc_emails: Emails to BCC.
            from_email: The support address to send from.
            attachments: Files to attach.
        """
        t = self._ticket(ticket_id)
        if t["status"] == CLOSED:
            raise RuleViolation(
                f"ticket {ticket_id} is closed; reopen it (status 2) before replying", type="ticket_closed"
            )
        if not body.strip():
            raise InvalidArguments("'body' must not be empty")
        uid = user_id if user_id is not None else self._me_agent()
        self.agents.require(uid, "user_id")
        requester = self.contacts.get(t["requester_id"]) or {}
        reply = self.conversations.create(
            {
                "ticket_id": ticket_id,
                "kind": "reply",
                "body": body,
                "private": False,
                "incoming": False,
                "user_id": uid,
                "from_email": from_email and check_emails([from_email], "from_email")[0],
                "to_emails": [requester["email"]] if requester.get("email") else [],
                "cc_emails": check_emails(cc_emails or [], "cc_emails"),
                "bcc_emails": check_emails(bcc_emails or [], "bcc_emails"),
                "created_at": self.clock.iso(),
            }
        )
        self._touch(
            ticket_id, status=3 if t["status"] == 2 else t["status"]
        )  # replying moves Open to Pending
        return reply

    @tool(mutates=True)
    def freshdesk_update_note(
        self, note_id: int, body: str, attachments: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Update the body of a note.

        Args:
            note_id: The ID of the note.
            body: The new HTML content.
            attachments: Files to attach.
        """
        c = self.conversations.require(note_id, "note_id")
        if c["kind"] != "note":
            raise RuleViolation(
                f"conversation {note_id} is a {c['kind']}, only notes can be edited", type="not_a_note"
            )
        if not body.strip():
            raise InvalidArguments("'body' must not be empty")
        return self.conversations.update(note_id, {"body": body})

    @tool(mutates=True)
    def freshdesk_delete_note(self, note_id: int) -> dict[str, Any]:
        """Delete a note.

        Args:
            note_id: The ID of the note.
        """
        c = self.conversations.require(note_id, "note_id")
        if c["kind"] != "note":
            raise RuleViolation(
                f"conversation {note_id} is a {c['kind']}, only notes can be deleted", type="not_a_note"
            )
        self.conversations.delete(note_id)
        return {"id": note_id, "deleted": True}

    @tool(mutates=True)
    def freshdesk_forward_ticket(
        self,
        ticket_id: int,
        to_emails: list[str],
        cc_emails: list[str] | None = None,
        bcc_emails: list[str] | None = None,
        body: str | None = None,
        subject: str | None = None,
    ) -> dict[str, Any]:
        """Forward a ticket to external email addresses.

        Args:
            ticket_id: The ID of the ticket.
            to_emails: Recipients.
            cc_emails: CC recipients.
            bcc_emails: BCC recipients.
            body: Text added above the forwarded ticket.
            subject: Subject of the forward (default: Fwd: + ticket subject).
        """
        t = self._ticket(ticket_id)
        if not to_emails:
            raise InvalidArguments("'to_emails' must list at least one recipient")
        return self.conversations.create(
            {
                "ticket_id": ticket_id,
                "kind": "forward",
                "body": f"{subject or 'Fwd: ' + t['subject']}\n\n{body or ''}\n\n{t['description']}",
                "private": True,
                "incoming": False,
                "user_id": self._me_agent(),
                "to_emails": check_emails(to_emails, "to_emails"),
                "cc_emails": check_emails(cc_emails or [], "cc_emails"),
                "bcc_emails": check_emails(bcc_emails or [], "bcc_emails"),
                "created_at": self.clock.iso(),
            }
        )

    # ---- contacts -----------------------------------------------------------------------
    @tool(mutates=True)
    def freshdesk_create_contact(
        self,
        name: str,
        email: str | None = None,
        phone: str | None = None,
        company_id: int | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Create a contact. It needs an email or a phone; emails are unique.

        Args:
            name: Name of the contact.
            email: Primary email address.
            phone: Telephone number.
            company_id: ID of the contact's company.
            description: A description of the contact.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if not email and not phone:
            raise InvalidArguments("a contact needs an 'email' or a 'phone'")
        if email:
            email = check_emails([email], "email")[0]
            if self.contacts.find(lambda c: (c["email"] or "").lower() == email):
                raise Conflict(f"a contact with email {email} already exists", type="duplicate_value")
        if company_id is not None:
            self.companies.require(company_id, "company_id")
        now = self.clock.iso()
        return self.contacts.create(
            {
                "name": name,
                "email": email,
                "phone": phone,
                "company_id": company_id,
                "description": description,
                "created_at": now,
                "updated_at": now,
            }
        )

    @tool
    def freshdesk_get_contact_by_id(self, contact_id: int) -> dict[str, Any]:
        """Get a contact by ID.

        Args:
            contact_id: ID of the contact.
        """
        return self.contacts.require(contact_id)

    @tool
    def freshdesk_list_contacts(
        self,
        email: str | None = None,
        phone: str | None = None,
        mobile: str | None = None,
        company_id: int | None = None,
        state: Literal["verified", "unverified", "blocked", "deleted"] | None = None,
        updated_since: str | None = None,
        page: int = 1,
        per_page: int = 30,
    ) -> dict[str, Any]:
        """List contacts with optional filters (deleted contacts only with state='deleted').

        Args:
            email: Filter by email.
            phone: Filter by phone.
            mobile: Filter by mobile.
            company_id: Filter by company ID.
            state: verified, unverified, blocked or deleted.
            updated_since: Only contacts updated since this date (ISO 8601).
            page: Page number (from 1).
            per_page: Results per page (max 100).
        """
        since = (
            parse_datetime_arg(updated_since, "updated_since").strftime("%Y-%m-%dT%H:%M:%SZ")
            if updated_since
            else ""
        )
        recs = self.contacts.find(
            lambda c: (
                c["deleted"] == (state == "deleted")
                and (not email or (c["email"] or "").lower() == email.lower())
                and c["updated_at"] >= since
            ),
            phone=phone,
            mobile=mobile,
            company_id=company_id,
        )
        return page_number(sorted(recs, key=lambda c: c["id"]), page, per_page, 100)

    @tool(mutates=True)
    def freshdesk_update_contact(
        self,
        contact_id: int,
        name: str | None = None,
        email: str | None = None,
        phone: str | None = None,
        mobile: str | None = None,
        company_id: int | None = None,
        description: str | None = None,
        job_title: str | None = None,
        tags: list[str] | None = None,
        custom_fields: dict[str, Any] | None = None,
        avatar_path: str | None = None,
        address: str | None = None,
    ) -> dict[str, Any]:
        """Update a contact's fields.

        Args:
            contact_id: ID of the contact.
            name: New name.
            email: New email (must stay unique).
            phone: New phone.
            mobile: New mobile.
            company_id: New company ID.
            description: New description.
            job_title: New job title.
            tags: Replaces the tags.
            custom_fields: Custom fields (not stored by this helpdesk).
            avatar_path: Avatar file (not stored by this helpdesk).
            address: Address (not stored by this helpdesk).
        """
        c = self.contacts.require(contact_id)
        if c["deleted"]:
            raise RuleViolation(f"contact {contact_id} is deleted; restore it first", type="contact_deleted")
        if email is not None:
            email = check_emails([email], "email")[0]
            if self.contacts.find(lambda x: x["id"] != contact_id and (x["email"] or "").lower() == email):
                raise Conflict(f"another contact already has email {email}", type="duplicate_value")
        if company_id is not None:
            self.companies.require(company_id, "company_id")
        changes = {
            k: v
            for k, v in {
                "name": name,
                "email": email,
                "phone": phone,
                "mobile": mobile,
                "company_id": company_id,
                "description": description,
                "job_title": job_title,
                "tags": tags,
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.contacts.update(contact_id, {**changes, "updated_at": self.clock.iso()})

    @tool(mutates=True)
    def freshdesk_delete_contact(
        self, contact_id: int, hard_delete: bool = False, force: bool = False
    ) -> dict[str, Any]:
        """Delete a contact. Soft delete by default; hard_delete=True deletes permanently, which needs a soft delete first unless force=True.

        Args:
            contact_id: ID of the contact to delete.
            hard_delete: If true, permanently delete the contact.
            force: If true, force hard delete even if not soft deleted first.
        """
        c = self.contacts.require(contact_id)
        if not hard_delete:
            if c["deleted"]:
                raise Conflict(f"contact {contact_id} is already deleted", type="already_deleted")
            self.contacts.update(contact_id, {"deleted": True, "updated_at": self.clock.iso()})
            return {"id": contact_id, "deleted": True, "permanent": False}
        if not c["deleted"] and not force:
            raise RuleViolation("soft delete the contact first, or pass force=true", type="soft_delete_first")
        self.contacts.delete(contact_id)
        return {"id": contact_id, "deleted": True, "permanent": True}

    @tool(mutates=True)
    def freshdesk_restore_contact(self, contact_id: int) -> dict[str, Any]:
        """Restore a soft-deleted contact.

        Args:
            contact_id: ID of the contact.
        """
        c = self.contacts.require(contact_id)
        if not c["deleted"]:
            raise RuleViolation(f"contact {contact_id} is not deleted", type="not_deleted")
        return self.contacts.update(contact_id, {"deleted": False, "updated_at": self.clock.iso()})

    @tool
    def freshdesk_search_contacts_by_name(self, name: str) -> list[dict[str, Any]]:
        """Search contacts by (part of) their name; autocomplete-style, at most 30 results.

        Args:
            name: The name or part of it.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        hits = [c for c in self.contacts.all() if not c["deleted"] and matches(name, c["name"])]
        return [
            {"id": c["id"], "name": c["name"], "email": c["email"]}
            for c in sorted(hits, key=lambda c: c["name"])[:30]
        ]

    @tool
    def freshdesk_filter_contacts(
        self, query: str, page: int = 1, updated_since: str | None = None
    ) -> dict[str, Any]:
        """Filter contacts with the query language, e.g. "company_id:305 AND active:true" or "name:'Ana Silva'".

        Args:
            query: contact_field:integer OR contact_field:'string' AND contact_field:boolean.
            page: Page number (1-based).
            updated_since: Only contacts updated since this date (ISO 8601).
        """
        test = _query_filter(query, CONTACT_FIELDS)
        since = (
            parse_datetime_arg(updated_since, "updated_since").strftime("%Y-%m-%dT%H:%M:%SZ")
            if updated_since
            else ""
        )
        recs = [c for c in self.contacts.all() if not c["deleted"] and c["updated_at"] >= since and test(c)]
        return page_number(sorted(recs, key=lambda c: c["id"]), page, 30, 30)

    @tool(mutates=True)
    def freshdesk_make_contact_agent(
        self,
        contact_id: int,
        occasional: bool = False,
        signature: str | None = None,
        ticket_scope: Literal[1, 2, 3] = 1,
        skill_ids: list[int] | None = None,
        group_ids: list[int] | None = None,
        role_ids: list[int] | None = None,
        agent_type: str = "support_agent",
        focus_mode: bool = True,
    ) -> dict[str, Any]:
        """Make a contact an agent.

        Args:
            contact_id: ID of the contact.
            occasional: Whether the agent is occasional.
            signature: HTML signature.
            ticket_scope: Ticket permission (1=Global, 2=Group, 3=Restricted).
            skill_ids: Skill IDs.
            group_ids: Group IDs.
            role_ids: Role IDs.
            agent_type: support_agent, field_agent or collaborator.
            focus_mode: Whether focus mode is on.
        """
        c = self.contacts.require(contact_id)
        if not c["email"]:
            raise RuleViolation("a contact needs an email to become an agent", type="email_required")
        if self.agents.find(lambda a: a["email"].lower() == c["email"].lower()):
            raise Conflict(f"{c['email']} is already an agent", type="already_agent")
        return self.agents.create(
            {
                "name": c["name"],
                "email": c["email"],
                "ticket_scope": ticket_scope,
                "occasional": occasional,
                "signature": signature,
                "group_ids": group_ids or [],
                "role_ids": role_ids or [],
                "contact_id": contact_id,
                "created_at": self.clock.iso(),
                "agent_type": {"support_agent": 1, "field_agent": 2, "collaborator": 3}.get(agent_type, 1),
            }
        )

    @tool(mutates=True)
    def freshdesk_send_contact_invite(self, contact_id: int) -> dict[str, Any]:
        """Send a contact an invite to the support portal (the contact must be active and have an email).

        Args:
            contact_id: ID of the contact.
        """
        c = self.contacts.require(contact_id)
        if c["deleted"] or not c["email"]:
            raise RuleViolation("only an active contact with an email can be invited", type="cannot_invite")
        self.next_seq(f"invite:{contact_id}")
        return {"id": contact_id, "invited": c["email"]}

    @tool(mutates=True)
    def freshdesk_merge_contacts(
        self,
        primary_contact_id: int,
        secondary_contact_ids: list[int],
        contact_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Merge contacts into a primary contact: their tickets move to the primary and they are deleted.

        Args:
            primary_contact_id: The contact that remains.
            secondary_contact_ids: Contacts merged into the primary.
            contact_data: Fields to set on the primary (name, email, phone, job_title, ...).
        """
        if not secondary_contact_ids:
            raise InvalidArguments("'secondary_contact_ids' must list at least one contact")
        if primary_contact_id in secondary_contact_ids:
            raise RuleViolation("the primary contact cannot also be secondary", type="merge_self")
        self.contacts.require(primary_contact_id)
        for cid in secondary_contact_ids:
            self.contacts.require(cid, "secondary_contact_ids")
        allowed = {"name", "email", "phone", "mobile", "job_title", "company_id", "description"}
        bad = set(contact_data or {}) - allowed
        if bad:
            raise InvalidArguments(f"'contact_data' has unknown field(s) {sorted(bad)}")
        for t in self.tickets.all():
            if t["requester_id"] in secondary_contact_ids:
                self.tickets.update(t["id"], {"requester_id": primary_contact_id})
        for cid in dict.fromkeys(secondary_contact_ids):
            self.contacts.delete(cid)
        return self.contacts.update(
            primary_contact_id, {**(contact_data or {}), "updated_at": self.clock.iso()}
        )

    # ---- companies ----------------------------------------------------------------------
    @tool(mutates=True)
    def freshdesk_create_company(
        self,
        name: str,
        domains: list[str] | None = None,
        description: str | None = None,
        note: str | None = None,
        health_score: str | None = None,
        account_tier: str | None = None,
        renewal_date: str | None = None,
        industry: str | None = None,
        custom_fields: dict[str, Any] | None = None,
        lookup_parameter: str | None = None,
    ) -> dict[str, Any]:
        """Create a company; names are unique.

        Args:
            name: Name of the company.
            domains: Email domains of the company.
            description: Description.
            note: Any note about the company.
            health_score: Health score (Happy, Doing okay, At risk).
            account_tier: Account tier (Basic, Premium, Enterprise).
            renewal_date: Contract renewal date (YYYY-MM-DD).
            industry: Industry.
            custom_fields: Custom fields (not stored by this helpdesk).
            lookup_parameter: Lookup parameter (not used).
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if self.companies.find(lambda c: norm(c["name"]) == norm(name)):
            raise Conflict(f"a company named {name!r} already exists", type="duplicate_value")
        if renewal_date:
            parse_datetime_arg(renewal_date, "renewal_date")
        now = self.clock.iso()
        return self.companies.create(
            {
                "name": name,
                "domains": domains or [],
                "description": description,
                "note": note,
                "health_score": health_score,
                "account_tier": account_tier,
                "renewal_date": renewal_date,
                "industry": industry,
                "created_at": now,
                "updated_at": now,
            }
        )

    @tool
    def freshdesk_get_company_by_id(self, company_id: int) -> dict[str, Any]:
        """Get a company by ID.

        Args:
            company_id: ID of the company.
        """
        return self.companies.require(company_id)

    @tool
    def freshdesk_list_companies(
        self, updated_since: str | None = None, page: int = 1, per_page: int = 30
    ) -> dict[str, Any]:
        """List companies.

        Args:
            updated_since: Only companies updated since this date (ISO 8601).
            page: Page number (from 1).
            per_page: Results per page (max 100).
        """
        since = (
            parse_datetime_arg(updated_since, "updated_since").strftime("%Y-%m-%dT%H:%M:%SZ")
            if updated_since
            else ""
        )
        recs = sorted(self.companies.find(lambda c: c["updated_at"] >= since), key=lambda c: c["id"])
        return page_number(recs, page, per_page, 100)

    @tool(mutates=True)
    def freshdesk_update_company(
        self,
        company_id: int,
        name: str | None = None,
        domains: list[str] | None = None,
        description: str | None = None,
        note: str | None = None,
        health_score: str | None = None,
        account_tier: str | None = None,
        renewal_date: str | None = None,
        industry: str | None = None,
        custom_fields: dict[str, Any] | None = None,
        lookup_parameter: str | None = None,
    ) -> dict[str, Any]:
        """Update a company's fields.

        Args:
            company_id: ID of the company.
            name: New name (must stay unique).
            domains: New domains.
            description: New description.
            note: New note.
            health_score: New health score.
            account_tier: New account tier.
            renewal_date: New renewal date (YYYY-MM-DD).
            industry: New industry.
            custom_fields: Custom fields (not stored by this helpdesk).
            lookup_parameter: Lookup parameter (not used).
        """
        self.companies.require(company_id)
        if name is not None and self.companies.find(
            lambda c: c["id"] != company_id and norm(c["name"]) == norm(name)
        ):
            raise Conflict(f"a company named {name!r} already exists", type="duplicate_value")
        if renewal_date:
            parse_datetime_arg(renewal_date, "renewal_date")
        changes = {
            k: v
            for k, v in {
                "name": name,
                "domains": domains,
                "description": description,
                "note": note,
                "health_score": health_score,
                "account_tier": account_tier,
                "renewal_date": renewal_date,
                "industry": industry,
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.companies.update(company_id, {**changes, "updated_at": self.clock.iso()})

    @tool(mutates=True)
    def freshdesk_delete_company(self, company_id: int) -> dict[str, Any]:
        """Delete a company; its contacts and tickets keep existing without a company.

        Args:
            company_id: ID of the company.
        """
        self.companies.require(company_id)
        for c in self.contacts.find(company_id=company_id):
            self.contacts.update(c["id"], {"company_id": None})
        for t in self.tickets.find(company_id=company_id):
            self.tickets.update(t["id"], {"company_id": None})
        self.companies.delete(company_id)
        return {"id": company_id, "deleted": True}

    @tool
    def freshdesk_filter_companies(self, query: str, page: int = 1, per_page: int = 30) -> dict[str, Any]:
        """Filter companies with the query language, e.g. "account_tier:'Enterprise' AND health_score:'At risk'".

        Args:
            query: company_field:'string' clauses joined by AND / OR.
            page: Page number (from 1).
            per_page: Results per page (max 30).
        """
        test = _query_filter(query, COMPANY_FIELDS)
        return page_number(
            sorted((c for c in self.companies.all() if test(c)), key=lambda c: c["id"]), page, per_page, 30
        )

    @tool
    def freshdesk_search_companies_by_name(self, name: str) -> list[dict[str, Any]]:
        """Search companies by (part of) their name.

        Args:
            name: The name or part of it.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        return [
            {"id": c["id"], "name": c["name"]}
            for c in sorted(self.companies.search(name), key=lambda c: c["name"])[:30]
        ]

    # ---- account and agents --------------------------------------------------------------
    @tool
    def freshdesk_get_current_account(self) -> dict[str, Any]:
        """Get the helpdesk account: name, counts and timezone."""
        return {
            "account_name": "Support",
            "timezone": "UTC",
            "tickets": len(self.tickets.rows),
            "agents": len(self.agents.rows),
            "contacts": len(self.contacts.rows),
        }

    @tool
    def freshdesk_get_current_agent(self) -> dict[str, Any]:
        """Get the agent you are logged in as."""
        return self.agents.require(self._me_agent())

    @tool
    def freshdesk_list_agents(
        self,
        email: str | None = None,
        mobile: str | None = None,
        phone: str | None = None,
        state: Literal["fulltime", "occasional"] | None = None,
        page: int = 1,
        per_page: int = 30,
    ) -> dict[str, Any]:
        """List agents.

        Args:
            email: Filter by email.
            mobile: Filter by mobile (not stored; ignored).
            phone: Filter by phone (not stored; ignored).
            state: fulltime or occasional.
            page: Page number (from 1).
            per_page: Results per page (max 100).
        """
        recs = self.agents.find(
            lambda a: (
                (not email or a["email"].lower() == email.lower())
                and (state is None or a["occasional"] == (state == "occasional"))
            )
        )
        return page_number(sorted(recs, key=lambda a: a["id"]), page, per_page, 100)

    @tool
    def freshdesk_get_agent_by_id(self, agent_id: int) -> dict[str, Any]:
        """Get an agent by ID.

        Args:
            agent_id: ID of the agent.
        """
        return self.agents.require(agent_id)

    @tool
    def freshdesk_search_agents(self, term: str) -> list[dict[str, Any]]:
        """Search agents by name or email.

        Args:
            term: Part of a name or email.
        """
        if not term.strip():
            raise InvalidArguments("'term' must not be empty")
        return [
            {"id": a["id"], "name": a["name"], "email": a["email"]}
            for a in sorted(self.agents.search(term), key=lambda a: a["id"])
        ]

    def _new_agent(self, data: dict[str, Any], field: str) -> dict[str, Any]:
        email = check_emails([data.get("email", "")], f"{field}.email")[0]
        if not str(data.get("name", "")).strip():
            raise InvalidArguments(f"'{field}.name' is required")
        if data.get("ticket_scope") not in (1, 2, 3):
            raise InvalidArguments(f"'{field}.ticket_scope' must be 1, 2 or 3")
        if self.agents.find(lambda a: a["email"].lower() == email):
            raise Conflict(f"an agent with email {email} already exists", type="duplicate_value")
        return self.agents.create(
            {
                "name": data["name"],
                "email": email,
                "ticket_scope": data["ticket_scope"],
                "role_ids": data.get("role_ids") or [],
                "group_ids": data.get("group_ids") or [],
                "occasional": bool(data.get("occasional", False)),
                "signature": data.get("signature"),
                "language": data.get("language") or "en",
                "time_zone": data.get("time_zone") or "UTC",
                "agent_type": data.get("agent_type") or 1,
                "created_at": self.clock.iso(),
            }
        )

    @tool(mutates=True)
    def freshdesk_create_agent(
        self,
        email: str,
        name: str,
        ticket_scope: Literal[1, 2, 3],
        role_ids: list[int],
        group_ids: list[int] | None = None,
        skill_ids: list[int] | None = None,
        occasional: bool = False,
        signature: str | None = None,
        language: str = "en",
        time_zone: str | None = None,
        agent_type: Literal[1, 2, 3] = 1,
        focus_mode: bool = True,
    ) -> dict[str, Any]:
        """Create a new agent.

        Args:
            email: Email address of the agent.
            name: Name of the agent.
            ticket_scope: Ticket permission (1=Global, 2=Group, 3=Restricted).
            role_ids: Role IDs of the agent.
            group_ids: Group IDs the agent belongs to.
            skill_ids: Skill IDs.
            occasional: Occasional (true) or full-time (false).
            signature: HTML signature.
            language: Language code.
            time_zone: Time zone.
            agent_type: 1=Support, 2=Field, 3=Collaborator.
            focus_mode: Whether focus mode is on.
        """
        return self._new_agent(
            {
                "email": email,
                "name": name,
                "ticket_scope": ticket_scope,
                "role_ids": role_ids,
                "group_ids": group_ids,
                "occasional": occasional,
                "signature": signature,
                "language": language,
                "time_zone": time_zone,
                "agent_type": agent_type,
            },
            "agent",
        )

    @tool(mutates=True)
    def freshdesk_update_agent(
        self,
        agent_id: int,
        email: str | None = None,
        ticket_scope: Literal[1, 2, 3] | None = None,
        role_ids: list[int] | None = None,
        group_ids: list[int] | None = None,
        skill_ids: list[int] | None = None,
        occasional: bool | None = None,
        signature: str | None = None,
        language: str | None = None,
        time_zone: str | None = None,
        focus_mode: bool | None = None,
    ) -> dict[str, Any]:
        """Update an agent.

        Args:
            agent_id: ID of the agent.
            email: New email.
            ticket_scope: New ticket permission.
            role_ids: New role IDs.
            group_ids: New group IDs.
            skill_ids: Skill IDs (not stored).
            occasional: Occasional or full-time.
            signature: New signature.
            language: New language.
            time_zone: New time zone.
            focus_mode: Focus mode (not stored).
        """
        self.agents.require(agent_id)
        if email is not None:
            email = check_emails([email], "email")[0]
            if self.agents.find(lambda a: a["id"] != agent_id and a["email"].lower() == email):
                raise Conflict(f"an agent with email {email} already exists", type="duplicate_value")
        changes = {
            k: v
            for k, v in {
                "email": email,
                "ticket_scope": ticket_scope,
                "role_ids": role_ids,
                "group_ids": group_ids,
                "occasional": occasional,
                "signature": signature,
                "language": language,
                "time_zone": time_zone,
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.agents.update(agent_id, changes)

    @tool(mutates=True)
    def freshdesk_delete_agent(self, agent_id: int) -> dict[str, Any]:
        """Delete an agent; their open tickets become unassigned. You cannot delete yourself.

        Args:
            agent_id: ID of the agent.
        """
        self.agents.require(agent_id)
        if agent_id == self._me_agent():
            raise RuleViolation("you cannot delete your own agent account", type="cannot_delete_self")
        for t in self.tickets.find(responder_id=agent_id):
            self.tickets.update(t["id"], {"responder_id": None})
        self.agents.delete(agent_id)
        return {"id": agent_id, "deleted": True}

    @tool(mutates=True)
    def freshdesk_bulk_create_agents(self, agents_data: list[dict[str, Any]]) -> dict[str, Any]:
        """Create several agents at once (each with email, name, ticket_scope, role_ids); all or nothing.

        Args:
            agents_data: The agents to create.
        """
        if not agents_data:
            raise InvalidArguments("'agents_data' must list at least one agent")
        if len(agents_data) > MAX_BULK_AGENTS:
            raise ResourceLimit(
                f"'agents_data' lists {len(agents_data)} agents; one call creates at most {MAX_BULK_AGENTS}"
            )
        created = []
        for i, a in enumerate(agents_data):
            checkpoint()  # each is checked against every agent: yield the GIL's share between them
            created.append(self._new_agent(a if isinstance(a, dict) else {}, f"agents_data[{i}]"))
        return {"created": created}
