"""The verifier: V = all checks pass. The score credits progress only.

A rubric item is a *goal* check (the work asked for) or a *guard* (a trap left alone, nothing else
changed). The partial score is the weighted share of goal checks that pass, and it is 0 whenever a
guard fails: guards are a condition on the credit, never a free share of it, so an agent that does
nothing scores 0 and one that sprays writes over every candidate scores 0.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel

from compoworld.verify.predicates import PREDICATES, CheckContext, validate_check
from compoworld.verify.state_view import StateView

if TYPE_CHECKING:
    from compoworld.tasks.model import Task


class CheckResult(BaseModel):
    id: str
    passed: bool
    weight: float
    detail: str
    kind: str = "goal"


class VerifyResult(BaseModel):
    checks: list[CheckResult]
    passed: bool
    score: float

    @property
    def V(self) -> int:  # noqa: N802 (the papers' name)
        return int(self.passed)


def verify_checks(
    rubric: list[Any], s0: dict[str, Any], final: dict[str, Any], answer: str | None, explain: bool = True
) -> VerifyResult:
    """Every check's verdict and detail; without `explain` a failed check's detail may be empty
    (its verdict and the score are the same: the gates, which read only those)."""
    ctx = (CheckContext if explain else _Quiet)(StateView(s0), StateView(final), answer)
    results = []
    for item in rubric:
        item = item if isinstance(item, dict) else _fields(item)
        name, args = _validated(item["check"])
        try:
            passed, detail = PREDICATES[name][1](ctx, args)
        except Exception as e:  # a broken check fails loudly instead of passing
            passed, detail = False, f"check raised {type(e).__name__}: {e}"
        results.append(
            CheckResult(
                id=item["id"],
                passed=bool(passed),
                weight=float(item.get("weight", 1.0)),
                detail=detail,
                kind=item.get("kind") or "goal",
            )
        )
    goals = [r for r in results if r.kind == "goal"]
    guards_ok = all(r.passed for r in results if r.kind != "goal")
    total = sum(r.weight for r in goals)
    score = (sum(r.weight for r in goals if r.passed) / total if total else 1.0) if guards_ok else 0.0
    if not goals and not all(r.passed for r in results):
        score = 0.0
    return VerifyResult(
        checks=results, passed=all(r.passed for r in results) and bool(results), score=round(score, 6)
    )


class _Quiet(CheckContext):
    explain = False


def _fields(item: Any) -> dict[str, Any]:
    """A rubric item's fields as `model_dump` gives them, its check not copied (it is only read)."""
    return {"id": item.id, "weight": item.weight, "kind": item.kind, "check": item.check}


# validated arguments by check: a gate run verifies one rubric against dozens of states
_VALIDATED: dict[int, tuple[dict[str, Any], Any, str, Any]] = {}


def _validated(check: dict[str, Any]) -> tuple[str, Any]:
    # the same dict, not changed since: its JSON is what it was (bytes keep types and order
    # apart; a copy of the whole check, compared deeply, cost more than its validation)
    try:
        now: Any = orjson.dumps(check)
    except TypeError:  # what JSON cannot hold: a deep copy, compared deeply
        now = None
    hit = _VALIDATED.get(id(check))
    if hit is not None and hit[0] is check and (hit[1] == now if now is not None else hit[1] == check):
        return hit[2], hit[3]
    name, args = validate_check(check)
    if len(_VALIDATED) >= 4096:
        _VALIDATED.clear()
    _VALIDATED[id(check)] = (check, now if now is not None else copy.deepcopy(check), name, args)
    return name, args


def verify(
    task: Task | dict[str, Any], final_state: dict[str, Any], answer: str | None = None
) -> VerifyResult:
    """Per-check results, `passed` (V = 1 only if every check passes) and the weighted score.

    `task` is a `Task` or the same task as plain data (a line of a JSONL task file, parsed)."""
    if isinstance(task, dict):
        task = _task_of(task)
    return verify_checks(task.rubric, task.initial_state, final_state, answer)


def _task_of(data: dict[str, Any]) -> Task:
    """A task dict as `json.loads` gives it from a JSONL line: its s0 is stored as a patch against a
    shared base world, so it is rebuilt (and the dict validated) the way `load_tasks` does."""
    from pydantic import ValidationError

    from compoworld.tasks.model import Task, _Rebuilder, unpack_line  # lazy: tasks sits above verify

    try:
        data = unpack_line(dict(data))
    except ValueError as e:
        raise ValueError(f"verify: not a valid task dict: {e}") from None
    if "initial_state" not in data and "initial_state_patch" in data:
        data["initial_state"] = _Rebuilder()(data, f"task {data.get('id')!r}")
    try:
        return Task.model_validate(data)
    except ValidationError as e:
        raise ValueError(
            f"verify: not a valid task dict: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}"
        ) from None


