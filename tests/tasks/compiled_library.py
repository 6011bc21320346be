"""What the compiled-family tests share: specs compiled into a folder of manifests, made the
library the module's tests run on, with the families' caches cleared on the way in and out."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compoworld.compiler import compile_spec

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"


def clear_families() -> None:
    from compoworld.tasks.families import compiled

    compiled._families_for.cache_clear()
    compiled._survey.cache_clear()


@contextlib.contextmanager
def compiled_library(
    out: Path, specs: dict[str, str], fixtures: dict[str, dict[str, Any]] | None = None
) -> Iterator[Path]:
    """`specs` (path under shared/mcp-specs -> service name) and `fixtures` (service name -> a spec
    written by the test) compiled into `out`, the active library while the block runs."""
    from compoworld.compiler.library import library_for
    from compoworld.core import library as libraries

    for spec, name in specs.items():
        (out / f"{name}.json").write_text(json.dumps(compile_spec(SPECS / spec, name, 0)))
    for name, data in (fixtures or {}).items():
        src = out.parent / f"{name}.spec.json"
        src.write_text(json.dumps(data))
        (out / f"{name}.json").write_text(json.dumps(compile_spec(src, name, 0)))
    before = libraries.use(library_for(str(out)))  # the library these tests run on: a value, given
    clear_families()
    try:
        yield out
    finally:
        libraries.use(before)
        clear_families()
