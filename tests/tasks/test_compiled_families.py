"""Workflow families over compiled services: a few real corpus specs, compiled here, give tasks that
pass every gate, and a correct alternative solution (other wording, an extra read) passes too."""

from __future__ import annotations

import json

import pytest

from compoworld.services import registry
from compoworld.tasks.workflow import DOMAINS
from tests.tasks.compiled_library import SPECS, compiled_library

SAMPLE = {
    "klavis_shopify.json": "shopify",
    "klavis_linear.json": "linear",
    "klavis_mailchimp.json": "mailchimp",
}

# a service whose records live under a parent known by its name (a broadcast goes to an audience)
PARENTED = {"corpus/klavis_resend.json": "resend"}
# a service whose people are stored by first_name + last_name (no one name field)
TWO_NAMES = {"bamboohr.json": "bamboohr"}

pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    with compiled_library(tmp_path_factory.mktemp("manifests"), {**SAMPLE, **PARENTED, **TWO_NAMES}) as out:
        yield out


def test_each_sampled_service_gets_domains_and_families(library) -> None:
    from compoworld.tasks.families.compiled import compiled_families

    fams = compiled_families()
    for name in SAMPLE.values():
        cls = registry()[name]
        assert cls.work_domain in DOMAINS and cls.corpus_domain == cls.manifest["domain"]
        mine = [f for f in fams.values() if f.name.startswith(f"compiled.{name}.")]
        assert mine, f"{name} gets no family"
        assert all(f.domain == cls.work_domain and set(f.services) == {name, "email"} for f in mine)
    shop = registry()["shopify"]  # the corpus says "e-commerce"; the library says ecommerce
    assert (shop.corpus_domain, shop.domain, shop.work_domain) == ("e-commerce", "ecommerce", "ecommerce")


def test_without_a_pool_or_a_name_the_default_draw_is_unchanged(library) -> None:
    from compoworld.tasks.generator import Settings, eligible_families

    assert not any(f.name.startswith("compiled.") for f in eligible_families(Settings()))
    pooled = eligible_families(Settings(pool=("linear",)))
    assert pooled and all(f.name.startswith("compiled.linear.") for f in pooled)


def _tasks(n: int, attempts: int = 40, families: tuple[str, ...] = ()) -> list:
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task

    out = []
    settings = Settings(families=families or tuple(f"compiled.{s}" for s in SAMPLE.values()))
    for i in range(attempts):
        try:
            out.append(Task.model_validate(generate_task(3, i, settings)))
        except Rejected:
            continue
        if len(out) == n:
            break
    return out


def test_compiled_tasks_pass_every_gate_and_a_correct_alternative_passes(library) -> None:
    from compoworld.tasks.gates import run_gates
    from compoworld.verify.verifier import verify

    tasks = _tasks(5)
    assert len(tasks) == 5
    assert len({t.meta["family"] for t in tasks}) >= 2
    for t in tasks:
        failed = {g: why for g, why in run_gates(t).items() if why}
        assert not failed, (t.meta["family"], failed)
        # the alternative: the same work, its own words in the reply, and one more look at the list
        wants = [  # what the checks read in the reply: what it must contain, and the facts it carries
            str(x)
            for r in t.rubric
            if r.check.get("predicate") == "message_sent"
            or (r.check.get("predicate") == "text_carries" and r.check.get("service") == "email")
            for x in [*r.check.get("contains", []), *r.check.get("facts", [])]
        ]
        env = t.environment()
        lister = next(  # a read of the service (or, where the work reads none, of the mailbox)
            (
                c
                for c in t.reference_solution
                if c.tool.split("__")[0] != "email" and not env.tool_spec(c.tool).mutates
            ),
            t.reference_solution[0],
        )
        for c in t.reference_solution:
            args = dict(c.arguments)
            if c.tool == "email__gmail_send_email":
                args["body"] = "Sorted. For your records: " + "; ".join(wants) + ". Shout if anything else."
                env.call(lister.tool, lister.arguments)
            r = env.call(c.tool, args)
            assert r["success"], r
        v = verify(t, env.snapshot(), t.answer)
        assert v.passed, [(c.id, c.detail) for c in v.checks if not c.passed]
        env.reset()
        assert not verify(t, env.snapshot(), None).passed  # and doing nothing does not


