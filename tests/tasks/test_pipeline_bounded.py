"""Generation ends: settings under which every index is rejected stop with the causes counted
(a persona world whose personas fit no plan once ran for hours without keeping a task)."""

from __future__ import annotations

import pytest

from compoworld.tasks import pipeline
from compoworld.tasks.generator import Settings


def test_a_run_that_keeps_nothing_stops_with_the_causes(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def reject(seed: int, index: int, settings: Settings) -> tuple[None, str]:
        seen.append(index)
        return None, "plan"

    monkeypatch.setattr(pipeline, "make_one", reject)
    with pytest.raises(RuntimeError, match=r"too many rejections \(\{'plan': 131\}\) with 0 of 3 kept"):
        pipeline.generate(3, 6, Settings(k=4))
    assert len(seen) <= 136  # one chunk past the bound at most
