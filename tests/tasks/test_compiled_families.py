"""Workflow families over compiled services: a few real corpus specs, compiled here, give tasks that
pass every gate, and a correct alternative solution (other wording, an extra read) passes too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compoworld.services import registry
from compoworld.spec import compile_spec
from compoworld.tasks import generator, moves
from compoworld.tasks.workflow import DOMAINS

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
SAMPLE = {
    "klavis_shopify.json": "shopify",
    "klavis_linear.json": "linear",
    "klavis_mailchimp.json": "mailchimp",
}

pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")


def _clear() -> None:
    from compoworld.tasks.families import compiled

    registry.cache_clear()
    moves.all_moves.cache_clear()
    generator.base_world.cache_clear()
    compiled._families_for.cache_clear()


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("manifests")
    for spec, name in SAMPLE.items():
        (out / f"{name}.json").write_text(json.dumps(compile_spec(SPECS / spec, name, 0)))
    mp = pytest.MonkeyPatch()
    mp.setenv("COMPOWORLD_MANIFESTS", str(out))
    _clear()
    yield out
    mp.undo()
    _clear()


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


def _tasks(n: int) -> list:
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task

    out = []
    settings = Settings(families=tuple(f"compiled.{s}" for s in SAMPLE.values()))
    for i in range(40):
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
        wants = [
            str(x)
            for r in t.rubric
            if r.check.get("predicate") == "message_sent"
            for x in r.check.get("contains", [])
        ]
        env = t.environment()
        lister = next(c for c in t.reference_solution if c.tool.split("__")[0] != "email")
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
