"""Every workflow family yields tasks that pass every gate and adversary, on several worlds."""

from __future__ import annotations

import pytest

from compoworld.tasks.families import families
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import Task
from compoworld.tasks.workflow import DOMAINS

NAMES = sorted(families())


def test_families_cover_the_domains_of_work_and_the_library() -> None:
    from compoworld.services import registry

    fams = families().values()
    assert len(NAMES) >= 60
    assert {f.domain for f in fams} == set(DOMAINS)
    assert set(registry()) <= {s for f in fams for s in f.services}


@pytest.mark.parametrize("name", NAMES)
def test_family_yields_verified_tasks(name: str) -> None:
    kept = 0
    for i in range(3):
        try:
            t = Task.model_validate(generate_task(100 + i, i, Settings(families=(name,))))
        except Rejected:
            continue
        bad = {g: why for g, why in run_gates(t, regenerate=False).items() if why}
        assert not bad, (t.id, bad)
        assert t.meta["family"] == name and t.traps and len(t.instruction.split()) <= 90
        kept += 1
    assert kept >= 2, f"{name}: only {kept} of 3 attempts were kept"
