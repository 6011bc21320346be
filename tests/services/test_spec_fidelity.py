"""Every service that names a real MCP spec uses that server's tool and parameter names.

For each spec file the test reports the overlap (printed with -s) and requires that at least 80% of
the spec's tools are modelled, or that the service's docstring says which are not and why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compoworld.services import registry

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
WITH_SPEC = [name for name, cls in registry().items() if cls.spec]


def load_spec(filename: str) -> dict[str, set[str]]:
    data = json.loads((SPECS / filename).read_text())
    return {t["name"]: set((t.get("inputSchema") or {}).get("properties", {})) for t in data["tools"]}


@pytest.mark.skipif(not SPECS.exists(), reason="shared/mcp-specs is not next to the checkout")
@pytest.mark.parametrize("service", WITH_SPEC)
def test_tools_and_parameters_match_the_spec(service: str) -> None:
    cls = registry()[service]
    spec = load_spec(cls.spec)
    ours = cls.tool_specs
    modelled = [t for t in spec if t in ours]
    ratio = len(modelled) / len(spec)
    extra = sorted(set(ours) - set(spec))
    print(f"{service}: {len(modelled)}/{len(spec)} spec tools modelled ({ratio:.0%}); extra tools: {extra}")
    module_doc = __import__(cls.__module__, fromlist=["_"]).__doc__ or ""
    assert cls.spec in module_doc, f"{service}'s module docstring must name its spec file {cls.spec}"
    if ratio < 0.8:
        assert re.search(r"not modelled", module_doc, re.I), (
            f"{service} models {ratio:.0%} of {cls.spec} without saying why"
        )
        missing = [t for t in spec if t not in ours]
        assert missing
    for name in modelled:
        theirs = spec[name]
        mine = set(ours[name].params)
        assert theirs <= mine, f"{service}.{name} lacks the spec's parameters {sorted(theirs - mine)}"
        unknown = mine - theirs
        assert len(unknown) <= 1, f"{service}.{name} adds parameters the spec lacks: {sorted(unknown)}"
        required = set(ours[name].required)
        spec_required = set(
            (
                next(t for t in json.loads((SPECS / cls.spec).read_text())["tools"] if t["name"] == name).get(
                    "inputSchema"
                )
                or {}
            ).get("required")
            or []
        )
        assert required <= spec_required | {"method"}, (
            f"{service}.{name} requires {sorted(required - spec_required)} that the spec leaves optional"
        )


def test_library_size_and_domains() -> None:
    reg = registry()
    assert len(reg) >= 24
    assert len({c.domain for c in reg.values()}) >= 12
    assert sum(len(c.tool_specs) for c in reg.values()) >= 360
