"""What a user of each product would do with a compiled service, one class of spec at a time.

Each scenario is written from the spec alone (its names, schemas and descriptions): create a parent
and a child, list with a filter, get, update, move through a state, delete, and call it wrongly. The
expected answers are what the spec says, not what the compiler happens to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.compiler import compile_spec, load_spec, service_from_manifest
from compoworld.compiler.compiler import blind_list, compile_manifest, meaningful
from compoworld.compiler.runtime import off_enum
from compoworld.core.environment import Environment

S = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"


def _tool(
    name: str,
    props: dict[str, Any],
    required: list[str] | None = None,
    description: str = "",
    **extra: Any,
) -> dict[str, Any]:
    schema = {"type": "object", "properties": props, "required": required or []}
    return {"name": name, "description": description or f"{name}.", "inputSchema": schema, **extra}


def _env(spec: dict[str, Any], name: str = "svc") -> tuple[Environment, dict[str, Any]]:
    m = compile_spec(spec, name)
    return Environment([service_from_manifest(m)], seed=4, size="small"), m


def _ops(m: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in m["tools"]}


def _ok(r: dict[str, Any]) -> Any:
    assert r["success"], r
    return r["data"]


def _code(r: dict[str, Any]) -> int:
    assert not r["success"], r
    return r["error"]["code"]


# ---- required and content parameters are stored -----------------------------------------------
def test_text_top_and_size_are_content_on_a_write() -> None:
    spec = {
        "tools": [
            _tool("create_lead", {"name": S}, ["name"]),
            _tool("create_task", {"lead_id": S, "text": S, "size": INT}, ["lead_id", "text"]),
            _tool("get_task", {"task_id": S}, ["task_id"]),
            _tool("list_tasks", {"lead_id": S, "text": S, "limit": INT}),
            _tool("create_shape", {"top": NUM, "left": NUM, "label": S}, ["top", "left"]),
            _tool("get_shape", {"shape_id": S}, ["shape_id"]),
        ]
    }
    env, m = _env(spec)
    lead = _ok(env.call("svc__create_lead", {"name": "Acme"}))["id"]
    task = _ok(env.call("svc__create_task", {"lead_id": lead, "text": "Call back Tuesday", "size": 3}))
    got = _ok(env.call("svc__get_task", {"task_id": task["id"]}))
    assert got["text"] == "Call back Tuesday" and got["size"] == 3 and got["lead_id"] == lead
    found = _ok(env.call("svc__list_tasks", {"lead_id": lead, "text": "tuesday", "limit": 5}))
    assert [t["id"] for t in found["items"]] == [task["id"]]
    shape = _ok(env.call("svc__create_shape", {"top": 12.5, "left": 3.0, "label": "box"}))
    assert _ok(env.call("svc__get_shape", {"shape_id": shape["id"]}))["top"] == 12.5
    assert _code(env.call("svc__create_task", {"lead_id": lead})) == 400  # text is required
    assert _code(env.call("svc__create_task", {"lead_id": "nope", "text": "x"})) == 404


# ---- one resource per object, whatever its tools call it -----------------------------------------
def test_a_file_created_is_the_item_read_moved_and_deleted() -> None:
    spec = {
        "tools": [
            _tool("onedrive_create_folder", {"name": S}, ["name"]),
            _tool("onedrive_upload_file", {"name": S, "content": S, "folder_id": S}, ["name", "content"]),
            _tool("onedrive_read_file_content", {"file_id": S}, ["file_id"]),
            _tool("onedrive_get_item", {"item_id": S}, ["item_id"]),
            _tool("onedrive_move_item", {"item_id": S, "folder_id": S}, ["item_id", "folder_id"]),
            _tool("onedrive_delete_item", {"item_id": S}, ["item_id"]),
            _tool("onedrive_list_items", {"folder_id": S}),
        ]
    }
    env, m = _env(spec)
    ops = _ops(m)
    assert {ops[n]["op"]["resource"] for n in ops if "folder" not in n} == {"item"}
    folder = _ok(env.call("svc__onedrive_create_folder", {"name": "Reports"}))["id"]
    other = _ok(env.call("svc__onedrive_create_folder", {"name": "Archive"}))["id"]
    f = _ok(env.call("svc__onedrive_upload_file", {"name": "q3.txt", "content": "Q3", "folder_id": folder}))
    assert _ok(env.call("svc__onedrive_read_file_content", {"file_id": f["id"]}))["content"] == "Q3"
    assert _ok(env.call("svc__onedrive_get_item", {"item_id": f["id"]}))["name"] == "q3.txt"
    _ok(env.call("svc__onedrive_move_item", {"item_id": f["id"], "folder_id": other}))
    listed = _ok(env.call("svc__onedrive_list_items", {"folder_id": other}))["items"]
    assert [i["id"] for i in listed] == [f["id"]]
    _ok(env.call("svc__onedrive_delete_item", {"item_id": f["id"]}))
    assert _code(env.call("svc__onedrive_get_item", {"item_id": f["id"]})) == 404


# ---- path suffixes and format markers are no nouns -----------------------------------------------
def test_a_rest_path_json_suffix_is_not_the_resource() -> None:
    def rest(name: str, method: str, path: str, props: dict[str, Any], req: list[str]) -> dict[str, Any]:
        return _tool(name, props, req, **{"x-http-method": method, "x-http-path": path})

    spec = {
        "tools": [
            rest("post_products_json", "post", "/products.json", {"name": S, "price": NUM}, ["name"]),
            rest("get_products_json", "get", "/products.json", {"limit": INT}, []),
            rest("get_products_id_json", "get", "/products/{id}.json", {"id": INT}, ["id"]),
            rest("put_products_id_json", "put", "/products/{id}.json", {"id": INT, "price": NUM}, ["id"]),
            rest("delete_products_id_json", "delete", "/products/{id}.json", {"id": INT}, ["id"]),
            rest("post_orders_json", "post", "/orders.json", {"status": S}, []),
        ]
    }
    env, m = _env(spec)
    assert set(m["resources"]) == {"product", "order"}
    p = _ok(env.call("svc__post_products_json", {"name": "Mug", "price": 9.5}))
    pid = int(p["id"])
    _ok(env.call("svc__put_products_id_json", {"id": pid, "price": 11.0}))
    assert _ok(env.call("svc__get_products_id_json", {"id": pid}))["price"] == 11.0
    _ok(env.call("svc__delete_products_id_json", {"id": pid}))
    assert _code(env.call("svc__get_products_id_json", {"id": pid})) == 404


# ---- send / publish / void an existing record is a transition ------------------------------------
INVOICES = {
    "tools": [
        _tool(
            "create_invoice",
            {
                "customer": S,
                "amount_due": NUM,
                "status": {"type": "string", "enum": ["draft", "sent", "void"]},
            },
            ["customer", "amount_due"],
        ),
        _tool("get_invoice", {"invoice_id": S}, ["invoice_id"]),
        _tool("list_invoices", {"status": S, "customer": S}),
        _tool("send_invoice", {"invoice_id": S}, ["invoice_id"], "Send an existing invoice or draft."),
        _tool(
            "void_invoice",
            {"invoice_id": S},
            ["invoice_id"],
            "Void an invoice. Voiding an invoice sets the amount due to zero.",
        ),
        _tool("update_invoice", {"invoice_id": S, "status": S, "amount_due": NUM}, ["invoice_id"]),
    ]
}


def test_sending_an_existing_invoice_moves_it_and_voiding_zeroes_it() -> None:
    env, m = _env(INVOICES)
    ops = _ops(m)
    assert ops["send_invoice"]["op"]["kind"] == "transition", ops["send_invoice"]
    inv = _ok(env.call("svc__create_invoice", {"customer": "Acme", "amount_due": 120.0}))
    assert inv["status"] == "draft"  # the first state, in the enum's own words
    before = len(_ok(env.call("svc__list_invoices", {}))["items"])
    assert _ok(env.call("svc__send_invoice", {"invoice_id": inv["id"]}))["status"] == "sent"
    assert len(_ok(env.call("svc__list_invoices", {}))["items"]) == before  # nothing new was made
    assert [
        i["id"] for i in _ok(env.call("svc__list_invoices", {"status": "sent", "customer": "Acme"}))["items"]
    ]
    voided = _ok(env.call("svc__void_invoice", {"invoice_id": inv["id"]}))
    assert voided["status"] == "void" and voided["amount_due"] == 0
    assert _code(env.call("svc__void_invoice", {"invoice_id": inv["id"]})) == 409  # already void
    assert _code(env.call("svc__send_invoice", {"invoice_id": "INV-nope"})) == 404


# ---- enums hold ----------------------------------------------------------------------------------
def test_a_free_form_write_outside_the_enum_is_400_naming_the_values() -> None:
    env, m = _env(INVOICES)
    inv = _ok(env.call("svc__create_invoice", {"customer": "Acme", "amount_due": 5.0}))
    before = env.state_hash()
    r = env.call("svc__update_invoice", {"invoice_id": inv["id"], "status": "open"})
    assert _code(r) == 400 and "draft, sent, void" in r["error"]["message"]
    assert env.state_hash() == before
    svc = env.services["svc"]
    res = m["resources"]["invoice"]
    assert all(off_enum(res, rec) is None for rec in svc.table(res["table"]).values())  # seeds too


def test_a_transition_writes_the_enums_own_word() -> None:
    spec = {
        "tools": [
            _tool(
                "create_ticket",
                {"subject": S, "status": {"type": "string", "enum": ["OPEN", "CLOSED", "PENDING"]}},
                ["subject"],
            ),
            _tool("close_ticket", {"ticket_id": S}, ["ticket_id"]),
            _tool("get_ticket", {"ticket_id": S}, ["ticket_id"]),
        ]
    }
    env, _ = _env(spec)
    t = _ok(env.call("svc__create_ticket", {"subject": "Printer"}))
    assert t["status"] == "OPEN"
    assert _ok(env.call("svc__close_ticket", {"ticket_id": t["id"]}))["status"] == "CLOSED"


# ---- a default is read only from a phrase that states one ----------------------------------------
def test_defaults_only_from_a_stated_default() -> None:
    spec = {
        "tools": [
            _tool(
                "create_item",
                {
                    "name": S,
                    "description": {"type": "string", "description": "Text in the default language."},
                    "currency": {"type": "string", "description": "ISO code. Defaults to USD."},
                    "quantity": {"type": "integer", "description": "How many (default: 1)."},
                },
                ["name"],
            ),
            _tool("get_item", {"item_id": S}, ["item_id"]),
        ]
    }
    env, m = _env(spec)
    assert _ops(m)["create_item"]["op"]["defaults"] == {"currency": "USD", "quantity": 1}
    rec = _ok(env.call("svc__create_item", {"name": "Mug"}))
    assert "description" not in rec and rec["currency"] == "USD" and rec["quantity"] == 1


# ---- stated uniqueness and cascades --------------------------------------------------------------
BILLING = {
    "tools": [
        _tool(
            "create_customer",
            {"DisplayName": {"type": "string", "description": "The name. Must be unique across customers."}},
            ["DisplayName"],
        ),
        _tool("get_customer", {"customer_id": S}, ["customer_id"]),
        _tool(
            "delete_customer",
            {"customer_id": S},
            ["customer_id"],
            "Delete a customer. Deleting a customer also deletes all its subscriptions.",
        ),
        _tool("create_subscription", {"customer_id": S, "plan": S}, ["customer_id", "plan"]),
        _tool("get_subscription", {"subscription_id": S}, ["subscription_id"]),
        _tool("list_subscriptions", {"customer_id": S}),
    ]
}


def test_a_duplicate_of_a_unique_name_is_409_quoting_the_spec() -> None:
    env, _ = _env(BILLING)
    _ok(env.call("svc__create_customer", {"DisplayName": "Harbor Health"}))
    before = env.state_hash()
    r = env.call("svc__create_customer", {"DisplayName": "harbor health"})
    assert _code(r) == 409 and "Must be unique across customers" in r["error"]["message"]
    assert env.state_hash() == before


def test_deleting_a_parent_cascades_where_the_spec_says_so() -> None:
    env, m = _env(BILLING)
    assert _ops(m)["delete_customer"]["op"]["cascade"][0]["resource"] == "subscription"
    c = _ok(env.call("svc__create_customer", {"DisplayName": "Cedar Ltd"}))["id"]
    keep = _ok(env.call("svc__create_customer", {"DisplayName": "Birch Ltd"}))["id"]
    s1 = _ok(env.call("svc__create_subscription", {"customer_id": c, "plan": "pro"}))["id"]
    s2 = _ok(env.call("svc__create_subscription", {"customer_id": keep, "plan": "pro"}))["id"]
    out = _ok(env.call("svc__delete_customer", {"customer_id": c}))
    assert out["also_deleted"]["subscription"] == [s1]
    assert _code(env.call("svc__get_subscription", {"subscription_id": s1})) == 404
    assert _ok(env.call("svc__get_subscription", {"subscription_id": s2}))["plan"] == "pro"


# ---- scoped deletes touch only the relation; every named record must exist -----------------------
def test_removing_a_tag_from_a_contact_keeps_the_tag() -> None:
    spec = {
        "tools": [
            _tool("create_contact", {"name": S}, ["name"]),
            _tool("get_contact", {"contact_id": S}, ["contact_id"]),
            _tool("create_tag", {"name": S}, ["name"]),
            _tool("get_tag", {"tag_id": S}, ["tag_id"]),
            _tool("add_contact_tag", {"contact_id": S, "tag_id": S}, ["contact_id", "tag_id"]),
            _tool("remove_contact_tag", {"contact_id": S, "tag_id": S}, ["contact_id", "tag_id"]),
        ]
    }
    env, m = _env(spec)
    ops = _ops(m)
    assert ops["remove_contact_tag"]["op"]["kind"] == "unrelate"
    c = _ok(env.call("svc__create_contact", {"name": "Ana"}))["id"]
    tag = _ok(env.call("svc__create_tag", {"name": "vip"}))["id"]
    assert _code(env.call("svc__add_contact_tag", {"contact_id": c, "tag_id": "TAG-nope"})) == 404
    _ok(env.call("svc__add_contact_tag", {"contact_id": c, "tag_id": tag}))
    _ok(env.call("svc__remove_contact_tag", {"contact_id": c, "tag_id": tag}))
    assert _ok(env.call("svc__get_tag", {"tag_id": tag}))["name"] == "vip"  # the tag itself stays
    assert tag not in (_ok(env.call("svc__get_contact", {"contact_id": c})).get("tag_ids") or [])


def test_a_note_under_a_record_that_does_not_exist_is_404() -> None:
    spec = {
        "tools": [
            _tool("create_record", {"name": S}, ["name"]),
            _tool("get_record", {"record_id": S}, ["record_id"]),
            _tool("create_user", {"name": S}, ["name"]),
            _tool(
                "create_note",
                {"parent_record_id": S, "author_id": S, "title": S, "content": S},
                ["parent_record_id", "title"],
            ),
            _tool("list_notes", {"parent_record_id": S}),
        ]
    }
    env, _ = _env(spec)
    rec = _ok(env.call("svc__create_record", {"name": "Acme"}))["id"]
    before = env.state_hash()
    assert _code(env.call("svc__create_note", {"parent_record_id": "REC-nope", "title": "x"})) == 404
    r = env.call("svc__create_note", {"parent_record_id": rec, "author_id": "USR-nope", "title": "x"})
    assert _code(r) == 404 and env.state_hash() == before
    note = _ok(
        env.call("svc__create_note", {"parent_record_id": rec, "title": "Kickoff", "content": "Agenda"})
    )
    listed = _ok(env.call("svc__list_notes", {"parent_record_id": rec}))["items"]
    assert [n["id"] for n in listed] == [note["id"]]


# ---- API switches shape the answer, never the filter ---------------------------------------------
def test_response_format_and_fields_change_the_shape_not_the_records() -> None:
    fmt = {"type": "string", "enum": ["json", "markdown"], "description": "Output format"}
    spec = {
        "tools": [
            _tool(
                "create_employee",
                {"first_name": S, "department": S, "response_format": fmt},
                ["first_name"],
            ),
            _tool(
                "list_employees",
                {"department": S, "response_format": fmt, "fields": {"type": "array", "items": S}},
            ),
        ]
    }
    env, m = _env(spec)
    assert "response_format" not in m["resources"]["employee"]["fields"]
    _ok(
        env.call(
            "svc__create_employee", {"first_name": "Ana", "department": "Ops", "response_format": "json"}
        )
    )
    everyone = _ok(env.call("svc__list_employees", {}))
    as_json = _ok(env.call("svc__list_employees", {"response_format": "json"}))
    assert as_json["total"] == everyone["total"] > 0 and "unsupported_filters" not in as_json
    md = _ok(env.call("svc__list_employees", {"response_format": "markdown", "department": "Ops"}))
    assert "Ana" in md["markdown"] and md["total"] >= 1
    slim = _ok(env.call("svc__list_employees", {"fields": ["first_name"]}))
    assert all(set(i) <= {"id", "first_name"} for i in slim["items"]) and slim["total"] == everyone["total"]


def test_a_structured_query_is_applied_or_reported() -> None:
    spec = {
        "tools": [
            _tool("create_contact", {"name": S, "role": S}, ["name"]),
            _tool("search_contacts", {"query": {"type": "object"}}, ["query"]),
        ]
    }
    env, _ = _env(spec)
    ana = _ok(env.call("svc__create_contact", {"name": "Ana Lima", "role": "lead"}))["id"]
    _ok(env.call("svc__create_contact", {"name": "Bo Chen", "role": "user"}))
    q = {"field": "role", "operator": "=", "value": "lead"}
    hits = _ok(env.call("svc__search_contacts", {"query": q}))["items"]
    assert ana in [h["id"] for h in hits] and all(h.get("role") == "lead" for h in hits)
    odd = _ok(env.call("svc__search_contacts", {"query": {"weird": 1}}))
    assert odd["unsupported_filters"] == ["query"]


# ---- meaningful state, or honest simulation ------------------------------------------------------
def test_a_record_type_with_no_content_is_simulated_and_filters_are_its_fields() -> None:
    spec = {
        "tools": [
            _tool("get_export", {"export_id": S}, ["export_id"], "Get an export job."),
            _tool(
                "list_cases",
                {"status": {"type": "string", "enum": ["new", "closed"]}, "subject_contains": S},
                [],
                "Get cases, optionally filtered by status.",
            ),
            _tool(
                "get_listing", {"listing_id": S}, ["listing_id"], "The listing: price, volume and currency."
            ),
        ]
    }
    env, m = _env(spec)
    ops = _ops(m)
    assert ops["get_export"]["status"] == "simulated" and ops["get_export"]["cause"] == "no_content_fields"
    assert not meaningful(ops["get_export"], m)
    assert ops["list_cases"]["status"] == "compiled" and blind_list(ops["list_cases"]) is False
    assert set(m["resources"]["case"]["fields"]) >= {"status", "subject"}
    new = _ok(env.call("svc__list_cases", {"status": "new"}))
    assert new["total"] >= 1 and all(c["status"] == "new" for c in new["items"])
    assert {"price", "volume", "currency"} <= set(m["resources"]["listing"]["fields"])
    r = env.call("svc__get_export", {"export_id": "x"})
    assert _code(r) == 503 and r["error"]["type"] == "world_model_unavailable" and r["simulated"]
    assert "COMPOWORLD_BASE_URL" in r["error"]["message"]


def test_another_tools_name_in_a_description_is_no_field() -> None:
    spec = {
        "tools": [
            _tool("get_workspaces", {}, [], "List the workspaces."),
            _tool(
                "list_teams",
                {"workspace_id": S},
                ["workspace_id"],
                "List teams in a workspace. Call `get_workspaces` first to find the workspace_id.",
            ),
        ]
    }
    _, m = _env(spec)
    ops = _ops(m)
    assert "get_workspaces" not in m["resources"].get("team", {}).get("fields", {})
    assert ops["list_teams"]["status"] == "simulated" and ops["list_teams"]["cause"] == "no_content_fields"


def test_a_records_number_names_it_whatever_its_json_type() -> None:
    """GitHub's `pullNumber: {type: number}` names a pull request, for the pull request's own writes
    and for a field of it (`update_pull_request_title`); `issue_number` names the issue of
    `update_issue_state`, never an `issue_state` record of its own."""
    repo = {"owner": S, "repo": S}
    pr = {**repo, "pullNumber": {"type": "number", "description": "Pull request number"}}
    spec = {
        "tools": [
            _tool(
                "create_pull_request", {**repo, "title": S, "head": S, "base": S}, ["owner", "repo", "title"]
            ),
            _tool("list_pull_requests", {**repo, "state": {"type": "string", "enum": ["open", "closed"]}}),
            _tool("update_pull_request_title", {**pr, "title": S}, ["owner", "repo", "pullNumber", "title"]),
            _tool("merge_pull_request", pr, ["owner", "repo", "pullNumber"], "Merge a pull request."),
            _tool("create_issue", {**repo, "title": S}, ["owner", "repo", "title"]),
            _tool(
                "update_issue_state",
                {**repo, "issue_number": NUM, "state": {"type": "string", "enum": ["open", "closed"]}},
                ["owner", "repo", "issue_number", "state"],
            ),
        ]
    }
    env, m = _env(spec)
    ops = _ops(m)
    for name in ("update_pull_request_title", "merge_pull_request"):
        assert ops[name]["status"] == "compiled", ops[name]
        assert (ops[name]["op"]["resource"], ops[name]["op"]["id_param"]) == ("pull_request", "pullNumber")
    assert ops["update_issue_state"]["op"]["resource"] == "issue"
    made = _ok(env.call("svc__create_pull_request", {"owner": "o", "repo": "r", "title": "Fix login"}))
    key = int(made["id"])  # the spec's numbers are numbers: the key minted is one
    _ok(
        env.call(
            "svc__update_pull_request_title", {"owner": "o", "repo": "r", "pullNumber": key, "title": "Fix"}
        )
    )
    listed = _ok(env.call("svc__list_pull_requests", {"owner": "o", "repo": "r"}))["items"]
    assert [p["title"] for p in listed if p["id"] == str(key)] == ["Fix"]
    missing = env.call(
        "svc__update_pull_request_title", {"owner": "o", "repo": "r", "pullNumber": 999999, "title": "x"}
    )
    assert _code(missing) == 404


def test_a_header_is_never_stored_and_a_body_field_named_body_is_text() -> None:
    """open-mcp's `header: {x-consumer-id}` is how a call travels; a comment's `body: {body}` wraps
    the comment's own `body` text."""
    header = {"type": "object", "properties": {"x-consumer-id": S}}
    spec = {
        "tools": [
            _tool(
                "comments_add",
                {"header": header, "body": {"type": "object", "properties": {"body": S}}},
                [],
                "Create comment",
                **{"x-http-method": "post", "x-http-path": "/comments"},
            ),
            _tool(
                "comments_update",
                {
                    "path": {"type": "object", "properties": {"id": S}, "required": ["id"]},
                    "header": header,
                    "body": {"type": "object", "properties": {"body": S}},
                },
                ["path"],
                "Update comment",
                **{"x-http-method": "patch", "x-http-path": "/comments/{id}"},
            ),
            _tool(
                "comments_all",
                {"header": header},
                [],
                "List comments",
                **{"x-http-method": "get", "x-http-path": "/comments"},
            ),
        ]
    }
    env, m = _env(spec)
    fields = m["resources"]["comment"]["fields"]
    assert "header" not in fields and fields.get("body") == "string"
    made = _ok(
        env.call("svc__comments_add", {"header": {"x-consumer-id": "c1"}, "body": {"body": "Looks good"}})
    )
    assert made["body"] == "Looks good" and "header" not in made
    up = {"path": {"id": made["id"]}, "body": {"body": "Ship it"}}
    assert _ok(env.call("svc__comments_update", up))["body"] == "Ship it"


