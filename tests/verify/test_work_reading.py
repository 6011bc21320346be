"""The verifier reads the work, on generated tasks: for each case a failing attack and the honest
variant that must pass (the equivalence suite grows with every family: it runs on whatever the
generator draws)."""

from __future__ import annotations

import pytest

from compoworld.tasks.adversaries import ATTACKS, _answer_attacks, _with_cc, gut, write_calls
from compoworld.tasks.gates import replay
from compoworld.tasks.variants import honest_variants, run_variant
from compoworld.verify.verifier import verify


@pytest.fixture(scope="module")
def tasks():
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    out = generate(24, 4242, Settings())[0]
    out += generate(8, 77, Settings(answer_rate=1.0))[0]
    return out


def _final(task):
    env = task.environment()
    final, _, _ = replay(env, [c.model_dump() for c in task.reference_solution])
    return env, final


def _state_after(task, calls):
    env = task.environment()
    for c in calls:
        env.call(c["tool"], c["arguments"])
    return env.snapshot()


def test_every_honest_variant_passes(tasks) -> None:
    tried = 0
    for t in tasks:
        for name, (calls, answer) in honest_variants(t, t.environment()).items():
            ok, why = run_variant(t, calls, answer)
            assert ok, (t.meta["family"], name, why)
            tried += 1
    assert tried >= 2 * len(tasks)


def test_every_answer_task_rejects_hedges_refusals_wrong_units_and_dumps(tasks) -> None:
    asked = [t for t in tasks if t.answer]
    assert len(asked) >= 4
    for t in asked:
        env, final = _final(t)
        assert verify(t, final, t.answer).passed
        attacks = _answer_attacks(t)
        assert {"hedge", "refusal"} <= set(attacks)
        for name, texts in attacks.items():
            for text in texts:
                assert not verify(t, final, text).passed, (t.meta["family"], name, text)
        numbers = sorted({str(r.check["value"]) for r in t.rubric if "value" in r.check} - {t.answer})
        dump = ", ".join([*numbers, "100.00", "250.00", t.answer, "999.00", "1234.00"])
        assert not verify(t, final, dump).passed, (t.meta["family"], dump)
        # and the honest forms of the same answer pass
        variants = honest_variants(t, env)
        for name in ("answer_forms", "labelled_context"):
            if name in variants:
                calls, answer = variants[name]
                assert run_variant(t, calls, answer)[0], (t.meta["family"], name, answer)


def test_every_text_producing_task_rejects_gutted_text(tasks) -> None:
    texty = 0
    for t in tasks:
        env = t.environment()
        writes = write_calls(env, t)
        for form in ("Done.", "Hi, all sorted on our side. Thanks!"):
            gutted = [{**c, "arguments": gut(c["arguments"], form=form)} for c in writes]
            if gutted == writes:
                break
            texty += form == "Done."
            assert not verify(t, _state_after(t, gutted), t.answer).passed, (t.meta["family"], form)
        variants = honest_variants(t, env)
        if "paraphrase" in variants:
            assert run_variant(t, *variants["paraphrase"])[0], t.meta["family"]
    assert texty >= len(tasks) // 2


def test_an_extra_cc_fails_and_the_exact_recipients_pass(tasks) -> None:
    tried = 0
    for t in tasks:
        env = t.environment()
        writes = write_calls(env, t)
        ccd = [_with_cc(env, c, "someone.else@elsewhere.example") or c for c in writes]
        if ccd == writes:
            continue
        state = _state_after(t, ccd)
        if state == _final(t)[1]:
            continue  # the service ignores the field
        tried += 1
        assert not verify(t, state, t.answer).passed, t.meta["family"]
        assert verify(t, _final(t)[1], t.answer).passed
    assert tried >= 3


def test_the_gate_runs_the_attack_suite_and_the_kept_tasks_hold(tasks) -> None:
    from compoworld.tasks.adversaries import attack

    for t in tasks[:8]:
        env, final = _final(t)
        env.reset()
        result = attack(t, env, final)
        assert set(ATTACKS) <= set(result)
        assert not any(result.values()), (t.meta["family"], {k: v for k, v in result.items() if v})


def test_deleting_a_record_the_task_only_edits_fails(tasks) -> None:
    import copy

    tried = 0
    for t in tasks:
        env, final = _final(t)
        guard = next(r.check for r in t.rubric if r.check["predicate"] == "no_changes_except")
        edit = next((a for a in guard["allow"] if a.get("key") and not a.get("remove")), None)
        recs = final["services"].get(edit["service"], {}).get(edit["table"]) if edit else None
        if not isinstance(recs, dict):
            continue
        key = next((k for k in recs if str(k) == edit["key"]), None)
        if key is None:
            continue
        state = copy.deepcopy(final)
        del state["services"][edit["service"]][edit["table"]][key]
        assert not verify(t, state, t.answer).passed, t.meta["family"]
        tried += 1
    assert tried >= 3


def test_derived_content_checks_name_facts_and_rivals(tasks) -> None:
    """Every text-producing task has a content check, and its facts or substance are not empty."""
    for t in tasks:
        content = [r.check for r in t.rubric if r.check["predicate"] == "text_carries"]
        writes_text = any(gut(c["arguments"]) != c["arguments"] for c in write_calls(t.environment(), t))
        if writes_text:
            assert content, t.meta["family"]
        for c in content:
            assert c["facts"] or c["substance"] or c["forbid"], (t.meta["family"], c)


def test_tasks_check_counts_the_attack_suite_per_family(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from compoworld.cli.main import app
    from compoworld.tasks.adversaries import ADVERSARIES

    runner = CliRunner()
    out = tmp_path / "t.jsonl"
    assert (
        runner.invoke(app, ["tasks", "generate", "--n", "3", "--seed", "5", "--out", str(out)]).exit_code == 0
    )
    r = runner.invoke(app, ["tasks", "check", str(out), "--json", "--no-regenerate"])
    summary = json.loads(r.output)
    fams = summary["adversaries_by_family"]
    assert sum(f["tasks"] for f in fams.values()) == 3
    assert all(set(f) <= {"tasks", *ADVERSARIES} for f in fams.values())
    assert {f"adversary:{a}" for a in ATTACKS} <= set(summary["failures_by_gate"])
    table = runner.invoke(app, ["tasks", "check", str(out), "--no-regenerate"]).output
    assert "attack suite by family" in table


def _hand_built() -> list[str]:
    from compoworld.tasks.families import families

    return sorted(n for n in families() if not n.startswith("compiled."))


@pytest.mark.parametrize("name", _hand_built())
def test_each_family_accepts_its_honest_variants(name: str) -> None:
    """The equivalence suite per family: it grows with every family registered (and the work
    attacks of every family fail)."""
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task

    for i in range(4):
        try:
            t = Task.model_validate(generate_task(300 + i, i, Settings(families=(name,))))
        except Rejected:
            continue
        variants = honest_variants(t, t.environment())
        assert "extra_reads" in variants
        for vname, (calls, answer) in variants.items():
            ok, why = run_variant(t, calls, answer)
            assert ok, (t.id, vname, why)
        # and its work attacks fail: a mixed-up or extra log row, a touched record (or one left
        # alone) moved to another state ("leave the ticket open"), the wrong person mentioned
        from compoworld.tasks.work_attacks import work_attacks

        for attack_name, what, state in work_attacks(t, _final(t)[1]):
            assert not verify(t, state, t.answer).passed, (t.id, attack_name, what)
        return
    pytest.skip(f"{name} drew no task in 4 tries")
