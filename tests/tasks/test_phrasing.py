"""How requests are worded (`tasks.phrasing.frame`): every voice keeps the ask whole, and context that
points back at the ask ("That means: ...") always follows it."""

from __future__ import annotations

import random

import pytest

from compoworld.tasks.phrasing import frame

ASK = "offboard Clara Costa, who leaves today"


@pytest.mark.parametrize("seed", range(60))
def test_back_referring_context_follows_the_ask(seed: int) -> None:
    ctx = "That means: my 1:1s with Clara come off the calendar"
    out = frame(random.Random(seed), ASK, context=ctx, who="Dana", items=["a", "b"])
    if out.startswith(("To do", "A few", "Checklist", "Can you sort")):
        return  # a checklist heads its items with the context
    assert out.lower().index("offboard clara costa") < out.index("That means")
    assert "today today" not in out


@pytest.mark.parametrize("seed", range(30))
def test_plain_context_reads_whole_in_every_voice(seed: int) -> None:
    a = frame(random.Random(seed), "file the report", context="The rules are on the wiki")
    b = frame(random.Random(seed), "file the report", context="That is what the wiki says")
    assert "file the report" in a.lower() and "The rules are on the wiki." in a
    assert len(a.split()) >= 6 and len(b.split()) >= 6


def test_no_for_me_tail_after_a_clause() -> None:
    """From play: "... the way our expense policy says for me?" read oddly; an ask that ends in a
    clause of its own takes no "for me" after it, a plain one may."""
    ask = "process the expense claims Dana asked about, the way our expense policy says"
    outs = [frame(random.Random(s), ask) for s in range(300)]
    assert any("Could you process" in o for o in outs)  # the voice that had the tail is drawn
    assert not any("for me" in o for o in outs)
    plain = [frame(random.Random(s), "renew the parking permit") for s in range(300)]
    assert any("renew the parking permit for me?" in o for o in plain)
