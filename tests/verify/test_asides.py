"""A ruled-out person named aside (why they are not the one, or in another role) is excused; a mention
that addresses, proposes or hedges over them is not (issue 22, from play)."""

from __future__ import annotations

import pytest

from compoworld.verify.asides import named_aside

RIVALS = ["Emma Keller", "Malik Costa"]


@pytest.mark.parametrize(
    "text",
    [
        "Emma Keller, his cover, is out March 1-5, so I am asking you.",
        "Malik Costa is no longer with the company.",
    ],
)
def test_a_ruled_out_person_named_to_say_why_is_blanked(text: str) -> None:
    out = named_aside(text, RIVALS)
    assert len(out) == len(text)
    assert not any(r in out for r in RIVALS)


@pytest.mark.parametrize(
    "text",
    [
        "Emma Keller or Oscar Murphy, please approve $985.25.",
        "Please approve: Emma Keller.",
        "Hi Emma Keller, could you approve $985.25?",
        "<@Emma Keller> please approve",
    ],
)
def test_a_mention_that_addresses_or_hedges_stays(text: str) -> None:
    assert named_aside(text, RIVALS) == text


def test_people_the_work_names_in_another_role_are_blanked_anywhere() -> None:
    text = "Paid: Mark Morales $250.00, Jon Kim $80.99."
    out = named_aside(text, subjects=["Mark Morales", "Jon Kim"])
    assert "Mark Morales" not in out and "Jon Kim" not in out and "$250.00" in out
    assert named_aside(text, people=["Mark Morales"]) == text  # a rival with no reason given stays
