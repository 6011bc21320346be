"""The gates' fast paths decide as the plain ones do (issue 22: verified tasks per second).

- `Verdicts` (stop at the first failing check; a verdict kept with the tables it read) gives
  `verify(...).passed` on every state a gate run meets, passing and failing ones;
- a write list run from the state after its shared prefix (`Prefixes`) ends where a fresh run ends,
  also where only the services whose calls differ run (`Prefixes._run_apart`);
- `_wrote` (tables compared by identity, then as dicts) finds the writes `env.diff` finds;
- the attacks given the reference's envelopes decide as the attacks that replay them.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from compoworld.tasks import adversaries, gates
from compoworld.tasks.adversaries import Prefixes, _run, attack
from compoworld.tasks.gates import replay, run_gates
from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import Task
from compoworld.verify.verifier import Verdicts, verify

HARD = Settings(k=5, difficulty="hard")


def _tasks(settings: Settings, n: int, seed: int) -> list[Task]:
    out, i = [], 0
    while len(out) < n and i < 6 * n:
        with contextlib.suppress(Rejected):
            out.append(Task.model_validate(generate_task(seed, i, settings)))
        i += 1
    return out


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    # hard composed work (every theme that fits) and hand-built families (SQL, sheets, files, chat)
    return _tasks(HARD, 3, seed=23) + _tasks(Settings(), 3, seed=29)


def _without_guards(task: Task) -> Task:
    """The task with its guards dropped: sprays, decoys and collateral now pass some states."""
    return task.model_copy(update={"rubric": [r for r in task.rubric if r.kind != "guard"]})


def test_verdicts_equal_verify_on_every_state_a_gate_run_meets(
    tasks: list[Task], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Task, dict[str, Any], str | None, bool]] = []
    plain = Verdicts.passed
    current: list[Task] = []

    def recorded(
        self: Verdicts,
        final: dict[str, Any],
        answer: str | None = None,
        goals_first: bool = False,
        kind: Any = None,
        first: tuple[str, ...] = (),
    ) -> bool:
        got = plain(self, final, answer, goals_first, kind, first)
        seen.append((current[0], final, answer, got))
        return got

    monkeypatch.setattr(Verdicts, "passed", recorded)
    for t in tasks:
        for task in (t, _without_guards(t)):
            current[:] = [task]
            run_gates(task, regenerate=False)
    assert {got for *_, got in seen} == {True, False}  # both verdicts were met
    assert len(seen) > 100
    for task, final, answer, got in seen:
        assert verify(task, final, answer).passed is got, task.id


def test_a_verdict_is_read_again_when_a_table_it_read_changed(tasks: list[Task]) -> None:
    task = tasks[0]
    env = task.environment()
    final, _, _ = replay(env, [c.model_dump() for c in task.reference_solution])
    v = Verdicts(task)
    assert v.passed(final, task.answer) and v.passed(final, task.answer)
    assert not v.passed(env.initial, task.answer)  # s0 shares no written table with the final state
    # the final state with one written table emptied: the checks reading it run again
    written = [
        (s, t)
        for s, tabs in final["services"].items()
        for t, recs in tabs.items()
        if isinstance(recs, dict) and recs and recs is not env.initial["services"][s].get(t)
    ]
    verdicts = []
    for service, table in written:
        svc = {**final["services"][service], table: {}}
        gutted = {**final, "services": {**final["services"], service: svc}}
        verdicts.append(v.passed(gutted, task.answer))
        assert verdicts[-1] is verify(task, gutted, task.answer).passed
    assert False in verdicts
    assert v.passed(final, task.answer)
    if task.answer:  # the answer is read again too
        assert v.passed(final, "no idea") is verify(task, final, "no idea").passed


def test_each_kind_of_state_tries_its_own_last_failing_check_first(tasks: list[Task]) -> None:
    task = tasks[0]
    env = task.environment()
    final, _, _ = replay(env, [c.model_dump() for c in task.reference_solution])
    v = Verdicts(task)
    assert v.passed(final, task.answer)
    default = list(v._order)
    # states that fail: s0, and the final state with one written table emptied at a time
    bad = [env.initial]
    for s, tabs in final["services"].items():
        for t, recs in tabs.items():
            if isinstance(recs, dict) and recs and recs is not env.initial["services"][s].get(t):
                bad.append({**final, "services": {**final["services"], s: {**tabs, t: {}}}})
    bad = [b for b in bad if not verify(task, b, task.answer).passed]  # a UI table's loss fails nothing
    assert len(bad) >= 3
    failed: dict[str, int] = {}
    for n, state in enumerate(bad):
        kind = f"k{n}"
        assert v.passed(state, task.answer, kind=kind) is False
        failed[kind] = v._orders[kind][0]  # the check that failed it, now first for its kind
        assert sorted(v._orders[kind]) == sorted(default)
    assert v._order == default  # the kinds' failures leave the default order alone
    for kind, first in failed.items():  # each kind keeps its own first check
        assert v._orders[kind][0] == first
    for n, state in enumerate(bad):  # and decides as before with it
        assert v.passed(state, task.answer, kind=f"k{n}") is False
    assert v.passed(final, task.answer, kind="k0")
    # a new kind's first order: the checks of its predicates first (in the order given), then the rest
    names = [v._checks[i][0] for i in default]
    want = tuple(dict.fromkeys(reversed(names)))[:2]
    assert v.passed(final, task.answer, kind="new", first=want)
    order = [v._checks[i][0] for i in v._orders["new"]]
    k = sum(names.count(p) for p in want)
    assert order[:k] == [p for p in want for _ in range(names.count(p))]
    assert order[k:] == [p for p in names if p not in want]  # the rest in the default order
    assert sorted(v._orders["new"]) == sorted(default)


def test_prefix_runs_end_where_fresh_runs_end(tasks: list[Task], monkeypatch: pytest.MonkeyPatch) -> None:
    plain = Prefixes.run
    runs = []

    def checked(self: Prefixes, calls: list[dict[str, Any]]) -> dict[str, Any]:
        out = plain(self, calls)
        fresh = Task.environment(current[0])
        fresh.restore(self.at[0])  # s0, or the reference's end state for a spray
        for c in calls:  # every call, inert ones too
            fresh.call(c["tool"], c["arguments"])
        runs.append((self.env.state_hash(), fresh.state_hash()))
        return out

    current: list[Task] = []
    monkeypatch.setattr(Prefixes, "run", checked)
    apart = Prefixes._run_apart
    shared = []

    def counted(self: Prefixes, calls: list[dict[str, Any]], j: int, services: set[str]) -> dict[str, Any]:
        out = apart(self, calls, j, services)
        end = self._state(len(self.writes))  # the services whose calls are the writes' own: its tables
        shared.append(
            all(
                table is end["services"][s][t] or table.get("image") is end["services"][s][t]["image"]
                for s in out["services"]
                if s not in services
                for t, table in out["services"][s].items()
            )
        )
        return out

    monkeypatch.setattr(Prefixes, "_run_apart", counted)
    for t in tasks:
        current[:] = [t]
        run_gates(t, regenerate=False)
    assert runs and all(a == b for a, b in runs)
    assert len(shared) > 20 and all(shared)  # most runs ran apart (every hard task starts in the browser)


def test_wrote_finds_the_writes_env_diff_finds(tasks: list[Task], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = gates._wrote
    checked = 0

    def both(env: Any, before: dict[str, Any]) -> bool:
        nonlocal checked
        got = fast(env, before)
        plain = any(
            ch.service not in env.services
            or ch.path.split("/", 1)[0] not in env.services[ch.service].ephemeral_tables
            for ch in env.diff(before, env.snapshot())
        )
        assert got is plain
        checked += 1
        return got

    monkeypatch.setattr(gates, "_wrote", both)
    for t in tasks:
        replay(t.environment(), [c.model_dump() for c in t.reference_solution])
    assert checked > 20


def test_attacks_given_the_envelopes_decide_as_attacks_that_replay(tasks: list[Task]) -> None:
    for t in tasks:
        for task in (t, _without_guards(t)):
            env = task.environment()
            final, results, _ = replay(env, [c.model_dump() for c in task.reference_solution])
            given = attack(task, env, final, observed=results)
            env.restore(final)
            assert given == adversaries.attack(task, env, final), task.id


def test_verdicts_on_malformed_states_fail_as_verify_fails(tasks: list[Task]) -> None:
    task = tasks[-1]
    v = Verdicts(task)
    env = task.environment()
    final, _, _ = replay(env, [c.model_dump() for c in task.reference_solution])
    assert v.passed(final, task.answer)  # verdicts kept from a good state first
    for bad in ({"services": []}, {"services": {s: 5 for s in final["services"]}}, {}, {"clock": None}):
        assert v.passed(bad, task.answer) is verify(task, bad, task.answer).passed is False


def test_stopping_early_reports_the_gate_a_full_run_reports_first(tasks: list[Task]) -> None:
    from compoworld.tasks.gates import GATES

    def first(out: dict[str, str | None]) -> str | None:
        return next((g for g in GATES if out[g]), None)

    task = tasks[-1]
    env = task.environment()
    _, _, wrote = replay(env, [c.model_dump() for c in task.reference_solution])
    last = task.reference_solution[wrote[-1]]
    broken = [
        task,
        task.model_copy(update={"reference_solution": [*task.reference_solution, last]}),  # necessary
        task.model_copy(update={"reference_solution": task.reference_solution[:-1]}),  # solvable
        task.model_copy(update={"initial_state_hash": "0" * 32}),  # deterministic
        _without_guards(task),  # adversarial, where a guard was what stopped an attack
        task.model_copy(update={"reference_solution": task.reference_solution[::-1]}),  # grounded
    ]
    got = [first(run_gates(t, regenerate=False, stop_early=True)) for t in broken]
    assert got == [first(run_gates(t, regenerate=False)) for t in broken]
    assert got[0] is None and len({g for g in got[1:] if g}) >= 2, got


def test_the_states_the_writes_reach_are_the_replays_marks(tasks: list[Task]) -> None:
    from compoworld.tasks.adversaries import write_calls

    checked = 0
    for t in tasks:
        env = t.environment()
        calls = [c.model_dump() for c in t.reference_solution]
        marks: dict[int, dict[str, Any]] = {}
        quiet: set[int] = set()
        replay(env, calls, marks=marks, quiet=quiet)
        reached = gates._reached(env, calls, marks, quiet)
        writes = write_calls(env, t)
        assert reached and set(reached) <= set(range(len(writes) + 1))
        for j, state in reached.items():
            fresh = t.environment()
            _run(fresh, writes[:j])  # the first j writes alone, from s0
            env.restore(state)
            assert env.state_hash() == fresh.state_hash(), (t.id, j)
            checked += 1
    assert checked > 10


def test_the_gate_takes_the_generations_grounding_only_for_the_same_replay() -> None:
    from compoworld.tasks.generator import Checkpoint

    cp, i = Checkpoint(), 0
    while True:
        try:
            task = Task.model_validate(generate_task(31, i, HARD, cp))
            break
        except Rejected:
            cp, i = Checkpoint(), i + 1
    assert cp.grounded is not None and cp.grounded[1] == []
    assert run_gates(task, regenerate=False, checkpoint=cp)["grounded"] is None
    # another reference (its turns reversed) under the same checkpoint is grounded again, and fails
    rev = task.model_copy(update={"reference_solution": task.reference_solution[::-1]})
    got = run_gates(rev, regenerate=False, checkpoint=cp)["grounded"]
    assert got is not None and got == run_gates(rev, regenerate=False)["grounded"]


def test_checks_without_their_diagnoses_decide_and_score_as_with_them(tasks: list[Task]) -> None:
    from compoworld.verify.verifier import verify_checks

    for t in tasks:
        env = t.environment()
        final, _, _ = replay(env, [c.model_dump() for c in t.reference_solution])
        for task in (t, _without_guards(t)):
            for state, answer in ((env.initial, None), (final, task.answer), (final, None)):
                full = verify_checks(task.rubric, task.initial_state, state, answer)
                quiet = verify_checks(task.rubric, task.initial_state, state, answer, explain=False)
                assert [c.passed for c in quiet.checks] == [c.passed for c in full.checks], task.id
                assert (quiet.passed, quiet.score) == (full.passed, full.score)


def test_an_inert_call_changes_nothing_in_any_state_a_gate_run_meets(tasks: list[Task]) -> None:
    """Calls left out of end-state replays (`Environment.inert`: shell lines of reads only) change
    nothing wherever they run: from s0 and from every state the reference passes through."""
    seen = 0
    for t in tasks:
        env = t.environment()
        calls = [c.model_dump() for c in t.reference_solution]
        marks: dict[int, dict[str, Any]] = {}
        final, _, _ = replay(env, calls, marks=marks)
        inert = [c for c in calls if env.inert(c["tool"], c["arguments"])]
        for state in (env.initial, final, *marks.values()):
            for c in inert:
                env.restore(state)
                before = env.state_hash()
                env.call(c["tool"], c["arguments"])
                assert env.state_hash() == before, c
                seen += 1
    assert seen  # the hard tasks read CSV files through the shell


def test_which_shell_lines_read_only() -> None:
    from compoworld.interfaces.shell import reads_only

    for line in (
        "grep -i acme Documents/customers.csv",
        "cat a.csv | grep x | wc -l",
        "csv where status=open < claims.csv",
        "cd Documents && ls; head -n 3 notes.txt",
        "jq .items products.json",
    ):
        assert reads_only(line), line
    for line in (
        "grep x a.csv > out.txt",
        "echo hi >> log.csv",
        "cat a | tee b",
        "mkdir -p x",
        "ls; rm a.csv",
        "ls *.csv",  # a glob expands to names
        "grep 'unclosed",  # does not lex
        "grep x a.csv && cp a.csv b.csv",
        "'rm' a.csv",
    ):
        assert not reads_only(line), line


def _plain_others(task: Task) -> dict[str, list[Any]]:
    """`adversaries._others` as first written: every value looked for in the whole task's JSON."""
    text = task.to_json().decode().casefold()
    s0 = task.initial_state["services"]
    emails = sorted(
        {
            e
            for svc in ("hr", "email", "crm")
            for rec in (s0.get(svc, {}).get("employees", {}) or {}).values()
            if isinstance(rec, dict)
            for e in [rec.get("workEmail") or rec.get("email")]
            if isinstance(e, str) and e.casefold() not in text
        }
    )
    if not emails:
        user = task.meta.get("user", "")
        emails = [f"someone.else@{user.rsplit('@', 1)[-1].rstrip('>') or 'example.com'}"]
    chans = sorted(k for k in (s0.get("chat", {}).get("channels", {}) or {}) if k.casefold() not in text)
    dchans = sorted(
        k
        for k, v in (s0.get("community", {}).get("channels", {}) or {}).items()
        if k.casefold() not in text and isinstance(v, dict) and v.get("type", 0) == 0
    )
    return {"email": emails[:2], "chat": chans[:2], "community": dchans[:2], "phone": ["+15550001111"]}