class _Reads(StateView):
    """A snapshot's view that notes what a check reads through it: a table, a service's table list,
    every service, or the whole snapshot (a read it cannot name is the whole snapshot)."""

    def __init__(self, snapshot: dict[str, Any] | None) -> None:
        self.log: set[tuple[str, ...]] | None = None
        super().__init__(snapshot)

    @property
    def snapshot(self) -> dict[str, Any]:  # type: ignore[override]
        if self.log is not None:
            self.log.add(("S",))
        return self._snapshot

    @snapshot.setter
    def snapshot(self, value: dict[str, Any]) -> None:
        self._snapshot = value

    def _quiet(self, what: tuple[str, ...], fn: Any, *args: Any) -> Any:
        log = self.log
        if log is None:
            return fn(*args)
        log.add(what)
        self.log = None
        try:
            return fn(*args)
        finally:
            self.log = log

    def table(self, service: str, table: str) -> dict[str, Any]:
        return self._quiet(("t", service, table), super().table, service, table)

    def tables(self, service: str) -> list[str]:
        return self._quiet(("T", service), super().tables, service)

    def services(self) -> dict[str, Any]:
        return self._quiet(("s",), super().services)

    def token(self, dep: tuple[str, ...]) -> Any:
        """What a read saw: the table (any empty one alike), the service's table names (its keys
        and its database image), every service's data, or the snapshot itself (see `_same`)."""
        svcs = self._snapshot.get("services", {})
        if dep[0] == "t":
            try:
                got = super().table(dep[1], dep[2])
            except Exception:  # noqa: BLE001 (a malformed state: nothing kept matches, the check runs)
                return object()
            return got if got else _EMPTY
        if dep[0] == "T":
            svc = svcs.get(dep[1])
            if not isinstance(svc, dict):
                return _EMPTY if svc is None else object()
            return _Names((*svc, (svc.get("_sqlite") or {}).get("image") if "_sqlite" in svc else None))
        if dep[0] == "s":
            return tuple(svcs.items())
        return self._snapshot


class _Ctx(CheckContext):
    """A check's context that notes whether the check read the answer; only the verdict is used."""

    read_answer = False
    explain = False

    @property
    def answer(self) -> str | None:  # type: ignore[override]
        self.read_answer = True
        return self._answer

    @answer.setter
    def answer(self, value: str | None) -> None:
        self._answer = value


_EMPTY: Any = object()


class _Names(tuple):
    """A service's table names (and its database image): equal when equal."""


def _same(a: Any, b: Any, blobs: dict[int, tuple[Any, bytes | None]]) -> bool:
    """Two reads saw the same: the very same object, or tables whose JSON is byte-identical (runs
    from s0 build new tables with the same records; bytes keep types and order apart, which `==`
    would not: 1 == 1.0 == True)."""
    if a is b:
        return True
    if type(a) is _Names:
        return type(b) is _Names and a == b
    if type(a) is tuple:  # every service: by identity
        return (
            type(b) is tuple
            and len(a) == len(b)
            and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b, strict=True))
        )
    if type(a) is not dict or type(b) is not dict or len(a) != len(b):
        return False
    x, y = _blob(a, blobs), _blob(b, blobs)
    return x is not None and x == y


def _blob(table: dict[str, Any], blobs: dict[int, tuple[Any, bytes | None]]) -> bytes | None:
    hit = blobs.get(id(table))
    if hit is None or hit[0] is not table:
        try:
            data = orjson.dumps(table)
        except TypeError:  # keys or values JSON cannot hold: never the same
            data = None
        hit = blobs[id(table)] = (table, data)
    return hit[1]


# predicate -> rank in the first order of `Verdicts` (lower first; 3 for the rest): from how often
# each failed on the states of hard tasks' gate runs (no_changes_except 2 in 3, value_not_written 1 in 30)
_FAILS_FIRST = {
    "rows_written": 0,
    "no_changes_except": 0,
    "recipients_only": 1,
    "field_changed": 1,
    "message_sent": 2,
    "record_exists": 2,
    "value_not_written": 4,
    "text_carries": 4,
}


