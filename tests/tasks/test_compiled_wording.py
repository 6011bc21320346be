"""Compiled families' requests read like work: they never state the rule that beats a trap (the
world holds the evidence), and their words follow general rules (plurals, fields, scopes)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from compoworld.compiler.compiler import singular
from tests.tasks.compiled_library import SPECS, compiled_library

SAMPLE = {
    "klavis_shopify.json": "shopify",
    "klavis_linear.json": "linear",
    "corpus/klavis_resend.json": "resend",
}

# what a request would say to hand over the rule that rules out a closed copy
RULES = re.compile(
    r"closed copy|(?:the|an) (?:current|open|active) one|not the (?:old|archived|closed)|"
    r"(?:don't|do not|doesn't) count|duplicate we closed|closed ones|leave the (?:old|closed)",
    re.I,
)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    if not SPECS.is_dir():
        pytest.skip("shared/mcp-specs is not checked out")
    with compiled_library(tmp_path_factory.mktemp("manifests"), SAMPLE) as out:
        yield out


def _texts(x: Any) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _texts(v)]
    if isinstance(x, list):
        return [t for v in x for t in _texts(v)]
    return []


def _records(state: dict[str, Any], service: str) -> list[dict[str, Any]]:
    svc = state["services"][service]
    tables = svc.get("tables", svc)
    return [
        r for recs in tables.values() if isinstance(recs, dict) for r in recs.values() if isinstance(r, dict)
    ]


def test_requests_leave_the_closed_copy_to_the_evidence(library) -> None:
    """Where a closed copy shares the target's label, neither the instruction nor the colleague's
    email says which copy to use; the copies' own status tells them apart (and the audit's lazy
    solvers still fail them)."""
    from compoworld.tasks.adversaries import solve_lazily
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task

    settings = Settings(families=tuple(f"compiled.{s}" for s in SAMPLE.values()))
    seen = 0
    for i in range(40):
        try:
            t = Task.model_validate(generate_task(3, i, settings))
        except Rejected:
            continue
        closed = [tr for tr in t.traps if tr.kind == "closed"]
        if not closed or t.meta["family"].endswith(".total_reply"):
            continue
        service = next(s for s in t.services if s != "email")
        mails = [x for x in _texts(t.initial_state["services"]["email"]) if x.startswith("Hi ")]
        # the label the colleague names, held by two records of the service: one open, one closed
        by_label: dict[str, list[dict[str, Any]]] = {}
        for r in _records(t.initial_state, service):
            for x in {x for x in _texts(r) if len(x) > 3}:
                by_label.setdefault(x, []).append(r)
        named = {x: rs for x, rs in by_label.items() if len(rs) >= 2 and any(f'"{x}"' in m for m in mails)}
        assert named, t.id
        label, copies = next(iter(named.items()))
        asks = [m for m in mails if f'"{label}"' in m]
        for text in [t.instruction, *asks]:
            assert not RULES.search(text), (t.meta["family"], text)
        # the evidence: the copies differ in their status, not in a label one of them carries
        states = {
            json.dumps({k: v for k, v in r.items() if k.lower() in ("status", "state", "archived", "active")})
            for r in copies
        }
        assert len(states) >= 2, copies
        assert all(p == 0 for p in solve_lazily(t).values()), t.meta["family"]
        seen += 1
        if seen == 4:
            break
    assert seen == 4


def test_plurals_singularise_by_class() -> None:
    assert [singular(w) for w in ("movies", "cookies", "species", "policies", "entries", "series")] == [
        "movie",
        "cookie",
        "species",
        "policy",
        "entry",
        "series",
    ]


def test_a_field_that_repeats_its_noun_is_not_asked_twice() -> None:
    from compoworld.tasks.families.compiled import _needs, _on, _poss

    assert _on("version", "version") == "of"  # not "the version on the version"
    assert _on("due date", "deal") == "on the deal"
    assert _on("content", "file") == "of the file"
    assert _needs("version", "version") == "needs a version looked up"
    assert _needs("due date", "deal") == "needs the due date of a deal"
    assert (_poss("Sterling Robotics"), _poss("Polar Energy")) == ("Sterling Robotics'", "Polar Energy's")


def test_scope_values_follow_their_parameter_not_the_customer_name() -> None:
    """A tag is a tag a team uses, a cell is in A1 notation, a table or a key is the spec's own
    example; only an organisation or a workspace is the customer's."""
    import random
    from datetime import datetime

    from compoworld.core.company import make_company
    from compoworld.tasks.families import compiled as C

    company = make_company(0, "small")
    cust = company.customers[0]
    slug = C._slug(cust.name)

    class B:  # the few parts of a Builder that `_scope_values` reads
        rng = random.Random(0)
        now = datetime(2026, 3, 2)

        def __init__(self) -> None:
            self.company = company

        def pick(self, xs: Any) -> Any:
            return self.rng.choice(list(xs))

    props = {
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Comma-separated tags"},
        "address": {"type": "string", "description": "A1 cell address, for example B3."},
        "table_name": {"type": "string", "description": 'Dataset name (e.g., "employees", "time_tracking")'},
        "project_key": {"type": "string", "description": "Jira project key, e.g. 'PROJ', 'APP'"},
        "asset_type": {"type": "string", "description": "Type of assets (hdris, textures, models, all)"},
        "org": {"type": "string", "description": "The organization slug, e.g. 'my-org'"},
        "job_name": {"type": "string", "description": "Name of the job"},
        "catalog_name": {"type": "string", "description": "Name of the parent catalog."},
    }
    res = type("R", (), {"scopes": tuple((p, s["type"]) for p, s in props.items())})()
    res.lister = {"input_schema": {"properties": props}}
    got = C._scope_values(B(), res, cust)  # type: ignore[arg-type]
    assert got["tags"][0] in C.TAGS and got["tags"][0] != slug
    assert got["address"] == "B3"
    assert (got["table_name"], got["project_key"], got["asset_type"]) == ("employees", "PROJ", "hdris")
    assert got["org"] == slug and got["job_name"] == cust.name
    assert got["catalog_name"] == slug.replace("-", "_")  # an identifier, never "Pied Retail"
    note = C._scope_note(res, {"address": "B3", "sheetName": "Accounts", "tags": ["renewals"]})  # type: ignore[arg-type]
    assert note == 'It\'s at B3 and on sheet "Accounts" and tagged "renewals".'


def test_a_resource_named_by_a_verb_or_a_qualifier_is_called_a_record() -> None:
    from compoworld.tasks.families.compiled import noun_of

    # `get_full_address` gives a resource "full", a path `/getcitystandard` one glued to its verb
    assert [noun_of(r) for r in ("full", "similar", "getcitystandard", "status")] == ["record"] * 4
    assert [noun_of(r) for r in ("inventory_item", "listing", "finding", "deal")] == [
        "inventory item",
        "listing",
        "finding",
        "deal",
    ]