def test_the_spam_adversarys_recipients_are_those_the_whole_task_json_gives(tasks: list[Task]) -> None:
    """`_others` reads the task's JSON only for a value JSON escapes (any other value of s0 is in it)."""
    import copy

    for t in tasks:
        assert adversaries._others(t.environment(), t) == _plain_others(t), t.id
    t = next(t for t in tasks if (t.initial_state["services"].get("hr") or {}).get("employees"))
    s0 = copy.deepcopy(t.initial_state)
    rec = next(iter(s0["services"]["hr"]["employees"].values()))
    rec["workEmail"] = 'o"neil@example.com'  # JSON writes it escaped: not in the task's JSON as it is
    odd = t.model_copy(update={"initial_state": s0})
    assert adversaries._others(odd.environment(), odd) == _plain_others(odd)
    assert adversaries._others(odd.environment(), odd)["email"][0] == 'o"neil@example.com'


def test_the_build_digest_tells_apart_database_images_of_the_same_rows() -> None:
    """A regeneration that reaches its checkpoint's digest is not compared byte for byte, so the
    digest holds whatever of s0 the task's bytes hold: a database image too, which its state hash
    (by the rows) does not tell from another image of the same rows."""
    import random
    from types import SimpleNamespace

    from compoworld.core.environment import Environment
    from compoworld.tasks.generator import _build_digest

    env = Environment(services=["sql"], seed=4)
    s0, h0 = env.snapshot(), env.state_hash()
    for q in (
        "INSERT INTO invoices (id, order_id, amount, status, due_date) VALUES ('INV-X', 10001, 5, 'open', '2026-01-01')",
        "DELETE FROM invoices WHERE id = 'INV-X'",
    ):
        assert env.call("sql__write_query", {"query": q})["success"]
    s1 = env.snapshot()
    assert env.state_hash() == h0 and s1["services"]["sql"] != s0["services"]["sql"]

    def digest(snap: dict[str, Any]) -> bytes:
        e = Environment.from_snapshot(["sql"], snap)
        b = SimpleNamespace(env=e, rng=random.Random(1), s0=snap, h0=e.state_hash())
        return _build_digest(b, Settings(), ())

    assert digest(s0) == digest(s0) and digest(s0) != digest(s1)