def test_a_search_with_no_noun_searches_the_records_its_description_names() -> None:
    spec = {
        "tools": [
            _tool("create_issue", {"summary": S, "project": S}, ["summary"], "Create a Jira issue."),
            _tool("get_issue", {"issue_key": S}, ["issue_key"], "Get an issue."),
            _tool("search", {"query": S, "limit": INT}, ["query"], "Search Jira issues using text."),
            _tool("find", {"query": S}, ["query"], "Find anything on the web using an engine, issues too."),
        ]
    }
    env, m = _env(spec)
    ops = _ops(m)
    assert (ops["search"]["status"], ops["search"]["op"]["resource"]) == ("compiled", "issue")
    # "anything on the web": what it searches is no record type of the server
    assert ops["find"]["status"] == "simulated" and ops["find"]["cause"] == "no_resource"
    made = _ok(env.call("svc__create_issue", {"summary": "Login page times out"}))
    _ok(env.call("svc__create_issue", {"summary": "Export fails on Safari"}))
    hits = _ok(env.call("svc__search", {"query": "login page"}))["items"]
    assert [h["id"] for h in hits] == [made["id"]]


def test_seeded_records_look_like_the_product() -> None:
    spec = {
        "tools": [
            _tool(
                "create_product",
                {
                    "title": S,
                    "status": {"type": "string", "enum": ["active", "draft", "archived"]},
                    "currency": S,
                    "price": NUM,
                },
                ["title"],
            ),
            _tool("list_products", {"status": S}),
            _tool("create_company", {"name": S, "domain": S}, ["name"]),
            _tool("list_companies", {}),
        ]
    }
    env, m = _env(spec)
    svc = env.services["svc"]
    products = list(svc.table("products").values())
    assert {p["status"] for p in products} <= {"active", "draft", "archived"}
    assert all(len(p["currency"]) == 3 and p["currency"].isupper() for p in products)
    company = env.company
    assert {p["title"] for p in products} <= {x.name for x in company.products}
    assert {c["name"] for c in svc.table("companys").values()} <= {c.name for c in company.customers}


