"""The library at the corpus's scale: compile every spec, load the library, hold 10 compiled services.

Prints, each against a baseline measured in the same run:
- the time to compile the whole corpus (ingest, infer, adversarial and semantic tests), against the
  time to read and normalise the same specs (the floor any compiler pays);
- the time to load the library with the corpus's manifests, against loading the hand-built library;
- the memory of an environment with 10 compiled services, against one with 10 hand-built services;
and the totals: services, tools, the share running as code, crashes, invalid names.

    python benchmarks/library.py [SPECS_FOLDER] [--sample N]

CI does not run this (tests sample the corpus); it covers the rest.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

from compoworld.compiler import compile_spec, load_spec
from compoworld.compiler.compiler import unique_service_names
from compoworld.core.environment import NAME_RE, Environment

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "mcp-specs"
HAND_BUILT = ["email", "chat", "calendar", "crm", "helpdesk", "issues", "files", "sql", "payments", "shop"]


def _memory(build) -> float:
    """MiB allocated (and kept) by `build()`, measured by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return (after - before) / 2**20


LOAD = (
    "import sys, time; t = time.perf_counter(); from compoworld.compiler.library import library_for; "
    "n = len(library_for(sys.argv[1] if len(sys.argv) > 1 else None)); print(time.perf_counter() - t)"
)


def _load_seconds(manifests: Path | None, repeat: int = 3) -> float:
    """Median seconds a fresh process takes to import and list the library (cold: no module cached)."""
    argv = [sys.executable, "-c", LOAD, *([str(manifests)] if manifests is not None else [])]
    runs = [
        float(subprocess.run(argv, capture_output=True, text=True, check=True).stdout) for _ in range(repeat)
    ]
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--sample", type=int, default=0, help="Only the first N spec files (0: all).")
    ap.add_argument("--out", type=Path, default=None, help="Keep the manifests in this folder.")
    a = ap.parse_args()
    files = sorted(a.specs.rglob("*.json"))[: a.sample or None]
    if not files:
        sys.exit(f"error: no *.json specs under {a.specs}")
    from compoworld.compiler.library import library_for
    from compoworld.compiler.runtime import CompiledService
    from compoworld.core import library
    from compoworld.services import registry

    hand = registry()
    names = unique_service_names(files, set(hand))

    t = time.perf_counter()
    for f in files:
        load_spec(f)
    ingest_s = time.perf_counter() - t

    tmp = tempfile.TemporaryDirectory(prefix="compoworld-library-") if a.out is None else None
    out = a.out or Path(tmp.name)
    out.mkdir(parents=True, exist_ok=True)
    status: Counter[str] = Counter()
    crashes, bad_names = 0, 0
    t = time.perf_counter()
    for f in files:
        try:
            m = compile_spec(f, names[f])
        except Exception as e:  # counted, never fatal
            crashes += 1
            print(f"crash: {f.name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        status.update(t["status"] for t in m["tools"])
        status["excluded"] += len(m.get("excluded", []))
        bad_names += sum(not NAME_RE.match(f"{m['service']}__{t['name']}") for t in m["tools"])
        (out / f"{m['service']}.json").write_text(json.dumps(m), encoding="utf-8")
    compile_s = time.perf_counter() - t

    hand_load_s = _load_seconds(None)
    load_s = _load_seconds(out)
    lib = library_for(str(out))
    library.use(lib)  # what `compoworld --manifests OUT` runs on
    hand_lib = hand
    compiled = [n for n, c in lib.items() if issubclass(c, CompiledService)]
    tools = sum(len(c.tool_specs) for c in lib.values())

    # 10 compiled services with the most resources, against 10 hand-built ones
    ten = sorted(compiled, key=lambda n: (-len(lib[n].manifest["resources"]), n))[:10]
    base10 = [n for n in HAND_BUILT if n in hand_lib][:10]
    Environment(services=base10, seed=0)  # warm the shared company outside the measures
    mem = _memory(lambda: Environment(services=ten, seed=0))
    base_mem = _memory(lambda: Environment(services=base10, seed=0))

    total = sum(status.values()) - status["excluded"]
    entries = total + status["excluded"]
    print(f"specs {len(files)}; services compiled {len(compiled)} (library {len(lib)}), tools {tools}")
    print(
        f"tools compiled {total}: running as code {status['compiled']} ({100 * status['compiled'] / max(total, 1):.1f}%), "
        f"quarantined {status['quarantined']}, simulated {status['simulated']}; crashes {crashes}; "
        f"invalid names {bad_names}"
    )
    print(
        f"spec entries {entries}: running as code {100 * status['compiled'] / max(entries, 1):.1f}%; "
        f"excluded as no operation {status['excluded']}"
    )
    print(f"{'figure':40} {'value':>10} {'baseline':38} {'base':>10} {'ratio':>7}")
    rows = [
        ("compile the corpus (s)", compile_s, "read and normalise the specs (s)", ingest_s),
        ("load the library with manifests (s)", load_s, "load the hand-built library (s)", hand_load_s),
        (
            "env with 10 compiled services (MiB)",
            mem,
            f"env with {len(base10)} hand-built services (MiB)",
            base_mem,
        ),
    ]
    for name, v, bname, b in rows:
        print(f"{name:40} {v:>10.3f} {bname:38} {b:>10.3f} {v / b if b else float('inf'):>6.1f}x")
    if tmp is None:
        print(f"manifests -> {out}")
    else:
        tmp.cleanup()


if __name__ == "__main__":
    main()
