"""The instruction realiser: a model rewrites each verified instruction in natural, varied language.

The rewrite must keep every name, address, number, code and date the instruction gives (the
reference is grounded on them) and may add none of the facts the agent has to find. Each rewrite
is held to the gates again (`run_gates`: no_leak, grounded, the adversaries and the rest); one that
fails is sent back once with the diagnostics, and if it fails again the task keeps its original
instruction. A kept rewrite records the original under `meta["realised"]`, which is what the
determinism gate regenerates and compares against.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from compoworld.llm.client import EndpointError, LLMClient
from compoworld.llm.replies import first_json_object
from compoworld.tasks.model import Task

REALISE_SYSTEM = (
    "You rewrite task requests so they read like a real colleague wrote them: natural, varied, concise. "
    "Keep the meaning exactly. Keep every name, email address, number, amount, code, id and date exactly as "
    "written. Do not add any fact, and do not spell out the steps. Reply with one JSON object: "
    '{"instruction": "..."}'
)


def _keep(task: Task) -> list[str]:
    """Values of the instruction the reference is grounded on (they must survive a rewrite)."""
    from compoworld.tasks.grounding import leaves

    out: list[str] = []
    text = task.instruction.casefold()
    for c in task.reference_solution:
        for path, v in leaves(c.arguments):
            src = c.sources.get(path) or c.sources.get(f"{path}~")
            if src == "instruction" and str(v).casefold() in text and str(v) not in out:
                out.append(str(v))
    return out


async def realise_one(client: LLMClient, task: Task, tries: int = 2) -> tuple[Task, str | None]:
    """(the task with its instruction realised, None) or (the task unchanged, why not)."""
    from compoworld.tasks.gates import run_gates

    keep = _keep(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": REALISE_SYSTEM},
        {
            "role": "user",
            "content": f"Request: {task.instruction}\nValues that must appear unchanged: {json.dumps(keep)}",
        },
    ]
    why: str | None = None
    for _ in range(tries):
        try:
            reply = await client.chat(messages)
        except EndpointError as e:
            return task, f"endpoint_error: {str(e)[:200]}"
        text = reply.message.get("content") or ""
        obj = first_json_object(text)
        new = obj.get("instruction") if obj else None
        if not isinstance(new, str) or len(new.split()) < 4:
            why = 'format: the reply has no {"instruction": "..."} object'
        else:
            new = " ".join(new.split())
            lost = [v for v in keep if v.casefold() not in new.casefold()]
            if lost:
                why = f"grounded: the rewrite drops {lost}"
            else:
                meta = {**task.meta, "realised": {"model": client.config.model, "original": task.instruction}}
                cand = task.model_copy(update={"instruction": new, "meta": meta})
                failed = {
                    g: w for g, w in run_gates(cand, regenerate=False).items() if w and g != "adversarial"
                }
                if not failed:
                    return cand, None
                g, w = next(iter(failed.items()))
                why = f"{g}: {w}"
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"Rejected ({why}). Rewrite it again, as one JSON object."},
        ]
    return task, why


async def realise_tasks(
    client: LLMClient, tasks: list[Task], on_progress: Callable[[int], None] | None = None
) -> tuple[list[Task], dict[str, Any]]:
    """Every task, realised where the rewrite passes the gates; the counts by outcome."""
    out, kept, rejected = [], 0, Counter()
    for t in tasks:
        new, why = await realise_one(client, t)
        out.append(new)
        if why is None:
            kept += 1
        else:
            rejected[why.split(":", 1)[0]] += 1
        if on_progress:
            on_progress(1)
        if why and why.startswith("endpoint_error"):
            out += tasks[len(out) :]
            break
    return out, {"realised": kept, "kept_original": dict(rejected)}