def test_lazy_solvers_fail_on_compiled_tasks(library) -> None:
    """Acting on every candidate, on the newest, on the oldest, or on the best match of the
    instruction's words passes under 5% of a compiled sample (the audit's bar): the namesake carries
    the instruction's words, the newest and the oldest records are traps, and only the colleague's
    email names the target."""
    from compoworld.tasks.adversaries import ALL_SOLVERS as SOLVERS
    from compoworld.tasks.adversaries import solve_lazily

    tasks = _tasks(16, attempts=60)
    assert len(tasks) == 16
    kinds = {t.meta["family"].rsplit(".", 1)[1] for t in tasks}
    assert {"lookup_reply", "update_from_email"} <= kinds
    rates = dict.fromkeys(SOLVERS, 0.0)
    for t in tasks:
        for s, p in solve_lazily(t).items():
            rates[s] += p / len(tasks)
    assert all(r < 0.05 for r in rates.values()), rates
    # every task plants a namesake carrying the colleague's name, and guards it (a total's trap is
    # the customer's closed record, counted by a careless sum)
    for t in tasks:
        want = "closed" if t.meta["family"].endswith(".total_reply") else "namesake"
        assert any(tr.kind == want for tr in t.traps), t.meta["family"]


def test_the_audit_reads_a_record_quoted_in_free_text() -> None:
    from compoworld.tasks.adversaries import _shown_in

    recs = [
        {"id": "C1", "name": "Wonka Labs rollout", "diet": "vegetarian", "status": "open"},
        {"id": "C2", "name": "Wonka Labs rollout", "diet": "vegan", "status": "closed"},
        {"id": "C3", "name": "Wonka Labs pilot", "diet": "halal", "status": "open"},
    ]
    hit = _shown_in("Hi, the diet on Wonka Labs rollout is vegetarian.", {"data": recs})
    assert hit is not None and hit[0]["id"] == "C1" and hit[2] == recs
    assert _shown_in("Hi, Wonka Labs rollout is done.", {"data": recs}) is None  # C1 and C2 tie
    assert _shown_in("Nothing from the list here.", {"data": recs}) is None


def test_field_kinds_and_values_fit_the_field_name() -> None:
    import random
    from datetime import date

    from compoworld.core.company import make_company
    from compoworld.tasks.families._fieldvalues import PHRASES, draw, fits, kind_of

    company = make_company(0, "small")
    people, domains = company.people, [c.domain for c in company.customers]
    rng = random.Random(0)
    cases = {
        ("dietary_preference", "string"): ("vegetarian", "vegan", "halal"),
        ("department", "string"): ("Finance", "Engineering"),
        ("invoice_number", "string"): ("INV-",),
        ("poNumber", "string"): ("PO-",),
        ("billing_email", "string"): ("@",),
        ("website", "string"): ("https://www.",),
        ("repository_url", "string"): ("https://github.com/",),
        # a note or a description holds a short working note; a version a release number
        ("notes", "string"): ("Swiss", "Rotterdam", "Tuesday", "gate", "catering", "euros", "Parking"),
        ("boardDescription", "string"): (
            "Swiss",
            "Rotterdam",
            "Tuesday",
            "gate",
            "catering",
            "euros",
            "Parking",
        ),
        ("version", "string"): (".",),
    }
    for (f, t), shows in cases.items():
        kind = kind_of(f, t)
        assert kind is not None, f
        for _ in range(20):
            v = draw(kind, t, rng, date(2026, 3, 2), people, domains)
            assert fits(f, t, v), (f, v)
        vals = {str(draw(kind, t, rng, date(2026, 3, 2), people, domains)) for _ in range(40)}
        assert any(any(s in v for s in shows) for v in vals), (f, vals)
    # a word inside another is not that word: `preference` holds no `ref` code
    assert not fits("dietary_preference", "string", "EMP-54010")
    assert kind_of("amount", "number") == "money" and kind_of("headcount", "integer") == "count"
    assert kind_of("hire_date", "string") == "past_date" and kind_of("due_date", "string") == "date"
    assert kind_of("status", "string", ("open", "closed")) == "enum"
    for f, t in [("foo", "string"), ("rate", "number"), ("artifact_location", "string"), ("type", "string")]:
        assert kind_of(f, t) is None, f  # no plausible value: never asked for
    assert kind_of("customer_id", "string") is None and kind_of("created_at", "string") is None
    assert all(len(v) >= 4 for _, vals in PHRASES for v in vals)  # traceable in a reply