# ---- corpus specs: the same scenario on real servers ---------------------------------------------
def _corpus(name: str) -> Path:
    path = SPECS / name
    if not path.is_file():
        pytest.skip(f"{path} is not here (the real MCP specs live in shared/mcp-specs)")
    return path


def test_stripe_customer_and_invoice_scenario() -> None:
    m = compile_spec(_corpus("stripe-official.json"), "st")
    env = Environment([service_from_manifest(m)], seed=2, size="small")
    ops = _ops(m)
    assert ops["create_customer"]["status"] == "compiled"
    cust = _ok(env.call("st__create_customer", {"name": "Cedar Health", "email": "ap@cedar.example"}))
    listed = _ok(env.call("st__list_customers", {"email": "ap@cedar.example"}))["items"]
    assert [c["id"] for c in listed] == [cust["id"]]
    if ops.get("create_invoice", {}).get("status") == "compiled":
        inv = _ok(env.call("st__create_invoice", {"customer": cust["id"]}))
        assert inv["customer_id"] == cust["id"]  # filed under the customer it names
        assert _code(env.call("st__create_invoice", {"customer": "cus_nope"})) == 404
    assert _code(env.call("st__create_customer", {"name": 5})) == 400


def test_corpus_enums_hold_in_seeds_and_every_read_has_content() -> None:
    for name in ("klavis_shopify.json", "klavis_hubspot.json", "bamboohr.json", "klavis_jira.json"):
        m = compile_spec(_corpus(name), "svc")
        env = Environment([service_from_manifest(m)], seed=1, size="small")
        svc = env.services["svc"]
        for rname, r in m["resources"].items():
            for rec in svc.table(r["table"]).values():
                assert off_enum(r, rec) is None, (name, rname, rec)
        for t in m["tools"]:
            if t["status"] == "compiled" and t["op"].get("kind") in ("get", "list"):
                assert meaningful(t, m), (name, t["name"])
            # an API switch is never a stored field
            assert "response_format" not in m["resources"].get(t["op"].get("resource") or "", {}).get(
                "fields", {}
            )


