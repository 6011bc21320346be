"""Hypothesis strategies that derive random, malformed and hostile tool arguments from JSON Schemas."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOSTILE = st.sampled_from(
    [
        None,
        0,
        -1,
        2**63,
        1.5,
        float("inf"),
        True,
        "",
        " ",
        "x" * 100_000,
        "\u0000",
        "\ud800",
        "🙂 ünïcödé ​",
        "../../etc/passwd",
        "' OR 1=1 --",
        "<script>alert(1)</script>",
        [],
        {},
        [None],
        {"a": 1},
        "1970-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "not-a-date",
        "a@b",
        "x@y.example",
    ]
)


DATES = [
    "2026-03-02T09:00:00Z",
    "2026-03-03T10:00:00Z",
    "2026-03-03T11:30:00Z",
    "2026-03-10T00:00:00Z",
    "2026-02-20",
]


def _pool(name: str, pools: dict[str, list[str]]) -> list[str]:
    n = name.lower()
    if "email" in n or n in (
        "to",
        "cc",
        "bcc",
        "attendees",
        "items",
        "attendees_to_add",
        "attendees_to_remove",
    ):
        return pools["email"]
    if n.endswith(("id", "ids", "ts", "timestamp", "token", "cursor")) or "id_" in n:
        stem = n.replace("_", "").removesuffix("s").removesuffix("id").removesuffix("ts")
        for table, keys in pools.items():  # a parameter named after a table takes that table's keys
            if table.startswith("table:") and stem and stem in table[6:].replace("_", ""):
                return keys + pools["id"][:10]
        return pools["id"]
    if "date" in n or "time" in n:
        return pools["date"] + pools["id"][:10]
    return pools["text"]


def value_for(schema: dict[str, Any], pools: dict[str, list[str]], name: str = "") -> st.SearchStrategy[Any]:
    """A plausible value of the schema's type, often a real id, email or date from the state."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    t = schema.get("type")
    if t == "string":
        return st.one_of(st.sampled_from(_pool(name, pools) or ["x"]), st.text(max_size=30))
    if t == "integer":
        return st.one_of(st.integers(min_value=1, max_value=50), st.integers(min_value=-5, max_value=100_000))
    if t == "number":
        return st.floats(allow_nan=False, min_value=-1e6, max_value=1e6)
    if t == "boolean":
        return st.booleans()
    if t == "array":
        return st.lists(value_for(schema.get("items", {}), pools, name), min_size=1, max_size=3) | st.just([])
    if t == "object":
        return st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=8), st.integers()), max_size=3)
    if "anyOf" in schema:
        return st.one_of([value_for(s, pools, name) for s in schema["anyOf"]])
    return st.one_of(st.text(max_size=10), st.integers())


def arguments_for(schema: dict[str, Any], pools: dict[str, list[str]]) -> st.SearchStrategy[Any]:
    """Mostly well-typed arguments, with missing, extra, wrong-typed and hostile fields mixed in."""
    props = schema.get("properties", {})
    required = set(schema.get("required", []))

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        shape = draw(st.sampled_from(["typed"] * 6 + ["hostile", "hostile", "not_object"]))
        if shape == "not_object":
            return draw(
                st.one_of(st.none(), st.integers(), st.text(max_size=20), st.lists(st.integers(), max_size=2))
            )
        args: dict[str, Any] = {}
        for name, sub in props.items():
            if name not in required and draw(st.booleans()):
                continue
            if shape == "hostile" and draw(st.booleans()):
                args[name] = draw(HOSTILE)
            else:
                args[name] = draw(value_for(sub, pools, name))
        if required and draw(st.integers(0, 9)) == 0:
            args.pop(draw(st.sampled_from(sorted(required))), None)
        if draw(st.integers(0, 9)) == 0:
            args[draw(st.sampled_from(["extra", "__proto__", "id", "self"]))] = draw(HOSTILE)
        return args

    return build()