def test_planted_values_fit_their_fields(library) -> None:
    """Every value a compiled task planted or asks for, on the target and on each trap record, reads
    as a value of its field (no id-shaped codes in a dietary preference)."""
    from compoworld.tasks.families._fieldvalues import fits
    from compoworld.tasks.families.compiled import resources_of

    tasks = _tasks(10, attempts=40)
    checked = 0
    for t in tasks:
        s0 = t.environment().initial["services"]
        for item in t.rubric:
            c = item.check
            if c.get("service") not in SAMPLE.values() or "table" not in c:
                continue
            res = next(r for r in resources_of(registry()[c["service"]]) if r.table == c["table"])
            fields = {f: (k, jt) for f, k, jt in res.values}
            if c["predicate"] == "field_changed" and c["field"] in fields:
                assert fits(c["field"], fields[c["field"]][1], c["to"], res.value_enums.get(c["field"]))
                checked += 1
            if c["predicate"] in ("record_unchanged", "field_changed"):
                rec = s0[c["service"]][c["table"]][c["key"]]
                for f, (_k, jt) in fields.items():
                    if rec.get(f) is not None:
                        assert fits(f, jt, rec[f], res.value_enums.get(f)), (t.meta["family"], f, rec[f])
                        checked += 1
    assert checked >= 10


def test_a_child_goes_under_the_parent_the_email_names(library) -> None:
    """A Resend broadcast belongs to an audience: the colleague names the audience by its name, the
    reference finds it among its namesake and near-duplicate (ids only once a list showed them) and
    creates the broadcast there; every gate passes, a lazy solver does not, and a broadcast put
    under the look-alike audience fails the goal."""
    from compoworld.tasks.adversaries import solve_lazily
    from compoworld.tasks.gates import run_gates
    from compoworld.verify.verifier import verify

    tasks = _tasks(3, attempts=12, families=("compiled.resend.child_request",))
    assert len(tasks) == 3
    for t in tasks:
        failed = {g: why for g, why in run_gates(t).items() if why}
        assert not failed, failed
        tools = [c.tool for c in t.reference_solution]
        assert "resend__resend_list_audiences" in tools, tools
        lister = tools.index("resend__resend_list_audiences")
        # a broadcast or a contact (known by first + last name) goes under the audience
        child = next(x for x in tools if x.startswith(("resend__resend_create_b", "resend__resend_create_c")))
        assert tools.index(child) > lister  # the parent is looked up first
        goal = next(r.check for r in t.rubric if r.check["predicate"] == "record_exists")
        audiences = t.environment().initial["services"]["resend"]["audiences"]
        target = audiences[goal["where"]["audience_id"]]
        twins = [
            a
            for a in audiences.values()
            if a["name"] != target["name"] and a["name"].startswith(target["name"])
        ]
        assert twins and target["name"] not in t.instruction  # only the email names the audience
        assert {tr.kind for tr in t.traps} >= {"near_duplicate", "namesake"}
        assert all(p == 0.0 for p in solve_lazily(t).values()), solve_lazily(t)
        # the same work under the namesake audience does not pass
        env = t.environment()
        for c in t.reference_solution:
            args = dict(c.arguments)
            if c.tool == child:
                args["audienceId"] = twins[0]["id"]
            env.call(c.tool, args)
        assert not verify(t, env.snapshot(), t.answer).passed