def test_corpus_report_shares() -> None:
    _corpus("klavis_jira.json")
    manifests = [compile_manifest(load_spec(p)) for p in sorted(SPECS.glob("*.json"))]
    tools = [(t, m) for m in manifests for t in m["tools"]]
    useful = sum(meaningful(t, m) for t, m in tools)
    assert useful / len(tools) >= 0.7
    flags = [blind_list(t) for t, _ in tools]
    assert sum(f is True for f in flags) <= 0.1 * sum(f is not None for f in flags)


# ---- a compiled copy never sits beside the hand-built service of its product ---------------------
def test_a_compiled_copy_never_joins_the_hand_built_service_of_its_product() -> None:
    from compoworld.compiler.domains import apart, product_of

    def svc(spec: str | None) -> type:
        return type("S", (), {"spec": spec})

    lib = {
        "tracker": svc("klavis_jira.json"),
        "jira": svc("/specs/corpus/klavis_jira.json"),
        "stripe": svc("corpus/docker_stripe.json"),
        "payments": svc("stripe-official.json"),
        "notes": svc(None),
    }
    assert product_of(lib["tracker"]) == product_of(lib["jira"]) == "jira"
    assert product_of(lib["stripe"]) == product_of(lib["payments"]) == "stripe"
    assert apart(["tracker"], list(lib), lib) == ["stripe", "notes"]  # one of each product
    assert apart([], ["payments", "stripe"], lib) == ["payments"]


