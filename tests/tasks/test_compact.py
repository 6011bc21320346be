"""Compact task files: s0 as a patch on the seeded base world, rebuilt byte-identically and checked."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.core.state import HASH_VERSION
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import (
    PACK_PLAIN,
    TASK_FORMAT,
    Task,
    apply_patch,
    load_tasks,
    save_tasks,
    state_patch,
    unpack_line,
)
from compoworld.tasks.pipeline import generate

runner = CliRunner()


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    out, _ = generate(8, seed=11, settings=Settings())
    return out


def test_compact_files_rebuild_every_task_byte_identically(tasks: list[Task], tmp_path: Path) -> None:
    compact, full = tmp_path / "c.jsonl", tmp_path / "f.jsonl"
    save_tasks(tasks, compact)
    save_tasks(tasks, full, full=True)
    assert full.stat().st_size > 5 * compact.stat().st_size
    line = orjson.loads(compact.read_bytes().splitlines()[0])
    assert "initial_state" not in line and line["world"]["seed"] >= 0
    assert line["hash_version"] == HASH_VERSION and line["format_version"] == TASK_FORMAT
    a, b = load_tasks(compact), load_tasks(full)
    assert [t.to_json() for t in a] == [t.to_json() for t in b] == [t.to_json() for t in tasks]
    for x, y in zip(a, b, strict=True):  # the same table order as a full file gives: same tool results
        sx, sy = x.initial_state["services"], y.initial_state["services"]
        assert [(s, list(t), [list(v) for v in t.values()]) for s, t in sx.items()] == [
            (s, list(t), [list(v) for v in t.values()]) for s, t in sy.items()
        ]
    gates = run_gates(a[0], regenerate=True)
    assert all(v is None for v in gates.values()), gates


def test_export_full_and_compact_round_trip(tasks: list[Task], tmp_path: Path) -> None:
    compact, full, back = tmp_path / "c.jsonl", tmp_path / "f.jsonl", tmp_path / "b.jsonl"
    save_tasks(tasks[:3], compact)
    r = runner.invoke(app, ["tasks", "export", str(compact), str(full), "--full"])
    assert r.exit_code == 0, r.output
    assert "full" in r.output and all("initial_state" in json.loads(x) for x in full.read_text().splitlines())
    r = runner.invoke(app, ["tasks", "export", str(full), str(back)])
    assert r.exit_code == 0, r.output
    assert back.read_bytes() == compact.read_bytes()
    assert runner.invoke(app, ["tasks", "export", str(tmp_path / "nope.jsonl"), str(back)]).exit_code == 2


def test_a_rebuild_that_does_not_match_its_digest_is_refused(tasks: list[Task], tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    save_tasks(tasks[:1], f)
    line = unpack_line(orjson.loads(f.read_bytes()))  # written back plain: an unpacked line loads too
    line["initial_state_patch"]["digest"] = "0" * 32
    f.write_bytes(orjson.dumps(line) + b"\n")
    with pytest.raises(ValueError, match=r"c.jsonl:1: the initial state rebuilt .* export --full"):
        load_tasks(f)
    svc = tasks[0].services[0]
    line["initial_state_patch"]["services"] = {svc: {"tables": {"_meta": {"edit": {"nope": {}}}}}}
    f.write_bytes(orjson.dumps(line) + b"\n")
    with pytest.raises(ValueError, match=r"c.jsonl:1: invalid task: field initial_state_patch"):
        load_tasks(f)
    old = {**line, "format_version": 2}
    f.write_bytes(orjson.dumps(old) + b"\n")
    with pytest.raises(ValueError, match=r"task format 2 is not supported"):
        load_tasks(f)


def test_packed_lines_keep_what_a_person_scans_plain_and_load_as_unpacked_ones(
    tasks: list[Task], tmp_path: Path
) -> None:
    packed, plain = tmp_path / "p.jsonl", tmp_path / "u.jsonl"
    save_tasks(tasks, packed)
    plain.write_bytes(b"".join(t.to_line(pack=False) + b"\n" for t in tasks))  # the format before packing
    assert packed.stat().st_size * 2 < plain.stat().st_size
    lines = [orjson.loads(x) for x in packed.read_bytes().splitlines()]
    assert all(set(x) == {*PACK_PLAIN, "packed"} - ({"answer"} - set(x)) for x in lines)
    assert [x["instruction"] for x in lines] == [t.instruction for t in tasks]
    assert [unpack_line(x) for x in lines] == [orjson.loads(x) for x in plain.read_bytes().splitlines()]
    assert [t.to_json() for t in load_tasks(packed)] == [t.to_json() for t in load_tasks(plain)]
    gz = tmp_path / "p.jsonl.gz"  # gzip packs a whole file better than each line alone
    save_tasks(tasks, gz)
    assert [t.to_json() for t in load_tasks(gz)] == [t.to_json() for t in tasks]
    bad = {**lines[0], "packed": lines[0]["packed"][:-12] + "0" * 12}
    packed.write_bytes(orjson.dumps(bad) + b"\n")
    with pytest.raises(ValueError, match=r"p.jsonl:1: invalid task: field packed: cannot be unpacked"):
        load_tasks(packed)
    packed.write_bytes(orjson.dumps({**lines[0], "packed": "zz:abc"}) + b"\n")
    with pytest.raises(ValueError, match=r"p.jsonl:1: invalid task: field packed: not a packed task"):
        load_tasks(packed)


RECORD = st.one_of(
    st.fixed_dictionaries(
        {"id": st.sampled_from("abcdef"), "n": st.integers(0, 3)}, optional={"x": st.none()}
    ),
    st.integers(0, 3),
)
TABLE = st.dictionaries(st.sampled_from("abcdef"), RECORD, max_size=6)


@settings(max_examples=200, deadline=None)
@given(
    base=st.dictionaries(st.sampled_from(["t", "u"]), TABLE),
    s0=st.dictionaries(st.sampled_from(["t", "u", "v"]), TABLE),
)
def test_a_patch_rebuilds_any_state_from_any_base(base: dict, s0: dict) -> None:
    b = {"services": {"svc": base}}
    s = {"services": {"svc": s0}}
    patch = orjson.loads(orjson.dumps(state_patch(b, s), option=orjson.OPT_SORT_KEYS))
    sorted_base = orjson.loads(orjson.dumps(b, option=orjson.OPT_SORT_KEYS))
    got = apply_patch(sorted_base, ["svc"], patch)
    assert orjson.dumps(got, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        s["services"], option=orjson.OPT_SORT_KEYS
    )
    want = orjson.loads(orjson.dumps(s["services"], option=orjson.OPT_SORT_KEYS))
    assert [(t, list(v)) for t, v in got["svc"].items()] == [(t, list(v)) for t, v in want["svc"].items()]


CELLS = st.dictionaries(
    st.builds(lambda c, r: f"{c}{r}", st.sampled_from(["A", "B", "C", "Z", "AA", "AZ"]), st.integers(1, 30)),
    st.one_of(st.none(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=4), st.booleans()),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(cells=CELLS, other=st.dictionaries(st.text(max_size=3), st.integers(-99, 99), max_size=9))
def test_sheet_cells_packed_as_grids_come_back_exactly(cells: dict, other: dict) -> None:
    from compoworld.tasks.model import _cells, _grids

    plain = {"sheets": [{"cells": dict(sorted(cells.items())), "title": "Log"}], "other": other}
    back = _cells(orjson.loads(orjson.dumps(_grids(plain))))
    assert orjson.dumps(back) == orjson.dumps(plain)  # the same values, types and key order


def test_lines_packed_before_load_as_they_did_and_a_frame_cannot_ask_for_any_memory(
    tasks: list[Task], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64
    import zlib

    import zstandard

    from compoworld.tasks.model import _grids, _zdict

    f = tmp_path / "p.jsonl"
    save_tasks(tasks[:2], f)
    lines = [orjson.loads(x) for x in f.read_bytes().splitlines()]
    assert all(x["packed"].startswith("z3:") for x in lines)
    plain = [unpack_line(x) for x in lines]
    old = []
    for form, line in (("z1", plain[0]), ("z2", plain[1])):  # the zlib packings files still hold
        rest = {k: v for k, v in line.items() if k not in PACK_PLAIN}
        raw = orjson.dumps(_grids(rest) if form == "z2" else rest, option=orjson.OPT_SORT_KEYS)
        z = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, _zdict())
        packed = f"{form}:" + base64.b85encode(z.compress(raw) + z.flush()).decode()
        old.append({**{k: v for k, v in line.items() if k in PACK_PLAIN}, "packed": packed})
    assert [unpack_line(x) for x in old] == plain
    f.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in old))
    assert [t.to_json() for t in load_tasks(f)] == [t.to_json() for t in tasks[:2]]
    # a frame may claim any size in its header: one over the limit is refused before anything is
    # allocated (here 1 MiB of zeros against a limit of 512 KiB)
    monkeypatch.setattr("compoworld.tasks.model._PACKED_MAX", 1 << 19)
    bomb = zstandard.ZstdCompressor(level=1).compress(b"\0" * (1 << 20))
    f.write_bytes(orjson.dumps({**lines[0], "packed": "z3:" + base64.b85encode(bomb).decode()}) + b"\n")
    with pytest.raises(ValueError, match=r"p.jsonl:1: .*field packed: cannot be unpacked .*1048576 bytes"):
        load_tasks(f)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_base85_is_the_standard_librarys_text_both_ways(data: bytes) -> None:
    import base64

    from compoworld.tasks.model import b85decode, b85encode

    text = base64.b85encode(data).decode()
    assert b85encode(data) == text and b85decode(text) == data


def test_base85_refuses_what_the_standard_library_refuses() -> None:
    import base64

    from compoworld.tasks.model import b85decode

    for bad in ("abc\x00d", "~~~~~", "é", "ab cd"):  # a byte no digit is, a group over 2**32, not ASCII
        with pytest.raises(ValueError):
            base64.b85decode(bad)
        with pytest.raises(ValueError):
            b85decode(bad)
