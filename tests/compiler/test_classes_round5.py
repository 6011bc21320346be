"""Round-5 class: a free-text search parameter by another name (`search_text`, `searchString`) is a
search over the records, never an equality filter on a stored field of that name."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
S = {"type": "string"}

NOTES = {
    "server": "Notebox (test fixture)",
    "domain": "productivity",
    "tools": [
        {
            "name": "create_note",
            "description": "Create a note.",
            "inputSchema": {"type": "object", "properties": {"title": S, "body": S}, "required": ["title"]},
        },
        {
            "name": "find_notes",
            "description": "Find notes whose text matches the search string.",
            "inputSchema": {
                "type": "object",
                "properties": {"searchString": S, "limit": {"type": "integer", "maximum": 50}},
                "required": ["searchString"],
            },
        },
    ],
}


def _ok(r: dict) -> object:
    assert r["success"], r
    return r["data"]


@pytest.mark.parametrize("param", ["searchString", "search_text", "searchPhrase"])
def test_a_search_by_another_name_finds_records_by_their_text(tmp_path, param) -> None:
    spec = {**NOTES, "tools": [NOTES["tools"][0], {**NOTES["tools"][1]}]}
    tool = spec["tools"][1]
    tool["inputSchema"] = {
        "type": "object",
        "properties": {param: S, "limit": {"type": "integer", "maximum": 50}},
        "required": [param],
    }
    m = compile_spec(spec, "svc")
    finder = next(t for t in m["tools"] if t["original_name"] == "find_notes")
    assert finder["status"] == "compiled" and finder["op"]["kind"] == "list"
    env = Environment([service_from_manifest(m)], seed=1, size="small")
    _ok(env.call("svc__create_note", {"title": "Rotterdam pallet schedule", "body": "weekly"}))
    _ok(env.call("svc__create_note", {"title": "Lisbon offsite", "body": "agenda"}))
    hits = _ok(env.call("svc__find_notes", {param: "rotterdam"}))["items"]
    assert [h["title"] for h in hits] == ["Rotterdam pallet schedule"]
    assert _ok(env.call("svc__find_notes", {param: "zzzz-nothing"}))["items"] == []


@pytest.mark.skipif(not (SPECS / "corpus").is_dir(), reason="the corpus of real specs is not here")
def test_fred_series_search_finds_a_seeded_series_by_a_word_of_its_title() -> None:
    path = next((SPECS / "corpus").glob("*fred*.json"), None)
    if path is None:
        pytest.skip("no FRED spec in the corpus")
    m = compile_spec(path, "svc")
    env = Environment([service_from_manifest(m)], seed=3, size="small")
    search = next(t for t in m["tools"] if t["original_name"] == "fred_search")
    assert search["status"] == "compiled"
    rows = list(env.services["svc"].table(m["resources"]["series"]["table"]).values())
    word = next(w for r in rows for w in str(r.get("title", "")).split() if len(w) > 4)
    hits = _ok(env.call("svc__fred_search", {"search_text": word, "limit": 50}))["items"]
    assert hits and all(word.casefold() in str(h).casefold() for h in hits)


@pytest.mark.skipif(not (SPECS / "corpus").is_dir(), reason="the corpus of real specs is not here")
def test_an_info_input_wrapped_in_a_query_object_is_read_from_inside_it() -> None:
    """Interzoid's weather takes `{"query": {"license", "city", "state"}}`: the city inside decides the
    answer (not the key beside it), and it agrees with another weather service of the same world."""
    iz = compile_spec(SPECS / "corpus/openmcp_interzoid_com_getweathercity.json", "iz")
    kw = compile_spec(SPECS / "corpus/openmcp_korea-weather.json", "kw")
    env = Environment([service_from_manifest(iz), service_from_manifest(kw)], seed=4, size="small")

    def iz_temp(city: str, key: str) -> float:
        q = {"query": {"license": key, "city": city, "state": "n/a"}}
        return _ok(env.call("iz__getweather", q))["temperature_c"]

    assert iz_temp("Berlin", "key-one") == iz_temp("Berlin", "key-two")
    assert iz_temp("Berlin", "key-one") != iz_temp("Lagos", "key-one")
    kw_temp = _ok(env.call("kw__tool_get_current_weather_post", {"location": "Berlin"}))["temperature_c"]
    assert kw_temp == iz_temp("Berlin", "key-one")