def test_every_compiled_service_gets_families_or_a_cause(library) -> None:
    from compoworld.tasks.families.compiled import coverage

    cov = coverage()
    assert set(SAMPLE.values()) | set(PARENTED.values()) <= set(cov)
    assert "child_request" in cov["resend"]["families"]
    for name, c in cov.items():
        assert c["families"] or c["causes"], name  # nothing goes unexplained
        assert all(isinstance(why, str) and why for why in c["causes"].values())


def test_a_person_known_by_first_and_last_name_is_found_by_both(library) -> None:
    """BambooHR stores an employee (and a dependent) as first_name + last_name: the colleague names
    the person in full, the reference finds the record whose two fields read as that name (not the
    namesake with the colleague's first name and the same surname), every gate passes and the
    lazy solvers fail."""
    from compoworld.services import registry as reg
    from compoworld.tasks.adversaries import solve_lazily
    from compoworld.tasks.families.compiled import resource_of
    from compoworld.tasks.gates import run_gates

    res = resource_of(reg()["bamboohr"], "employee")
    assert not isinstance(res, str), res
    assert (res.label, res.label2, res.person, res.staff) == ("first_name", "last_name", True, True)
    drawn = _tasks(30, attempts=80, families=("compiled.bamboohr.lookup_reply",))
    people_tasks = ("the employee", "the dependent")  # BambooHR's other records (datasets) aside
    tasks = [t for t in drawn if any(tr.description.startswith(people_tasks) for tr in t.traps)][:2]
    assert len(tasks) == 2
    for t in tasks:
        failed = {g: why for g, why in run_gates(t).items() if why}
        assert not failed, failed
        assert all(p == 0.0 for p in solve_lazily(t).values()), solve_lazily(t)
        svc = t.environment().initial["services"]["bamboohr"]
        people = [
            r
            for table in svc.values()
            if isinstance(table, dict)
            for r in table.values()
            if isinstance(r, dict) and "last_name" in r
        ]
        namesake = next(tr for tr in t.traps if tr.kind == "namesake")
        first, last = namesake.description.split()[-2:]
        # the namesake is stored in two fields, and the target shares its surname, not its first name
        assert any((p["first_name"], p["last_name"]) == (first, last) for p in people)
        assert any(p["last_name"] == last and p["first_name"] != first for p in people)
        # the near-duplicate shares the surname too: a search by it shows a record older than the
        # target, so "the oldest one shown" is not the target
        near = next(tr for tr in t.traps if tr.kind == "near_duplicate")
        n_first, n_last = near.description.split()[-2:]
        assert n_last == last and n_first not in (first,)
        assert any((p["first_name"], p["last_name"]) == (n_first, n_last) for p in people)


def test_generate_takes_every_service_that_families_lists(library, monkeypatch) -> None:
    """`tasks families --compiled` and `tasks generate` agree: a compiled service with families is a
    valid `--services` pool even where the walk has no moves for it."""
    from compoworld.tasks import moves as moves_mod
    from compoworld.tasks.families.compiled import coverage
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    cov = coverage()
    name = next(s for s, c in sorted(cov.items()) if c["families"])
    monkeypatch.setattr(moves_mod, "moves_by_service", lambda: {})  # no moves at all
    tasks, _ = generate(1, 0, Settings(pool=(name,)))
    assert len(tasks) == 1 and tasks[0].meta["family"].startswith(f"compiled.{name}.")
    with pytest.raises(RuntimeError, match="no moves for service"):
        generate(1, 0, Settings(pool=("no_such_service",)))


def test_families_compiled_json_agrees_with_the_families_generate_draws(library) -> None:
    """`tasks families --compiled --json` names per service the families `tasks generate` can draw
    (every one it lists is registered; a service with none states a cause for each resource)."""
    from typer.testing import CliRunner

    from compoworld.cli.main import app
    from compoworld.tasks.families.compiled import compiled_families

    r = CliRunner().invoke(app, ["tasks", "families", "--compiled", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["services"] == len(out["coverage"]) and out["with_families"] >= 1
    drawn = set(compiled_families())
    for svc, c in out["coverage"].items():
        assert {f"compiled.{svc}.{k}" for k in c["families"]} <= drawn
        assert c["families"] or c["causes"], svc