class Verdicts:
    """V alone, for many states of one task (a gate run verifies one rubric against dozens of
    adversaries' and leave-one-out states). V is a product, so the verdict is `verify(...).passed`
    exactly; each check runs as `verify` runs it, but fewer run:
    - it stops at the first failing check, trying first the one that failed last (an adversary's
      states tend to fail the same guard);
    - a check is a pure function of what it reads: s0 (fixed here), the tables of the final state
      it read, and the answer if it read it. Each verdict is kept with those reads; a state whose
      tables are the very same objects (copy-on-write snapshots share every table a run did not
      write) or byte-identical JSON, and the same answer where it was read, gets the kept verdict
      without running.
    The rubric and s0 are read once; neither may change meanwhile."""

    def __init__(self, task: Task) -> None:
        self._s0 = StateView(task.initial_state)
        self._checks = [
            _validated(_fields(i)["check"] if not isinstance(i, dict) else i["check"]) for i in task.rubric
        ]
        # the checks most states of a gate run fail first (an adversary breaks the record-level
        # guards, the rows or the recipients more often than a value guard): fewer run before one fails
        self._order = sorted(range(len(self._checks)), key=lambda i: _FAILS_FIRST.get(self._checks[i][0], 3))
        self._first = list(self._order)
        # one order per kind of state (a decoy's states fail other checks than a spray's): each
        # kind's last failing check is tried first on its next state
        self._orders: dict[Any, list[int]] = {}
        self._goal = [
            ((i.get("kind") if isinstance(i, dict) else i.kind) or "goal") == "goal" for i in task.rubric
        ]
        self._blobs: dict[int, tuple[Any, bytes | None]] = {}  # a table's JSON, by the table (kept)
        # per check: (reads, what each read saw, whether it read the answer, the answer, verdict)
        self._kept: list[list[tuple[tuple[tuple[str, ...], ...], tuple[Any, ...], bool, Any, bool]]] = [
            [] for _ in self._checks
        ]

    def passed(
        self,
        final: dict[str, Any],
        answer: str | None = None,
        goals_first: bool = False,
        kind: Any = None,
        first: tuple[str, ...] = (),
    ) -> bool:
        """V of `final` with `answer`. `goals_first`: try the goal checks before the guards (a
        state that lacks some of the work, as the necessary gate's, fails a goal and keeps every
        guard); `kind`: the kind of state (an adversary's name), whose own last failing check is
        tried first; `first`: the predicates that kind's states fail most, tried first until one
        has failed (in this order). Only the order changes, not the verdict."""
        view = _Reads(final)
        seen: dict[tuple[str, ...], Any] = {}

        def token(dep: tuple[str, ...]) -> Any:
            if dep not in seen:
                try:
                    seen[dep] = view.token(dep)
                except Exception:  # noqa: BLE001 (a malformed state: nothing kept matches, the check runs)
                    seen[dep] = object()
            return seen[dep]

        front = self._order if kind is None else self._orders.get(kind)
        if front is None:
            rank = {p: r for r, p in enumerate(first)}
            front = self._orders[kind] = sorted(
                self._first, key=lambda i: rank.get(self._checks[i][0], len(rank))
            )
        order = front
        if goals_first:
            order = [i for i in order if self._goal[i]] + [i for i in order if not self._goal[i]]
        blobs = self._blobs
        for i in order:
            ok = None
            for deps, toks, read_answer, ans, verdict in self._kept[i]:
                if read_answer and ans != answer:
                    continue
                # each read saw the same (a plain loop: this runs for every kept verdict of every
                # check of every state, and generator frames cost more than the tests)
                for d, t in zip(deps, toks, strict=True):
                    got = seen[d] if d in seen else token(d)
                    if got is not t and not _same(got, t, blobs):
                        break
                else:
                    ok = verdict
                    break
            if ok is None:
                ok = self._run(i, view, answer, token)
            if not ok:
                if front[0] != i:
                    front.remove(i)
                    front.insert(0, i)
                return False
        return bool(self._checks)

    def _run(self, i: int, view: _Reads, answer: str | None, token: Any) -> bool:
        name, args = self._checks[i]
        ctx = _Ctx(self._s0, view, answer)
        view.log = set()
        try:
            ok = bool(PREDICATES[name][1](ctx, args)[0])
        except Exception:  # noqa: BLE001 (as in verify_checks: a broken check fails)
            ok = False
        finally:
            deps, view.log = tuple(view.log), None
        kept = self._kept[i]
        if len(kept) >= 16:
            kept.pop(0)
        kept.append((deps, tuple(token(d) for d in deps), ctx.read_answer, answer, ok))
        return ok
