"""CRM service: HubSpot, modelled on klavis_hubspot.json (Klavis HubSpot MCP server).

All 33 tools of the spec are modelled with their real names and parameters. As in HubSpot, objects
hold string-valued `properties` that must be defined for their object type (see
`hubspot_list_properties` / `hubspot_create_property`), and objects link through associations.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, norm, parse_datetime_arg, valid_email
from compoworld.core.resource import Resource, json_object, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.crm.seed import seed_crm
from compoworld.services.crm.state import Association, CrmObject, PropertyDef

ObjectType = Literal["contacts", "companies", "deals", "tickets"]
ANY_TYPES = ("contacts", "companies", "deals", "tickets", "tasks", "notes")
OPERATORS = (
    "EQ",
    "NEQ",
    "GT",
    "GTE",
    "LT",
    "LTE",
    "BETWEEN",
    "IN",
    "NOT_IN",
    "CONTAINS_TOKEN",
    "NOT_CONTAINS_TOKEN",
    "STARTS_WITH",
    "HAS_PROPERTY",
    "NOT_HAS_PROPERTY",
)
# HubSpot's default association type ids for (from, to)
ASSOC_TYPES = {
    ("contacts", "companies"): 1,
    ("companies", "contacts"): 2,
    ("deals", "contacts"): 3,
    ("contacts", "deals"): 4,
    ("deals", "companies"): 5,
    ("companies", "deals"): 6,
    ("tickets", "contacts"): 16,
    ("contacts", "tickets"): 15,
    ("tickets", "companies"): 26,
    ("companies", "tickets"): 25,
    ("deals", "tickets"): 28,
    ("tickets", "deals"): 27,
}
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,99}$")


def _num(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class CrmService(Service):
    """HubSpot CRM: contacts, companies, deals, tickets, tasks, notes, properties and associations."""

    name = "crm"
    domain = "crm"
    spec = "klavis_hubspot.json"

    objects = Resource("objects", CrmObject, label="object", id_kind="numeric", start=51000)
    props = Resource("properties", PropertyDef, label="property")
    assocs = Resource("associations", Association, label="association")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_crm(self, ctx)

    # ---- internals ----------------------------------------------------------------------
    def _check_props(self, otype: str, values: dict[str, Any], field: str) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for name, value in values.items():
            d = self.props.get(f"{otype}.{name}")
            if d is None:
                raise InvalidArguments(
                    f"'{field}': property '{name}' does not exist for {otype}; see hubspot_list_properties",
                    type="PROPERTY_DOESNT_EXIST",
                )
            if value is None or value == "":
                out[name] = None
                continue
            if isinstance(value, dict | list):
                raise InvalidArguments(
                    f"'{field}': property '{name}' takes a string, got {type(value).__name__}"
                )
            sval = str(value).lower() if isinstance(value, bool) else str(value)
            if d["type"] == "number" and _num(sval) is None:
                raise InvalidArguments(
                    f"'{field}': property '{name}' must be a number, got {sval!r}", type="INVALID_INTEGER"
                )
            if d["type"] == "enumeration" and d["options"] and sval not in d["options"]:
                raise InvalidArguments(
                    f"'{field}': {sval!r} is not a valid option for '{name}'; options: {', '.join(d['options'])}",
                    type="INVALID_OPTION",
                )
            if d["type"] == "datetime" and not sval.isdigit():
                parse_datetime_arg(sval, f"{field}.{name}")
            out[name] = sval
        return out

    def _obj(self, otype: str, oid: str, field: str = "id") -> dict[str, Any]:
        rec = self.objects.get(oid)
        if rec is None or rec["object_type"] != otype:
            raise NotFound(
                f"{otype[:-1] if otype != 'companies' else 'company'} '{oid}' not found",
                type="object_not_found",
            )
        return rec

    def _create(self, otype: str, properties: Any) -> dict[str, Any]:
        props = self._check_props(otype, json_object(properties, "properties"), "properties")
        if otype == "contacts":
            email = props.get("email")
            if email:
                if not valid_email(email):
                    raise InvalidArguments(
                        f"'properties': email {email!r} is not a valid email address", type="INVALID_EMAIL"
                    )
                if self.objects.find(
                    lambda r: (
                        r["object_type"] == "contacts"
                        and norm(r["properties"].get("email") or "") == norm(email)
                    )
                ):
                    raise Conflict(f"a contact with email {email} already exists", type="CONTACT_EXISTS")
            elif not (props.get("firstname") or props.get("lastname")):
                raise InvalidArguments("'properties': a contact needs an email, a firstname or a lastname")
        required = {
            "companies": "name",
            "deals": "dealname",
            "tickets": "subject",
            "tasks": "hs_timestamp",
        }.get(otype)
        if required and not props.get(required):
            raise InvalidArguments(f"'properties': '{required}' is required to create {otype}")
        if otype == "deals":
            props.setdefault("pipeline", "default")
            props.setdefault("dealstage", "appointmentscheduled")
        if otype == "tickets":
            props.setdefault("hs_pipeline", "0")
            props.setdefault("hs_pipeline_stage", "1")
        if otype == "tasks":
            props.setdefault("hs_task_status", "NOT_STARTED")
        now = self.clock.iso()
        rec = self.objects.create(
            {"object_type": otype, "properties": props, "createdAt": now, "updatedAt": now}
        )
        return self._view(rec)

    def _update(self, otype: str, oid: str, updates: Any) -> dict[str, Any]:
        rec = self._obj(otype, oid)
        changes = self._check_props(otype, json_object(updates, "updates"), "updates")
        if not changes:
            raise InvalidArguments("'updates' must set at least one property")
        if otype == "contacts" and changes.get("email"):
            email = changes["email"]
            if not valid_email(email):
                raise InvalidArguments(
                    f"'updates': email {email!r} is not a valid email address", type="INVALID_EMAIL"
                )
            clash = self.objects.find(
                lambda r: (
                    r["object_type"] == "contacts"
                    and r["id"] != oid
                    and norm(r["properties"].get("email") or "") == norm(email)
                )
            )
            if clash:
                raise Conflict(f"contact {clash[0]['id']} already has email {email}", type="CONTACT_EXISTS")
        if (
            otype == "deals"
            and rec["properties"].get("dealstage") in ("closedwon", "closedlost")
            and "amount" in changes
        ):
            raise RuleViolation(
                "the amount of a closed deal cannot be changed; reopen it by changing 'dealstage' first",
                type="deal_closed",
            )
        new = self.objects.update(
            oid, {"properties": {**rec["properties"], **changes}, "updatedAt": self.clock.iso()}
        )
        return self._view(new)

    def _delete(self, otype: str, oid: str) -> dict[str, Any]:
        self._obj(otype, oid)
        for a in self.assocs.find(lambda a: oid in (a["from_object_id"], a["to_object_id"])):
            self.assocs.delete(a["id"])
        self.objects.delete(oid)
        return {"id": oid, "archived": True}

    def _list(self, otype: str, limit: int) -> dict[str, Any]:
        check_limit(limit, "limit", 1, 100)
        recs = sort_records(self.objects.find(object_type=otype), "createdAt", descending=True)
        return {"results": [self._view(r) for r in recs[:limit]], "total": len(recs)}

    def _view(self, rec: dict[str, Any], only: list[str] | None = None) -> dict[str, Any]:
        props = rec["properties"] if not only else {k: rec["properties"].get(k) for k in only}
        return {
            "id": rec["id"],
            "properties": props,
            "createdAt": rec["createdAt"],
            "updatedAt": rec["updatedAt"],
        }

    def _associate(
        self, ft: str, fid: str, tt: str, tid: str, type_id: int | None = None
    ) -> tuple[dict[str, Any], bool]:
        key = f"{ft}:{fid}->{tt}:{tid}"
        rev = f"{tt}:{tid}->{ft}:{fid}"
        existing = self.assocs.get(key) or self.assocs.get(rev)
        if existing:
            return existing, False
        rec = self.assocs.create(
            {
                "from_object_type": ft,
                "from_object_id": fid,
                "to_object_type": tt,
                "to_object_id": tid,
                "association_type_id": type_id or ASSOC_TYPES.get((ft, tt), 1),
            },
            id=key,
        )
        return rec, True

    # ---- properties and search ------------------------------------------------------------
    @tool
    def hubspot_list_properties(self, object_type: ObjectType) -> list[dict[str, Any]]:
        """List all property metadata for a HubSpot object type like contacts, companies, deals, or tickets.

        Args:
            object_type: The HubSpot object type. One of 'contacts', 'companies', 'deals', or 'tickets'.
        """
        defs = sorted(self.props.find(object_type=object_type), key=lambda d: d["name"])
        return [
            {k: d[k] for k in ("name", "label", "description", "type", "options", "custom")} for d in defs
        ]

    @tool(mutates=True)
    def hubspot_create_property(
        self, name: str, label: str, description: str, object_type: ObjectType
    ) -> dict[str, Any]:
        """Create a new custom property for HubSpot contacts, companies, deals or tickets (a single-line text property).

        Args:
            name: The internal name of the property (lowercase, digits and underscores, e.g. 'renewal_risk').
            label: The label shown in HubSpot.
            description: A description of the property.
            object_type: The object type: contacts, companies, deals or tickets.
        """
        if not _NAME.match(name):
            raise InvalidArguments(
                f"'name' {name!r} must be lowercase letters, digits and underscores, starting with a letter"
            )
        if self.props.get(f"{object_type}.{name}"):
            raise Conflict(f"property '{name}' already exists for {object_type}", type="PROPERTY_EXISTS")
        if not label.strip():
            raise InvalidArguments("'label' must not be empty")
        rec = self.props.create(
            {
                "object_type": object_type,
                "name": name,
                "label": label,
                "description": description,
                "type": "string",
                "custom": True,
            },
            id=f"{object_type}.{name}",
        )
        return {k: rec[k] for k in ("name", "label", "description", "type", "custom")}

    @tool
    def hubspot_search_by_property(
        self,
        object_type: str,
        property_name: str,
        operator: str,
        value: str,
        properties: list[str],
        limit: int = 10,
    ) -> list[dict[str, Any]]:
        """Search HubSpot objects by a specific property and value using a filter operator: EQ, NEQ, GT, GTE, LT, LTE, BETWEEN (value 'start,end' or a JSON list), IN / NOT_IN (comma-separated or JSON list), CONTAINS_TOKEN, NOT_CONTAINS_TOKEN, STARTS_WITH, HAS_PROPERTY, NOT_HAS_PROPERTY.

        Args:
            object_type: The object type to search (contacts, companies, deals, tickets).
            property_name: The property name to filter by.
            operator: Filter operator (see the tool description).
            value: The value to match against the property.
            properties: List of properties to return in the result.
            limit: Maximum number of results (default 10, max 200).
        """
        if object_type not in ANY_TYPES[:4]:
            raise InvalidArguments(
                f"'object_type' must be one of contacts, companies, deals, tickets; got {object_type!r}"
            )
        op = operator.upper()
        if op not in OPERATORS:
            raise InvalidArguments(
                f"'operator' {operator!r} is not supported; use one of {', '.join(OPERATORS)}"
            )
        check_limit(limit, "limit", 1, 200)
        for p in [property_name, *properties]:
            if not self.props.get(f"{object_type}.{p}"):
                raise InvalidArguments(
                    f"property '{p}' does not exist for {object_type}", type="PROPERTY_DOESNT_EXIST"
                )
        values = self._values(value) if op in ("BETWEEN", "IN", "NOT_IN") else [value]
        if op == "BETWEEN" and len(values) != 2:
            raise InvalidArguments("'value' for BETWEEN must hold two values: start,end")
        test = self._predicate(op, values)
        hits = [
            r for r in self.objects.find(object_type=object_type) if test(r["properties"].get(property_name))
        ]
        hits = sort_records(hits, "createdAt", descending=True)
        return [self._view(r, properties or None) for r in hits[:limit]]

    @staticmethod
    def _values(value: str) -> list[str]:
        v = value.strip()
        if v.startswith("["):
            try:
                parsed = json_object('{"v": ' + v + "}", "value")["v"]
                return [str(x) for x in parsed]
            except (InvalidArguments, TypeError):
                raise InvalidArguments(f"'value' {value!r} is not a JSON list") from None
        return [x.strip() for x in v.split(",") if x.strip()]

    @staticmethod
    def _predicate(op: str, values: list[str]):
        def cmp(a: str | None, b: str) -> int | None:
            if a is None:
                return None
            x, y = _num(a), _num(b)
            if x is not None and y is not None:
                return (x > y) - (x < y)
            a2, b2 = norm(a), norm(b)
            return (a2 > b2) - (a2 < b2)

        v = values[0] if values else ""
        if op == "EQ":
            return lambda a: a is not None and cmp(a, v) == 0
        if op == "NEQ":
            return lambda a: a is None or cmp(a, v) != 0
        if op in ("GT", "GTE", "LT", "LTE"):
            ok = {"GT": (1,), "GTE": (0, 1), "LT": (-1,), "LTE": (-1, 0)}[op]
            return lambda a: cmp(a, v) in ok
        if op == "BETWEEN":
            return lambda a: cmp(a, values[0]) in (0, 1) and cmp(a, values[1]) in (-1, 0)
        if op == "IN":
            return lambda a: a is not None and any(cmp(a, x) == 0 for x in values)
        if op == "NOT_IN":
            return lambda a: a is None or all(cmp(a, x) != 0 for x in values)
        if op == "CONTAINS_TOKEN":
            return lambda a: (
                a is not None and norm(v) in norm(a).replace("@", " ").replace(".", " ").split() + [norm(a)]
            )
        if op == "NOT_CONTAINS_TOKEN":
            return lambda a: a is None or norm(v) not in norm(a).replace("@", " ").replace(".", " ").split()
        if op == "STARTS_WITH":
            return lambda a: a is not None and norm(a).startswith(norm(v))
        if op == "HAS_PROPERTY":
            return lambda a: a not in (None, "")
        return lambda a: a in (None, "")

    # ---- contacts -----------------------------------------------------------------------
    @tool
    def hubspot_get_contacts(self, limit: int = 10) -> dict[str, Any]:
        """Fetch a list of contacts from HubSpot, newest first.

        Args:
            limit: Number of contacts to retrieve. Defaults to 10.
        """
        return self._list("contacts", limit)

    @tool
    def hubspot_get_contact_by_id(self, contact_id: str) -> dict[str, Any]:
        """Get a specific contact by HubSpot contact ID.

        Args:
            contact_id: The HubSpot contact ID.
        """
        return self._view(self._obj("contacts", contact_id))

    @tool(mutates=True)
    def hubspot_create_contact(self, properties: str | dict[str, Any]) -> dict[str, Any]:
        """Create a new contact using a JSON string of properties (e.g. firstname, lastname, email, phone, company, jobtitle, lifecyclestage).

        Args:
            properties: JSON string of contact properties.
        """
        return self._create("contacts", properties)

    @tool(mutates=True)
    def hubspot_update_contact_by_id(self, contact_id: str, updates: str | dict[str, Any]) -> dict[str, Any]:
        """Update a contact by ID with a JSON string of property updates.

        Args:
            contact_id: HubSpot contact ID to update.
            updates: JSON string of properties to update.
        """
        return self._update("contacts", contact_id, updates)

    @tool(mutates=True)
    def hubspot_delete_contact_by_id(self, contact_id: str) -> dict[str, Any]:
        """Delete a contact from HubSpot by contact ID (its associations are removed too).

        Args:
            contact_id: The HubSpot contact ID to delete.
        """
        return self._delete("contacts", contact_id)

    # ---- companies ----------------------------------------------------------------------
    @tool(mutates=True)
    def hubspot_create_companies(self, properties: str | dict[str, Any]) -> dict[str, Any]:
        """Create a new company using a JSON string of fields (name is required; domain, industry, city, ...).

        Args:
            properties: JSON string of company properties.
        """
        return self._create("companies", properties)

    @tool
    def hubspot_get_companies(self, limit: int = 10) -> dict[str, Any]:
        """Fetch a list of companies from HubSpot, newest first.

        Args:
            limit: Number of companies to retrieve. Defaults to 10.
        """
        return self._list("companies", limit)

    @tool
    def hubspot_get_company_by_id(self, company_id: str) -> dict[str, Any]:
        """Get a company from HubSpot by company ID.

        Args:
            company_id: The HubSpot company ID.
        """
        return self._view(self._obj("companies", company_id))

    @tool(mutates=True)
    def hubspot_update_company_by_id(self, company_id: str, updates: str | dict[str, Any]) -> dict[str, Any]:
        """Update an existing company by ID using a JSON string of property updates.

        Args:
            company_id: The HubSpot company ID to update.
            updates: JSON string of property updates.
        """
        return self._update("companies", company_id, updates)

    @tool(mutates=True)
    def hubspot_delete_company_by_id(self, company_id: str) -> dict[str, Any]:
        """Delete a company from HubSpot by company ID.

        Args:
            company_id: The HubSpot company ID to delete.
        """
        return self._delete("companies", company_id)

    # ---- deals --------------------------------------------------------------------------
    @tool
    def hubspot_get_deals(self, limit: int = 10) -> dict[str, Any]:
        """Fetch a list of deals from HubSpot, newest first.

        Args:
            limit: Number of deals to retrieve. Defaults to 10.
        """
        return self._list("deals", limit)

    @tool
    def hubspot_get_deal_by_id(self, deal_id: str) -> dict[str, Any]:
        """Fetch a deal by its ID.

        Args:
            deal_id: The HubSpot deal ID.
        """
        return self._view(self._obj("deals", deal_id))

    @tool(mutates=True)
    def hubspot_create_deal(self, properties: str | dict[str, Any]) -> dict[str, Any]:
        """Create a new deal in HubSpot using a JSON string of properties. Use HubSpot's exact property names: dealname (required), amount, dealstage (valid ids via hubspot_list_properties), pipeline, closedate, hubspot_owner_id, dealtype.

        Args:
            properties: JSON string containing deal property names and values.
        """
        return self._create("deals", properties)

    @tool(mutates=True)
    def hubspot_update_deal_by_id(self, deal_id: str, updates: str | dict[str, Any]) -> dict[str, Any]:
        """Update an existing deal using a JSON string of updated properties. The amount of a closed deal cannot change.

        Args:
            deal_id: The ID of the deal to update.
            updates: JSON string of the properties to update.
        """
        return self._update("deals", deal_id, updates)

    @tool(mutates=True)
    def hubspot_delete_deal_by_id(self, deal_id: str) -> dict[str, Any]:
        """Delete a deal from HubSpot by deal ID.

        Args:
            deal_id: The ID of the deal to delete.
        """
        return self._delete("deals", deal_id)

    # ---- tickets ------------------------------------------------------------------------
    @tool
    def hubspot_get_tickets(self, limit: int = 10) -> dict[str, Any]:
        """Fetch a list of tickets from HubSpot, newest first.

        Args:
            limit: Number of tickets to retrieve. Defaults to 10.
        """
        return self._list("tickets", limit)

    @tool
    def hubspot_get_ticket_by_id(self, ticket_id: str) -> dict[str, Any]:
        """Fetch a ticket by its ID.

        Args:
            ticket_id: The HubSpot ticket ID.
        """
        return self._view(self._obj("tickets", ticket_id))

    @tool(mutates=True)
    def hubspot_create_ticket(self, properties: str | dict[str, Any]) -> dict[str, Any]:
        """Create a new ticket using a JSON string of properties (subject required; content, hs_pipeline_stage, hs_ticket_priority, ...).

        Args:
            properties: JSON string of ticket properties.
        """
        return self._create("tickets", properties)

    @tool(mutates=True)
    def hubspot_update_ticket_by_id(self, ticket_id: str, updates: str | dict[str, Any]) -> dict[str, Any]:
        """Update an existing ticket using a JSON string of updated properties.

        Args:
            ticket_id: The ID of the ticket to update.
            updates: JSON string of the properties to update.
        """
        return self._update("tickets", ticket_id, updates)

    @tool(mutates=True)
    def hubspot_delete_ticket_by_id(self, ticket_id: str) -> dict[str, Any]:
        """Delete a ticket from HubSpot by ticket ID.

        Args:
            ticket_id: The ID of the ticket to delete.
        """
        return self._delete("tickets", ticket_id)

    # ---- tasks --------------------------------------------------------------------------
    @tool
    def hubspot_get_tasks(self, limit: int = 10) -> dict[str, Any]:
        """Fetch a list of tasks from HubSpot, newest first.

        Args:
            limit: Number of tasks to retrieve. Defaults to 10.
        """
        return self._list("tasks", limit)

    @tool
    def hubspot_get_task_by_id(self, task_id: str) -> dict[str, Any]:
        """Get a task by its ID.

        Args:
            task_id: The HubSpot task ID.
        """
        return self._view(self._obj("tasks", task_id))

    @tool(mutates=True)
    def hubspot_create_task(self, properties: str | dict[str, Any]) -> dict[str, Any]:
        """Create a new task using a JSON string of properties. Required: 'hs_timestamp'. Optional: 'hs_task_subject', 'hs_task_body', 'hubspot_owner_id', 'hs_task_type' (CALL | EMAIL | TODO | LINKEDIN_MESSAGE), 'hs_task_status' (NOT_STARTED | IN_PROGRESS | WAITING | COMPLETED | DEFERRED), 'hs_task_priority' (LOW | MEDIUM | HIGH).

        Args:
            properties: JSON string of task properties.
        """
        return self._create("tasks", properties)

    @tool(mutates=True)
    def hubspot_update_task_by_id(self, task_id: str, updates: str | dict[str, Any]) -> dict[str, Any]:
        """Update a task by ID using a JSON string of property updates.

        Args:
            task_id: The HubSpot task ID to update.
            updates: JSON string of properties to update.
        """
        return self._update("tasks", task_id, updates)

    @tool(mutates=True)
    def hubspot_delete_task_by_id(self, task_id: str) -> dict[str, Any]:
        """Delete a task by its ID.

        Args:
            task_id: The HubSpot task ID to delete.
        """
        return self._delete("tasks", task_id)

    # ---- notes and associations -----------------------------------------------------------
    @tool(mutates=True)
    def hubspot_create_note(
        self,
        note_body: str,
        contact_ids: list[str] | None = None,
        company_ids: list[str] | None = None,
        deal_ids: list[str] | None = None,
        ticket_ids: list[str] | None = None,
        owner_id: str | None = None,
        timestamp: str | None = None,
    ) -> dict[str, Any]:
        """Create a new note in HubSpot with optional associations to contacts, companies, deals, or tickets.

        Args:
            note_body: The content of the note.
            contact_ids: List of contact IDs to associate with the note.
            company_ids: List of company IDs to associate with the note.
            deal_ids: List of deal IDs to associate with the note.
            ticket_ids: List of ticket IDs to associate with the note.
            owner_id: HubSpot user ID of the note owner.
            timestamp: ISO 8601 timestamp or milliseconds since epoch (defaults to now).
        """
        if not note_body.strip():
            raise InvalidArguments("'note_body' must not be empty")
        links = [
            ("contacts", contact_ids),
            ("companies", company_ids),
            ("deals", deal_ids),
            ("tickets", ticket_ids),
        ]
        for otype, ids in links:
            for oid in ids or []:
                self._obj(otype, oid)
        props: dict[str, Any] = {"hs_note_body": note_body, "hs_timestamp": timestamp or self.clock.iso()}
        if owner_id:
            props["hubspot_owner_id"] = owner_id
        note = self._create("notes", props)
        for otype, ids in links:
            for oid in dict.fromkeys(ids or []):
                self._associate("notes", note["id"], otype, oid, 202)
        return note

    @tool(mutates=True)
    def hubspot_create_association(
        self,
        from_object_type: ObjectType,
        from_object_id: str,
        to_object_type: ObjectType,
        to_object_id: str,
        association_type_id: int | None = None,
    ) -> dict[str, Any]:
        """Create an association (link) between two HubSpot objects. For example, link a deal to a contact, or a deal to a company.

        Args:
            from_object_type: The object type to associate from (contacts, companies, deals, tickets).
            from_object_id: The ID of the source object.
            to_object_type: The object type to associate to (contacts, companies, deals, tickets).
            to_object_id: The ID of the target object.
            association_type_id: Optional custom association type ID (default: the standard type for the pair).
        """
        if from_object_type == to_object_type and from_object_id == to_object_id:
            raise RuleViolation("an object cannot be associated with itself", type="self_association")
        self._obj(from_object_type, from_object_id)
        self._obj(to_object_type, to_object_id)
        rec, created = self._associate(
            from_object_type, from_object_id, to_object_type, to_object_id, association_type_id
        )
        return {**rec, "created": created}

    @tool(mutates=True)
    def hubspot_delete_association(
        self,
        from_object_type: ObjectType,
        from_object_id: str,
        to_object_type: ObjectType,
        to_object_id: str,
        association_type_id: int | None = None,
    ) -> dict[str, Any]:
        """Delete an association between two HubSpot objects.

        Args:
            from_object_type: The object type of the source (contacts, companies, deals, tickets).
            from_object_id: The ID of the source object.
            to_object_type: The object type of the target.
            to_object_id: The ID of the target object.
            association_type_id: Optional association type ID.
        """
        for key in (
            f"{from_object_type}:{from_object_id}->{to_object_type}:{to_object_id}",
            f"{to_object_type}:{to_object_id}->{from_object_type}:{from_object_id}",
        ):
            rec = self.assocs.get(key)
            if rec and (association_type_id is None or rec["association_type_id"] == association_type_id):
                self.assocs.delete(key)
                return {"deleted": True, "id": key}
        raise NotFound("no such association between these objects", type="association_not_found")

    @tool
    def hubspot_get_associations(
        self, from_object_type: ObjectType, from_object_id: str, to_object_type: ObjectType
    ) -> dict[str, Any]:
        """Get all associations of an object to objects of another type, e.g. all contacts associated with a deal.

        Args:
            from_object_type: The source object type (contacts, companies, deals, tickets).
            from_object_id: The ID of the source object.
            to_object_type: The target object type.
        """
        self._obj(from_object_type, from_object_id)
        ids = []
        for a in self.assocs.all():
            if (
                a["from_object_type"] == from_object_type
                and a["from_object_id"] == from_object_id
                and a["to_object_type"] == to_object_type
            ):
                ids.append(a["to_object_id"])
            elif (
                a["to_object_type"] == from_object_type
                and a["to_object_id"] == from_object_id
                and a["from_object_type"] == to_object_type
            ):
                ids.append(a["from_object_id"])
        return {
            "results": [
                {"toObjectId": i, "type": ASSOC_TYPES.get((from_object_type, to_object_type), 1)}
                for i in sorted(set(ids))
            ]
        }

    @tool(mutates=True)
    def hubspot_batch_create_associations(
        self,
        from_object_type: ObjectType,
        from_object_id: str,
        to_object_type: ObjectType,
        to_object_ids: list[str],
        association_type_id: int | None = None,
    ) -> dict[str, Any]:
        """Associate one object with many objects of another type in one call (all targets must exist, or nothing changes).

        Args:
            from_object_type: The object type to associate from.
            from_object_id: The ID of the source object.
            to_object_type: The object type to associate to.
            to_object_ids: The IDs of the target objects.
            association_type_id: Optional custom association type ID.
        """
        if not to_object_ids:
            raise InvalidArguments("'to_object_ids' must list at least one id")
        self._obj(from_object_type, from_object_id)
        for oid in to_object_ids:
            self._obj(to_object_type, oid)
        created = [
            oid
            for oid in dict.fromkeys(to_object_ids)
            if self._associate(from_object_type, from_object_id, to_object_type, oid, association_type_id)[1]
        ]
        return {
            "created": created,
            "already_associated": [i for i in dict.fromkeys(to_object_ids) if i not in created],
        }
