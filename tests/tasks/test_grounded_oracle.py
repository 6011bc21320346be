"""The oracle's conversations teach only what the tools show.

The oracle replays the grounded reference turn by turn, directly or through the gateway with real
discovery. Its SFT export is checked here by reading the conversation itself: no tool call uses an
identifying value (an id, an email, a code, a lookup name) that no earlier message showed. The
grounded gate is attacked too: a reference that reads and uses an id in one turn, or invents one,
is rejected.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from compoworld.agents.loop import run_episode
from compoworld.agents.policies import NoopAgent, OracleAgent
from compoworld.export.rl import score_completion
from compoworld.export.sft import sft_record
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Settings
from compoworld.tasks.grounding import identifying
from compoworld.tasks.pipeline import generate


@pytest.fixture(scope="module")
def tasks():
    return generate(12, 33, Settings())[0]


def _seen_before(messages: list[dict], upto: int) -> str:
    out = []
    for m in messages[:upto]:
        if m.get("content"):
            out.append(str(m["content"]))
    return json.dumps(out, ensure_ascii=False).casefold() + " ".join(out).casefold()


def _ungrounded(record: dict, composed: list[str]) -> list[str]:
    """Identifying values of tool calls that no earlier message showed (values the task records as
    the agent's own arithmetic, such as a total, aside)."""
    msgs = record["messages"]
    made = {c.casefold() for c in composed}
    bad = []
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        seen = _seen_before(msgs, i)
        for tc in m.get("tool_calls") or []:
            if tc["function"]["name"] == "finish":
                continue
            args = tc["function"]["arguments"]
            args = json.loads(args) if isinstance(args, str) else args
            if tc["function"]["name"] == "call_tool":
                args = args.get("arguments") or {}
            for path, value in identifying(args):
                v = value.casefold()
                if v in made:
                    continue
                if v not in seen and json.dumps(value)[1:-1].casefold() not in seen:
                    digits = "".join(ch for ch in value if ch.isdigit())
                    if not (len(digits) >= 7 and digits[-10:] in "".join(ch for ch in seen if ch.isdigit())):
                        bad.append(f"{tc['function']['name']} {path}={value!r}")
    return bad


@pytest.mark.parametrize("mode", ["direct", "gateway"])
def test_oracle_sft_conversations_are_grounded(tasks, mode) -> None:
    for t in tasks:
        ep = asyncio.run(run_episode(t, OracleAgent(), mode=mode))
        assert ep.V == 1 and ep.score == 1.0, (t.id, ep.error, ep.checks)
        rec = sft_record(ep.record(), "openai")
        bad = _ungrounded(rec, t.meta.get("composed", []))
        assert not bad, (t.id, bad)
        calls = [tc for m in rec["messages"] if m["role"] == "assistant" for tc in m.get("tool_calls") or []]
        if mode == "gateway":
            names = [tc["function"]["name"] for tc in calls]
            assert names[0] == "list_services" and "describe_tool" in names
            described = set()
            for tc in calls:  # a tool is described before it is called
                a = json.loads(tc["function"]["arguments"])
                if tc["function"]["name"] == "describe_tool":
                    described.add(a["tool"])
                if tc["function"]["name"] == "call_tool":
                    assert a["tool"] in described
        # score_completion replays the same turns to the same reward
        assert score_completion(t.to_json().decode(), rec["messages"])["V"] == 1


def test_noop_scores_zero(tasks) -> None:
    scores = [asyncio.run(run_episode(t, NoopAgent())).score for t in tasks]
    assert max(scores) == 0.0


def test_grounded_gate_rejects_same_turn_reads_and_invented_ids(tasks) -> None:
    t = next(
        t
        for t in tasks
        if any(s.startswith("obs:") for c in t.reference_solution for s in c.sources.values())
    )
    # the call that uses a value read in an earlier turn now goes out in that same turn
    k = next(
        i for i, c in enumerate(t.reference_solution) if any(s.startswith("obs:") for s in c.sources.values())
    )
    src = int(next(s for s in t.reference_solution[k].sources.values() if s.startswith("obs:"))[4:])
    ref = [c.model_copy() for c in t.reference_solution]
    for c in ref[src : k + 1]:
        c.turn = ref[src].turn
    same_turn = t.model_copy(update={"reference_solution": ref})
    assert run_gates(same_turn, regenerate=False)["grounded"] is not None
    # an id nobody showed
    ref = [c.model_copy() for c in t.reference_solution]
    path = next(p for p, s in ref[k].sources.items() if s.startswith("obs:") and not p.endswith("~"))
    args = json.loads(json.dumps(ref[k].arguments))
    cur = args
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = int(parts[-1]) if isinstance(cur, list) else parts[-1]
    cur[last] = 987654321 if isinstance(cur[last], int) else "INVENTED-424242"
    ref[k] = ref[k].model_copy(update={"arguments": args})
    invented = t.model_copy(update={"reference_solution": ref})
    assert "before it was shown" in (run_gates(invented, regenerate=False)["grounded"] or "")


def test_ids_run_together_in_free_text_must_be_shown_first() -> None:
    from compoworld.tasks.grounding import identifying

    found = {v for _, v in identifying({"body": "Updated COMda943657 (thread t5b6b94c0b0ceaad7), Q4 plan."})}
    assert found == {"COMda943657", "t5b6b94c0b0ceaad7"}
    # plain words, short codes and dates are the agent's own
    assert not identifying({"body": "Thanks, the Q4 plan v2 looks fine for 2026-05-01."})
