"""The service library: one package per service, discovered by name."""

from __future__ import annotations

import importlib
import os
import pkgutil
from functools import cache
from pathlib import Path

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
    for cls in compiled_services():
        if cls.name in found:
            raise RuntimeError(
                f"compiled service {cls.name!r} ({cls.spec}) clashes with another service's name"
            )
        found[cls.name] = cls
    return dict(sorted(found.items()))


MANIFESTS_ENV = "COMPOWORLD_MANIFESTS"


def manifest_files(paths: str) -> list[Path]:
    """Manifest files named by `paths` (os.pathsep-separated files or folders of *.json)."""
    out: list[Path] = []
    for part in filter(None, (p.strip() for p in paths.split(os.pathsep))):
        p = Path(part)
        if p.is_dir():
            out.extend(sorted(p.glob("*.json")))
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{MANIFESTS_ENV}: no manifest file or folder at {p}")
    return out


def compiled_services() -> list[type[Service]]:
    """Services compiled from MCP specs, loaded from the manifests in $COMPOWORLD_MANIFESTS."""
    paths = os.environ.get(MANIFESTS_ENV, "")
    if not paths:
        return []
    from compoworld.compiler.domains import assign
    from compoworld.compiler.runtime import load_manifest

    return [assign(load_manifest(f)) for f in manifest_files(paths)]  # domains from the corpus's


def use_manifests(paths: str) -> None:
    """Make the manifests at `paths` part of the library in this process and its workers."""
    current = os.environ.get(MANIFESTS_ENV, "")
    os.environ[MANIFESTS_ENV] = os.pathsep.join(filter(None, [current, paths]))
    registry.cache_clear()
    from compoworld.tasks import generator, moves

    moves.all_moves.cache_clear()
    generator.base_world.cache_clear()


INTERFACES = frozenset({"computer"})  # services that are interfaces, not library services (never distractors)


def with_interfaces() -> dict[str, type[Service]]:
    """The library plus the interfaces (what an episode's tools can come from)."""
    return {**registry(), **{n: get_service(n) for n in INTERFACES}}


def get_service(name: str) -> type[Service]:
    reg = registry()
    if name in INTERFACES and name not in reg:
        from compoworld.interfaces.computer import ComputerService

        return ComputerService
    if name not in reg:
        raise KeyError(f"unknown service {name!r}; known services: {', '.join(reg)}")
    return reg[name]