def test_the_initial_verdict_without_the_guards_is_verify_checks(tasks: list[Task]) -> None:
    """`gates._initially` skips the guards where every goal fails on s0: V and the score are
    `verify_checks`' on every task, and on the same tasks with a goal that already holds on s0
    (where the guards decide whether doing nothing earns credit) and with a failing guard."""
    from compoworld.tasks.model import RubricItem
    from compoworld.verify.verifier import verify_checks

    holds = {"predicate": "no_changes_except", "allow": []}  # nothing changed: true on s0
    seen = set()
    for task in tasks:
        env = task.environment()
        s0 = env.initial
        held = RubricItem(id="held", description="holds on s0", kind="goal", check=holds)
        # a guard no state passes: the answer is asked for and s0 gives none
        broken = RubricItem(
            id="broken",
            description="fails on s0",
            kind="guard",
            check={"predicate": "answer_contains", "value": "no such answer 9f3"},
        )
        for rubric in (task.rubric, [*task.rubric, held], [*task.rubric, held, broken]):
            t = task.model_copy(update={"rubric": rubric})
            want = verify_checks(rubric, task.initial_state, s0, None, explain=False)
            got = gates._initially(t, s0)
            assert (got.passed, got.score) == (want.passed, want.score)
            seen.add((want.passed, want.score > 0))
    assert (False, False) in seen and (False, True) in seen  # both paths were taken
