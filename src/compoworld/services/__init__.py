"""The hand-built service library: one self-contained package per service (state, service, seed).

Owns: the service packages and `hand_built()`, the `Library` of them (found by listing this
package's own subpackages: discovery never reaches up). May import: `core` and `interfaces` (the
workspace's shell, the computer interface service). Knows nothing of tasks, the compiler or manifests:
a library with compiled services is built by `compoworld.compiler.library.load_library`.

`registry()` and `get_service()` answer from the process's active library (`core.library.active()`),
which is the hand-built one unless the CLI's `--manifests` (or a caller, `core.library.use`) set another.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from compoworld.core import library as _library
from compoworld.core.library import Library
from compoworld.core.service import Service

INTERFACES = frozenset({"computer"})  # services that are interfaces, not library services (never distractors)


def _computer() -> type[Service]:
    from compoworld.interfaces.computer import ComputerService

    return ComputerService


@cache
def hand_built_services() -> tuple[type[Service], ...]:
    """Every hand-built service class, in package order (each service module imported once)."""
    found: list[type[Service]] = []
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg):
        module = importlib.import_module(f"{__name__}.{mod}.service")
        for obj in vars(module).values():
            is_service = isinstance(obj, type) and issubclass(obj, Service) and obj is not Service
            if is_service and obj.name and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(found)


def hand_built() -> Library:
    """The library of hand-built services (with the interface services an episode may add)."""
    return Library(hand_built_services(), interfaces={"computer": _computer})


def registry() -> Library:
    """The active library by name, in a stable order (see `core.library.active`)."""
    return _library.active()


def with_interfaces() -> dict[str, type[Service]]:
    """The library plus the interfaces (what an episode's tools can come from)."""
    return registry().with_interfaces()


def get_service(name: str) -> type[Service]:
    return registry().service(name)
