"""Red-team checks of the compiled families: strategies a careless policy would try, run through the
real tools against tasks made from a few corpus specs. A strategy that passes is a finding (marked
xfail, strict, until fixed); an honest solution worded and ordered its own way must pass."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.tasks.compiled_library import SPECS, compiled_library

USED = {
    "klavis_linear.json": "linear",
    "klavis_freshdesk.json": "freshdesk",
    "corpus/klavis_resend.json": "resend",
    "corpus/docker_kubectl-mcp-server.json": "kubectl",
    "corpus/openmcp_apideck_com_pos.json": "apideck_pos",
}

pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    with compiled_library(tmp_path_factory.mktemp("manifests"), USED) as out:
        yield out


def _tasks(families: tuple[str, ...], n: int, seed: int = 808, attempts: int = 30) -> list:
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task

    out = []
    for i in range(attempts):
        try:
            out.append(Task.model_validate(generate_task(seed, i, Settings(families=families))))
        except Rejected:
            continue
        if len(out) == n:
            break
    assert len(out) == n, families
    return out


def _observe(t) -> tuple[list[tuple[str, dict[str, Any]]], list[Any], Any]:
    """The reference's calls and what each showed (the reads an agent makes too)."""
    env = t.environment()
    calls = [(c.tool, copy.deepcopy(c.arguments)) for c in t.reference_solution]
    return calls, [env.call(tool, copy.deepcopy(a)) for tool, a in calls], env


def _listed(t, env, obs) -> list[dict[str, Any]]:
    """The records the service's list showed the agent (the largest list in the last read)."""
    from compoworld.tasks.adversaries import _record_lists

    reads = [
        i
        for i, c in enumerate(t.reference_solution)
        if not c.tool.startswith("email__") and not env.tool_spec(c.tool).mutates
    ]
    return max(_record_lists(obs[reads[-1]].get("data")), key=len)


def _passes(t, calls, answer) -> bool:
    from compoworld.verify.verifier import verify

    env = t.environment()
    for tool, args in calls:
        env.call(tool, args)
    return verify(t, env.snapshot(), answer).passed


def _wants(t) -> list[str]:
    return [
        str(x)
        for r in t.rubric
        if r.check.get("predicate") == "message_sent"
        for x in r.check.get("contains", [])
    ]


def test_a_reply_listing_every_candidates_value_fails(library) -> None:
    from compoworld.tasks.adversaries import flat

    tasks = _tasks(("compiled.kubectl.lookup_reply", "compiled.apideck_pos.lookup_reply"), 8)
    passed = []
    for t in tasks:
        calls, obs, env = _observe(t)
        recs = _listed(t, env, obs)
        want = _wants(t)
        field = next(k for r in recs for k, v in flat(r).items() if str(v) in want)
        # no choice made: every listed record's value goes to the colleague
        dump = "; ".join(f"{r.get('name') or r.get('id')}: {flat(r).get(field)}" for r in recs)
        send = next(a for tool, a in calls if tool == "email__gmail_send_email")
        send["body"] = f"Here is what {len(recs)} records say: {dump}"
        if _passes(t, calls, t.answer):
            passed.append((t.id, t.meta["family"], field))
    assert not passed, passed


def test_acting_on_the_oldest_listed_record_fails(library) -> None:
    fams = (
        "compiled.linear.update_from_email",
        "compiled.freshdesk.record_request",
        "compiled.resend.child_request",
    )
    passed = []
    for fam in fams:
        for t in _tasks((fam,), 2):
            calls, obs, env = _observe(t)
            recs = _listed(t, env, obs)
            writes = [
                i
                for i, (tool, _a) in enumerate(calls)
                if env.tool_spec(tool).mutates and "email__" not in tool
            ]
            written = json.dumps([calls[i][1] for i in writes])
            target = next(r["id"] for r in recs if str(r["id"]) in written)
            oldest = min(recs, key=lambda r: str(r.get("created_at") or "~"))["id"]
            # the writes and the reply, for the oldest listed record (no label or status compared)
            lazy = [
                (tool, json.loads(json.dumps(a).replace(str(target), str(oldest))))
                if i in writes or tool == "email__gmail_send_email"
                else (tool, a)
                for i, (tool, a) in enumerate(calls)
            ]
            if _passes(t, lazy, t.answer):
                passed.append((t.id, fam))
    assert not passed, passed


def test_an_honest_solution_in_its_own_words_and_order_passes(library) -> None:
    """Found by subject rather than sender, the list read twice (once without its search, which a
    service may refuse), the reply in other words, the answer in a sentence: it passes."""
    fams = (
        "compiled.linear.update_from_email",
        "compiled.freshdesk.record_request",
        "compiled.resend.child_request",
        "compiled.kubectl.lookup_reply",
        "compiled.apideck_pos.lookup_reply",
    )
    checked = 0
    for fam in fams:
        for t in _tasks((fam,), 2, seed=909):
            calls, obs, env = _observe(t)
            send = next(a for tool, a in calls if tool == "email__gmail_send_email")
            who = next(r.check["to"] for r in t.rubric if r.check.get("predicate") == "message_sent")
            subject = send["subject"].removeprefix("Re: ")
            mine = [("email__gmail_search_emails", {"query": f"subject:{subject}", "maxResults": 5})]
            for tool, a in calls:
                if tool == "email__gmail_send_email":
                    a = {
                        **a,
                        "body": f"Hello {who[1].split()[0]}! Sorted, for the record: "
                        + " / ".join(_wants(t))
                        + ". Any questions, just shout.",
                    }
                elif not tool.startswith("email__") and not env.tool_spec(tool).mutates:
                    mine.append((tool, {}))  # the whole list first, then the searched one
                mine.append((tool, a))
            ans = f"It is {t.answer}." if t.answer else None
            assert _passes(t, mine, ans), (t.id, fam)
            checked += 1
    assert checked == 10
