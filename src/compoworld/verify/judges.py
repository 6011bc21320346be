"""Model judges beside the program verifier (WildAWM's three levels of judging).

- The program verifier (`verify.verifier`) reads the rubric's predicates.
- The LLM judge (here) reads the instruction, the criteria, the trajectory and the end-state diff,
  and gives a verdict per criterion.
- The agent judge (`agents.judge`) inspects the final state itself through read-only tools.

Every judge reply is parsed from one JSON object
`{"verdict": "success" | "failure", "criteria": {...}, "reason": "..."}`. A reply without one is a
judge error: it is recorded with the raw text and never counted as a verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compoworld.llm.client import EndpointError, LLMClient
from compoworld.llm.replies import first_json_object

VERDICTS = ("success", "failure")
VERDICT_FORMAT = (
    '{"verdict": "success" | "failure", "criteria": {"<criterion id>": true | false, ...}, "reason": "..."}'
)


@dataclass
class Judgement:
    judge: str  # llm | agent | agent+claim
    verdict: str | None  # success | failure; None: a judge error
    criteria: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    error: str | None = None  # why no verdict could be read (never counted)
    raw: str = ""  # the reply as the model sent it
    requests: int = 0

    def record(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "raw" or self.error}


def parse_verdict(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(verdict object, None), or (None, why it is a judge error)."""
    obj = first_json_object(text)
    if obj is None:
        return None, "no JSON object in the reply"
    v = obj.get("verdict")
    if not isinstance(v, str) or v.strip().lower() not in VERDICTS:
        return None, f'\'verdict\' must be "success" or "failure", got {v!r}'
    crit = obj.get("criteria", {})
    if not isinstance(crit, dict):
        return None, f"'criteria' must be an object, got {type(crit).__name__}"
    reason = obj.get("reason", "")
    return {"verdict": v.strip().lower(), "criteria": crit, "reason": str(reason)}, None


def judgement(judge: str, text: str | None, requests: int = 1) -> Judgement:
    parsed, why = parse_verdict(text)
    if parsed is None:
        return Judgement(judge, None, error=why, raw=(text or "")[:2000], requests=requests)
    return Judgement(judge, parsed["verdict"], parsed["criteria"], parsed["reason"][:1000], requests=requests)


def criteria(task: Any) -> list[dict[str, str]]:
    """The rubric as criteria a judge can read (id, kind, description)."""
    return [{"id": r.id, "kind": r.kind, "description": r.description} for r in task.rubric]


def _clip(value: Any, n: int) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[: n - 3] + "..."


def trajectory_text(steps: list[dict[str, Any]], budget: int) -> str:
    """The tool calls with their envelopes, each clipped so the whole fits `budget` characters."""
    if not steps:
        return "(no tool calls)"
    each = max(160, budget // max(len(steps), 1))
    lines = [
        f"{i + 1}. {s.get('tool')}({_clip(s.get('arguments'), each // 3)}) -> {_clip(s.get('envelope'), each)}"
        for i, s in enumerate(steps)
    ]
    return _clip("\n".join(lines), budget)


def diff_text(changes: list[Any], budget: int) -> str:
    """The end-state diff, one change a line: service path op before -> after."""
    if not changes:
        return "(nothing changed)"
    lines = [
        f"{c.service} {c.path} {c.op}: {_clip(c.before, 200)} -> {_clip(c.after, 400)}"
        for c in changes
        if not c.path.startswith("_meta")
    ]
    return _clip("\n".join(lines) or "(only bookkeeping changed)", budget)


JUDGE_SYSTEM = (
    "You judge whether an AI agent completed a task, criterion by criterion, from evidence only. "
    f"Reply with exactly one JSON object: {VERDICT_FORMAT}. The verdict is success only if every criterion holds."
)


def llm_judge_messages(
    task: Any, steps: list[dict[str, Any]], changes: list[Any], answer: str | None, budget: int = 12000
) -> list[dict[str, Any]]:
    body = (
        f"TASK\n{task.instruction}\n\nCRITERIA\n{json.dumps(criteria(task), ensure_ascii=False)}\n\n"
        f"TRAJECTORY\n{trajectory_text(steps, budget // 2)}\n\n"
        f"END-STATE DIFF\n{diff_text(changes, budget // 3)}\n\nFINAL ANSWER\n{_clip(answer or '(none)', 800)}"
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": body}]


async def llm_judge(
    client: LLMClient,
    task: Any,
    steps: list[dict[str, Any]],
    changes: list[Any],
    answer: str | None,
    budget: int = 12000,
) -> Judgement:
    """The LLM judge's verdict on one trajectory (a judge error when the reply has no verdict)."""
    try:
        reply = await client.chat(llm_judge_messages(task, steps, changes, answer, budget))
    except EndpointError as e:
        return Judgement("llm", None, error=f"endpoint: {str(e)[:300]}")
    return judgement("llm", reply.message.get("content"))
