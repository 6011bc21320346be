"""grep's catastrophic patterns (issue 24): a line slower than a few ms is searched in a helper
process at idle priority, with the same answer, and past the call's time it is a clear error."""

from __future__ import annotations

import os

import regex

from compoworld.core.environment import Environment
from compoworld.core.limits import CallLimits
from compoworld.interfaces import matcher


def test_a_slow_line_is_searched_in_a_helper_with_the_same_answer(monkeypatch) -> None:
    used: list[str] = []
    real = matcher.HELPERS.search
    monkeypatch.setattr(matcher.HELPERS, "search", lambda p, f, s, t: used.append(s) or real(p, f, s, t))
    cases = [
        ("(a|aa)+$", 0, "a" * 20 + "b"),  # ~30 ms of backtracking: moves to the helper
        ("(A|AA)+C", regex.I, "a" * 18 + "c"),
        ("^x[0-9]+$", 0, "x12345"),  # instant: stays here
    ]
    for pattern, flags, line in cases:
        rx = regex.compile(pattern, flags)
        assert matcher.search(rx, pattern, flags, line, 30.0) == (rx.search(line) is not None)
    assert "a" * 20 + "b" in used and "x12345" not in used


def test_a_catastrophic_line_times_out_and_its_helper_is_stopped(monkeypatch) -> None:
    killed: list[int] = []
    real = matcher._kill
    monkeypatch.setattr(matcher, "_kill", lambda p: killed.append(p.pid) or real(p))
    rx = regex.compile("(a|aa)+$")
    assert matcher.search(rx, "(a|aa)+$", 0, "a" * 5000 + "b", 0.3) is None
    for pid in killed:  # a helper that was still matching is gone, not left running
        assert not os.path.exists(f"/proc/{pid}")  # killed and reaped
    assert all(p.poll() is None for p in matcher.HELPERS.idle)  # the ones kept are alive


def test_grep_with_a_catastrophic_pattern_is_refused_and_never_runs_at_idle_priority() -> None:
    env = Environment(services=["workspace"], seed=1)
    env.limits = CallLimits(cpu_s=0.5)
    assert env.call("workspace__shell", {"command": "echo " + "a" * 5000 + "b > x.txt"})["success"]
    before = env.state_hash()
    r = env.call("workspace__shell", {"command": "grep -E '(a|aa)+$' x.txt"})
    text = str(r)
    assert "too slow to match" in text, r
    assert env.state_hash() == before
    if hasattr(os, "sched_getscheduler"):
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # this thread was never demoted
    ok = env.call("workspace__shell", {"command": "grep -c a x.txt"})
    assert ok["success"] and "1" in str(ok["data"])


def test_many_slow_lines_share_the_calls_limit_not_one_each() -> None:
    """A reviewer's attack: twelve lines that each take ~0.3 s in the helper, under a 0.5 s limit.
    The helper's time is the call's, so the call is refused once the limit is spent, instead of
    every line getting the whole limit again (about 4 s of a core for one call)."""
    env = Environment(services=["workspace"], seed=1)
    env.limits = CallLimits(cpu_s=0.5)
    line = "a" * 27 + "b"
    for _ in range(12):
        assert env.call("workspace__shell", {"command": f"echo {line} >> x.txt"})["success"]
    r = env.call("workspace__shell", {"command": "grep -c -E '(a|aa)+$' x.txt"})
    refused = r["success"] and r["data"]["exit_code"] == 2 and "too slow to match" in r["data"]["stderr"]
    assert refused or "resource_limit" in str(r), r  # not a count: the lines never all ran
