"""Workflow families, one module per domain of work; importing this package registers them all
(`families()`: every registered family by name). The families import `tasks.workflow`, never back."""

from __future__ import annotations

import importlib
import pkgutil

from compoworld.tasks.workflow import FAMILIES, Family

for _m in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_m}")


def families() -> dict[str, Family]:
    """Every registered workflow family by name (this package's import registered them)."""
    return FAMILIES