def test_eval_counts_world_model_unavailable_calls_apart() -> None:
    from compoworld.rollout.metrics import summarize

    env, m = _env({"tools": [_tool("summarize_workload", {"team": S}, ["team"])]})
    r = env.call("svc__summarize_workload", {"team": "ops"})
    assert _code(r) == 503
    ok = {"tool": "svc__summarize_workload", "envelope": {"success": True, "data": {}}}
    episodes = [
        {
            "task_id": "t1",
            "score": 0.0,
            "V": 0,
            "error_class": "ok",
            "steps": [{"tool": "svc__summarize_workload", "envelope": r}],
        },
        {"task_id": "t2", "score": 1.0, "V": 1, "error_class": "ok", "steps": [ok]},
    ]
    s = summarize(episodes, 1)
    assert s["world_model_unavailable"] == {
        "calls": 1,
        "episodes": 1,
        "tools": {"svc__summarize_workload": 1},
    }
    assert "server_error" not in s["error_classes"]  # never counted as our bug


def test_a_list_shows_the_newest_records_first() -> None:
    env, m = _env({"tools": [_tool("create_deal", {"name": S}, ["name"]), _tool("list_deals", {"q": S})]})
    svc = env.services["svc"]
    for key, when in (
        ("D-old", "2026-01-05T09:00:00Z"),
        ("D-new", "2026-02-27T09:00:00Z"),
        ("D-mid", "2026-02-01T09:00:00Z"),
    ):
        svc.insert("deals", {"id": key, "created_at": when, "name": f"Acme {key}"})
    svc.store.commit()
    listed = _ok(env.call("svc__list_deals", {"q": "Acme"}))["items"]
    assert [d["id"] for d in listed] == ["D-new", "D-mid", "D-old"]
