"""The service library: one package per service, discovered by name."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from compoworld.core.service import Service


@cache
def registry() -> dict[str, type[Service]]:
    """All library services by name, in a stable order (imported once, on first use)."""
    found: dict[str, type[Service]] = {}
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg):
        module = importlib.import_module(f"{__name__}.{mod}.service")
        for obj in vars(module).values():
            is_service = isinstance(obj, type) and issubclass(obj, Service) and obj is not Service
            if is_service and obj.name and obj.__module__ == module.__name__:
                if obj.name in found:
                    raise RuntimeError(f"two services are named {obj.name!r}")
                found[obj.name] = obj
    return dict(sorted(found.items()))


def get_service(name: str) -> type[Service]:
    reg = registry()
    if name not in reg:
        raise KeyError(f"unknown service {name!r}; known services: {', '.join(reg)}")
    return reg[name]
