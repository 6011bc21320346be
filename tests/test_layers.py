"""The layers (issue 30): no import cycles among the modules of src/, `compoworld.core` imports
nothing above it, and pyproject.toml's import contracts hold (what `.ci/run` checks with lint-imports)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    # every import counts: module level, inside functions, and under TYPE_CHECKING
    return grimp.build_graph("compoworld", include_external_packages=False)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):  # iterative Tarjan: the graph is deep enough to overflow recursion
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1 or v in edges.get(v, ()):
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_src_is_in_an_import_cycle(graph: grimp.ImportGraph) -> None:
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert len(edges) > 200  # the whole package was read
    found = cycles(edges)
    assert found == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_core_imports_nothing_above_it() -> None:
    code = (
        "import json, sys; import compoworld.core, compoworld.core.environment, compoworld.core.library; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('compoworld'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = json.loads(out.stdout)
    assert "compoworld.core.environment" in loaded
    above = [m for m in loaded if m != "compoworld" and not m.startswith("compoworld.core")]
    assert above == [], f"importing compoworld.core loads {above}"


def test_an_environment_needs_no_discovery_when_given_a_library() -> None:
    """Core composes over the library it is given: a one-service library, built by hand."""
    code = (
        "import sys; from compoworld.core.library import Library; "
        "from compoworld.core.environment import Environment; "
        "import compoworld.services.kv.service as m; "
        "cls = next(v for v in vars(m).values() if isinstance(v, type) and getattr(v, 'name', '') == 'kv'); "
        "env = Environment(['kv'], seed=1, library=Library([cls])); "
        "print(env.tool_names[0].startswith('kv__'), 'compoworld.tasks' in sys.modules, "
        "sorted(m.split('.')[2] for m in sys.modules if m.startswith('compoworld.services.') and m.count('.') >= 3) )"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split()[:2] == ["True", "False"], out.stdout
    assert "email" not in out.stdout  # no other service was imported to build it


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's layers and acyclic contracts, as `.ci/run` checks them."""
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("lint-imports is not installed (pip install -e '.[dev]')")
    r = subprocess.run([str(exe), "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_an_upward_import_breaks_the_layers_contract_naming_both_modules(tmp_path: Path) -> None:
    """The contract is live: a copy of the package with one upward import fails, naming the two modules."""
    import shutil

    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("lint-imports is not installed (pip install -e '.[dev]')")
    shutil.copytree(SRC / "compoworld", tmp_path / "compoworld", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    clock = tmp_path / "compoworld" / "core" / "clock.py"
    clock.write_text(
        clock.read_text() + "\n\ndef _up():\n    from compoworld.tasks import generator  # noqa\n"
    )
    env = {"PYTHONPATH": str(tmp_path), "PATH": ""}
    r = subprocess.run([str(exe), "--no-cache"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode != 0
    assert "compoworld.core.clock -> compoworld.tasks.generator" in r.stdout


def test_every_module_imports() -> None:
    """The graph above ignores an import of a module that does not exist: import each one for real."""
    code = (
        "import importlib, pkgutil, compoworld\n"
        "bad = []\n"
        "for m in pkgutil.walk_packages(compoworld.__path__, 'compoworld.'):\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except Exception as e:\n"
        "        bad.append(f'{m.name}: {type(e).__name__}: {e}')\n"
        "print('\\n'.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
