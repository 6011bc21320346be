"""A cross-interface task with a screen-only step: the oracle solves it by pointer actions, every gate passes."""

from __future__ import annotations

import pytest

from compoworld.interfaces.computer import chromium_path
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="no Chromium (apt-get install chromium, or set COMPOWORLD_CHROMIUM)"
)
FAMILY = "computer.escalation_contact_on_card"


def test_the_screen_only_step_is_done_by_pointer_actions_and_every_gate_passes() -> None:
    t = Task.model_validate(generate_task(100, 0, Settings(families=(FAMILY,))))
    tools = [c.tool for c in t.reference_solution]
    assert tools[0] == "computer__screenshot" and tools.count("computer__click") >= 4
    assert "computer__type" in tools and "browser" in t.distractors
    bad = {g: why for g, why in run_gates(t, regenerate=False).items() if why}
    assert not bad, bad
    # the card is a picture: the text browser and the planted state show it only as an image
    from compoworld.core.environment import Environment
    from compoworld.interfaces.web import IMAGE

    env = Environment.from_snapshot([*t.services, *t.distractors], t.initial_state)
    cards = {k: v["text"] for k, v in env.services["browser"].table("facts").items() if k.startswith(IMAGE)}
    assert cards
    name, card = next(iter(cards.items()))
    page = env.call("browser__open", {"url": "/accounts"})["data"]["page"]
    assert name[len(IMAGE) :] in page
    contact = card.split("\n")[1]
    from compoworld.interfaces.web import slug

    shown = env.call("browser__open", {"url": f"/accounts/{slug(name[len(IMAGE) :])}"})["data"]["page"]
    assert "image 'Account contact card'" in shown and contact not in shown
