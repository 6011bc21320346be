"""The verifier: V = all checks pass. The score credits progress only.

A rubric item is a *goal* check (the work asked for) or a *guard* (a trap left alone, nothing else
changed). The partial score is the weighted share of goal checks that pass, and it is 0 whenever a
guard fails: guards are a condition on the credit, never a free share of it, so an agent that does
nothing scores 0 and one that sprays writes over every candidate scores 0.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

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
    rubric: list[Any], s0: dict[str, Any], final: dict[str, Any], answer: str | None
) -> VerifyResult:
    ctx = CheckContext(StateView(s0), StateView(final), answer)
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


def _fields(item: Any) -> dict[str, Any]:
    """A rubric item's fields as `model_dump` gives them, its check not copied (it is only read)."""
    return {"id": item.id, "weight": item.weight, "kind": item.kind, "check": item.check}


# validated arguments by check: a gate run verifies one rubric against dozens of states
_VALIDATED: dict[int, tuple[dict[str, Any], dict[str, Any], str, Any]] = {}


def _validated(check: dict[str, Any]) -> tuple[str, Any]:
    hit = _VALIDATED.get(id(check))
    if hit is not None and hit[0] is check and hit[1] == check:  # the same dict, not changed since
        return hit[2], hit[3]
    name, args = validate_check(check)
    if len(_VALIDATED) >= 4096:
        _VALIDATED.clear()
    _VALIDATED[id(check)] = (check, copy.deepcopy(check), name, args)
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


class Verdicts:
    """V alone, for many states of one task (a gate run verifies one rubric against dozens of
    adversaries' and leave-one-out states). It stops at the first failing check and tries first the
    checks that failed most recently (an adversary's states tend to fail the same guard). V is a
    product, so the verdict is `verify(...).passed` exactly: each check runs as `verify` runs it,
    only fewer of them run. The rubric and s0 are read once; neither may change meanwhile."""

    def __init__(self, task: Task) -> None:
        self._s0 = StateView(task.initial_state)
        self._checks = [
            _validated(_fields(i)["check"] if not isinstance(i, dict) else i["check"]) for i in task.rubric
        ]
        self._order = list(range(len(self._checks)))

    def passed(self, final: dict[str, Any], answer: str | None = None) -> bool:
        ctx = CheckContext(self._s0, StateView(final), answer)
        for pos, i in enumerate(self._order):
            name, args = self._checks[i]
            try:
                ok = bool(PREDICATES[name][1](ctx, args)[0])
            except Exception:  # noqa: BLE001 (as in verify_checks: a broken check fails)
                ok = False
            if not ok:
                if pos:
                    self._order.insert(0, self._order.pop(pos))
                return False
        return bool(self._checks)
