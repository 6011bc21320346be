"""Building a `Library` from the hand-built services plus compiled manifests (what `--manifests` names)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from compoworld.compiler.runtime import CompiledService, ManifestError, service_from_manifest
from compoworld.core import library as _library
from compoworld.core.library import Library

MANIFESTS_ENV = "COMPOWORLD_MANIFESTS"  # read only by the CLI, as the default of --manifests


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
            raise FileNotFoundError(f"--manifests: no manifest file or folder at {p}")
    return out


def load_manifest(path: str | Path) -> type[CompiledService]:
    """The service a manifest file describes: compiled, or implemented in a sandbox (`spec implement`).

    Here, above both `runtime` and `implement`, so neither imports the other back."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ManifestError(f"cannot read manifest {path}: {e}") from e
    if isinstance(data, dict) and data.get("implemented") and (Path(path).parent / "service.py").is_file():
        from compoworld.compiler.implement import (
            load_implemented,  # `spec implement`: kept tools in a sandbox
        )

        return load_implemented(path)
    return service_from_manifest(data)


def load_library(manifests: Sequence[str | Path] = ()) -> Library:
    """The hand-built library plus one compiled service per manifest file (domains from the corpus's)."""
    from compoworld.compiler.domains import assign
    from compoworld.services import hand_built

    base = hand_built()
    if not manifests:
        return base
    return base.plus([assign(load_manifest(Path(f))) for f in manifests], [str(f) for f in manifests])


def library_for(paths: str | None) -> Library:
    """The library `--manifests PATHS` names (the hand-built one for None or ''), loaded once per process."""
    return _library.load([str(f) for f in manifest_files(paths or "")])


def use_manifests(paths: str) -> Library:
    """Add the manifests at `paths` to the active library of this process; returns the new library."""
    lib = _library.load([*_library.active().manifests, *(str(f) for f in manifest_files(paths))])
    _library.use(lib)
    return lib
