"""The task model. A task is pure data: loading one runs nothing (no code, no eval, no imports)."""

from __future__ import annotations

import base64
import gzip
import re
import threading
import zlib
from pathlib import Path
from typing import Any, Literal

import orjson
import zstandard
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compoworld.core.state import HASH_VERSION, hash_value

# 2: grounded turns with sources, goal/guard checks, traps, record-level collateral;
# 3: hashes of version `HASH_VERSION` (recorded per task); s0 as a base-world reference plus a patch
TASK_FORMAT = 3


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: str
    value: str


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: int
    target: int
    fact: Fact


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: int
    service: str
    move: str
    mutates: bool


class DependencyGraph(BaseModel):
    model_config = ConfigDict(extra="forbid")
    nodes: list[Node]
    edges: list[Edge]


class RubricItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    description: str
    weight: float = 1.0
    check: dict[str, Any]
    step: int | None = None  # the walk step whose effect this checks, if any
    kind: Literal["goal", "guard"] = "goal"  # guards (traps, collateral) gate the credit, never earn it


class Call(BaseModel):
    """One reference call. Calls of one `turn` go out together, so none of them may use what
    another call of the same turn returns; `sources` says where each identifying argument value
    was first shown: "instruction", "system", or "obs:N" (the observation of reference call N)."""

    model_config = ConfigDict(extra="forbid")
    tool: str
    arguments: dict[str, Any]
    step: int
    turn: int = 0
    sources: dict[str, str] = Field(default_factory=dict)


class Trap(BaseModel):
    """A candidate a careless agent would act on instead of the target (data for the adversaries).

    `swap` maps values of the reference's writes (an id, an email, a channel) to the decoy's, so the
    decoy and spray adversaries can act on the decoy exactly as the reference acts on the target."""

    model_config = ConfigDict(extra="forbid")
    kind: str  # near_duplicate, stale, closed, do_not_contact, policy_exception, other_recipient, ...
    description: str
    swap: dict[str, str] = Field(default_factory=dict)
    answer: str | None = None  # what an answer naming this candidate would say


class LivedRef(BaseModel):
    """A persona world's state after one day, named by the world's content digest and its name
    (found beside the task file, never by an absolute path: see `worlds.store.locate`)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    digest: str
    persona: str
    day: int


class WorldRef(BaseModel):
    """The seeded base world a task's s0 was planted on (`tasks.generator.base_world`); with
    `lived`, the persona's services as that world's day left them replace the seeded ones."""

    model_config = ConfigDict(extra="forbid")
    seed: int
    size: str
    generator_version: str
    lived: LivedRef | None = None


class Task(BaseModel):
    """One verified cross-service task (see DESIGN.md, "Tasks")."""

    model_config = ConfigDict(extra="forbid")
    id: str
    instruction: str
    services: list[str]
    distractors: list[str]
    initial_state: dict[str, Any] = Field(repr=False)
    initial_state_hash: str
    dependency_graph: DependencyGraph
    walk: list[str]
    rubric: list[RubricItem]
    answer: str | None = None
    reference_solution: list[Call]
    hint: str
    subtasks: list[str]
    meta: dict[str, Any]
    traps: list[Trap] = Field(default_factory=list)
    world: WorldRef | None = None  # set: files store s0 as this world plus a patch
    hash_version: int = HASH_VERSION  # the state-hash scheme of initial_state_hash
    format_version: int = TASK_FORMAT

    @property
    def all_services(self) -> list[str]:
        return [*self.services, *self.distractors]

    def environment(self, library=None):
        """A fresh environment in this task's initial state (services from `library`, default: the active one)."""
        from compoworld.core.environment import Environment

        return Environment.from_snapshot(self.all_services, self.initial_state, library=library)

    def to_json(self) -> bytes:
        """The whole task, s0 included, as canonical JSON (what regeneration compares)."""
        d = self._dump()
        d["initial_state"] = self.initial_state  # plain JSON data already: orjson writes it as is
        return orjson.dumps(d, option=orjson.OPT_SORT_KEYS)

    def _dump(self) -> dict[str, Any]:
        """Everything but s0; rubric items and calls leave out their default fields (a task file
        holds thousands of them)."""
        d = self.model_dump(mode="json", exclude={"initial_state", "rubric", "reference_solution"})
        d["rubric"] = [r.model_dump(mode="json", exclude_defaults=True) for r in self.rubric]
        d["reference_solution"] = [
            c.model_dump(mode="json", exclude_defaults=True) for c in self.reference_solution
        ]
        return d

    def to_line(self, full: bool = False, pack: bool = True) -> bytes:
        """The task as a line of a task file: s0 as a patch on its base world unless `full` (or
        the task has no base world), its bulky fields packed (`pack_line`) unless `pack` is off;
        `load_tasks` rebuilds it byte-identically."""
        if full or self.world is None:
            return self.to_json()
        d = self._dump()
        base = _base_world(self.world, services=self.all_services)
        d["initial_state_patch"] = {
            "clock": self.initial_state.get("clock"),
            "services": state_patch(base, self.initial_state),
            "digest": s0_digest(self.initial_state),
        }
        return orjson.dumps(pack_line(d) if pack else d, option=orjson.OPT_SORT_KEYS)


# ---- packed lines ---------------------------------------------------------------------------
# A compact line keeps what a person scans in plain JSON and packs the rest (s0's patch, rubric,
# reference, graph, traps, hint, subtasks, meta) into one field: a prefix naming the packing, then
# base85 of the compressed JSON. Lines are written "z3:" (Zstandard with the trained dictionary
# `pack_z3.zdict`, over the JSON with sheet cells as grids, see `_grids`); "z1:" (zlib with the
# preset dictionary `pack_z1.zdict`, the JSON as it is) where the data holds the grid marker itself.
# "z2:" (zlib, grids) is read as well. Dictionaries are frozen once written (files depend on them):
# a new one gets a new prefix beside these (tools/pack_dictionary.py builds them).
PACK_PLAIN = (
    "format_version",
    "id",
    "instruction",
    "services",
    "distractors",
    "answer",
    "world",
    "initial_state_hash",
    "hash_version",
)
_ZDICT_DIGESTS = {"z1": "0c7aca452c61722cef0fc9133722b8e2", "z3": "b637289a9618be35c8c3fe0794fd6912"}
_ZDICTS: dict[str, bytes] = {}
_ZSTD_LEVEL = 9  # from a sweep on 12 hard tasks: level 12 saves 2.6% more bytes at 2.8x the time
_PACKED_MAX = 1 << 30
_ZSTD = threading.local()  # Zstandard's (de)compressors are not for sharing between threads


def _zdict(name: str = "z1") -> bytes:
    hit = _ZDICTS.get(name)
    if hit is None:
        import hashlib

        hit = (Path(__file__).with_name(f"pack_{name}.zdict")).read_bytes()
        if hashlib.sha256(hit).hexdigest()[:32] != _ZDICT_DIGESTS[name]:  # frozen: files depend on it
            raise ValueError(f"the packing dictionary pack_{name}.zdict was changed; restore it")
        _ZDICTS[name] = hit
    return hit


def _zstd() -> tuple[Any, Any]:
    """This thread's Zstandard compressor and decompressor with the `z3` dictionary."""
    pair = getattr(_ZSTD, "pair", None)
    if pair is None:
        d = zstandard.ZstdCompressionDict(_zdict("z3"), dict_type=zstandard.DICT_TYPE_FULLDICT)
        pair = _ZSTD.pair = (
            zstandard.ZstdCompressor(level=_ZSTD_LEVEL, dict_data=d, write_dict_id=False),
            zstandard.ZstdDecompressor(dict_data=d),
        )
    return pair


def pack_line(d: dict[str, Any]) -> dict[str, Any]:
    """The line's fields outside `PACK_PLAIN` packed into `packed`: "z3:" (sheet cells as grids)
    or, where the data holds the grid marker itself, "z1:" (as they are)."""
    out = {k: v for k, v in d.items() if k in PACK_PLAIN}
    rest = {k: v for k, v in d.items() if k not in PACK_PLAIN}
    raw = orjson.dumps(rest, option=orjson.OPT_SORT_KEYS)
    if _GRID_JSON not in raw:
        raw = orjson.dumps(_grids(rest), option=orjson.OPT_SORT_KEYS)
        out["packed"] = "z3:" + b85encode(_zstd()[0].compress(raw))
        return out
    z = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, _zdict())
    out["packed"] = "z1:" + b85encode(z.compress(raw) + z.flush())
    return out


def unpack_line(data: dict[str, Any]) -> dict[str, Any]:
    """A parsed line with its `packed` fields back in place (a line without one is returned as is)."""
    if "packed" not in data:
        return data
    data = dict(data)
    packed = data.pop("packed")
    if not isinstance(packed, str) or packed[:3] not in ("z1:", "z2:", "z3:"):
        raise ValueError("field packed: not a packed task (expected 'z1:', 'z2:' or 'z3:' and base85 text)")
    try:
        blob = b85decode(packed[3:])
        if packed[:3] == "z3:":
            size = zstandard.frame_content_size(blob)
            if size > _PACKED_MAX:  # a line may not ask for any memory it likes
                raise ValueError(f"it would unpack to {size} bytes, over the limit of {_PACKED_MAX}")
            raw = _zstd()[1].decompress(blob, max_output_size=_PACKED_MAX)
        else:
            z = zlib.decompressobj(zdict=_zdict())
            raw = z.decompress(blob) + z.flush()
        rest = orjson.loads(raw)
        if packed[:3] != "z1:":  # each grid starts with its marker as a key: that many to undo
            rest = _cells(rest, raw.count(_GRID_KEY))
    except (ValueError, TypeError, IndexError, zlib.error, zstandard.ZstdError, orjson.JSONDecodeError) as e:
        raise ValueError(f"field packed: cannot be unpacked ({type(e).__name__}: {e})") from None
    if not isinstance(rest, dict) or set(rest) & set(data):
        raise ValueError("field packed: holds fields the line also has in plain text")
    data.update(rest)
    return data


# A sheet's cells keyed "A1", "A10", "A100", ... in sorted order interleave its columns and shuffle
# its rows, which hides their patterns from zlib (dates a day apart, ids one apart): "z2" writes
# each block of cells as rows of a grid, {_GRID: [first column, first row, rows]}, holes as _GRID.
_GRID = "\u0000grid"
_GRID_JSON = orjson.dumps(_GRID)[1:-1]
_GRID_KEY = b'{"' + _GRID_JSON + b'":'
_CELL = re.compile(r"([A-Z]{1,3})([1-9][0-9]{0,6})")


def _col(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def _letters(n: int) -> str:
    out = ""
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def _grids(value: Any) -> Any:
    if isinstance(value, list):
        return [_grids(v) for v in value]
    if not isinstance(value, dict):
        return value
    at = [_CELL.fullmatch(k) for k in value] if len(value) >= 8 else []
    if at and all(at):
        cols = [_col(m.group(1)) for m in at]  # type: ignore[union-attr]
        rows = [int(m.group(2)) for m in at]  # type: ignore[union-attr]
        c0, r0 = min(cols), min(rows)
        width, height = max(cols) - c0 + 1, max(rows) - r0 + 1
        if width * height <= 2 * len(value):  # dense enough to be a grid
            grid: list[list[Any]] = [[_GRID] * width for _ in range(height)]
            for v, c, r in zip(value.values(), cols, rows, strict=True):
                grid[r - r0][c - c0] = _grids(v)
            for row in grid:
                while row and row[-1] == _GRID:
                    row.pop()
            return {_GRID: [c0, r0, grid]}
    return {k: _grids(v) for k, v in value.items()}


def _cells(value: Any, grids: int = -1) -> Any:
    """`_grids` undone: the cells keyed again, in sorted order (as the plain line's JSON has them).
    In place (the value is freshly parsed JSON), and with `grids` (how many the data holds) it stops
    once all are undone: a packed line holds hundreds of thousands of values, and walking them all
    cost more than the rest of a load."""
    left = [grids]

    def walk(v: Any) -> Any:
        if type(v) is list:
            for i, x in enumerate(v):
                if not left[0]:
                    break
                if type(x) is dict or type(x) is list:
                    v[i] = walk(x)
            return v
        if type(v) is not dict:
            return v
        if len(v) == 1 and _GRID in v:
            left[0] -= 1
            c0, r0, grid = v[_GRID]
            letters = [_letters(c0 + j) for j in range(max(map(len, grid), default=0))]
            cells = {
                f"{letters[j]}{r0 + i}": walk(x)
                for i, row in enumerate(grid)
                for j, x in enumerate(row)
                if x != _GRID
            }
            return {k: cells[k] for k in sorted(cells)}
        for k, x in v.items():
            if not left[0]:
                break
            if type(x) is dict or type(x) is list:
                v[k] = walk(x)  # a key's value replaced: the dict's size and order stay
        return v

    return walk(value)


# base85 as `base64.b85encode`/`b85decode` write and read it (the same text, the same errors' kind),
# a whole array at a time: the standard library's loops over each 5-character group took a fifth of
# a load
_B85_DIGITS: Any = None
_B85 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"


def b85encode(data: bytes) -> str:
    import numpy as np

    pad = -len(data) % 4
    words = np.frombuffer(data + b"\0" * pad, dtype=">u4").astype(np.uint64)
    digits = np.empty((len(words), 5), dtype=np.uint8)
    for i in range(4, -1, -1):
        digits[:, i] = words % 85
        words //= 85
    out = np.frombuffer(_B85, dtype=np.uint8)[digits].tobytes()
    return (out[: len(out) - pad] if pad else out).decode("ascii")


def b85decode(text: str) -> bytes:
    import numpy as np

    global _B85_DIGITS
    if _B85_DIGITS is None:  # each byte's digit, 255 for a byte that is none
        table = np.full(256, 255, dtype=np.uint8)
        table[np.frombuffer(_B85, dtype=np.uint8)] = np.arange(85, dtype=np.uint8)
        _B85_DIGITS = table
    raw = text.encode("ascii")  # a non-ASCII character: UnicodeEncodeError, a ValueError
    pad = -len(raw) % 5
    digits = _B85_DIGITS[np.frombuffer(raw + b"~" * pad, dtype=np.uint8)]
    if (digits == 255).any():
        raise ValueError("bad base85 character")
    d = digits.reshape(-1, 5).astype(np.uint64)
    words = (((d[:, 0] * 85 + d[:, 1]) * 85 + d[:, 2]) * 85 + d[:, 3]) * 85 + d[:, 4]
    if (words > 0xFFFFFFFF).any():
        raise ValueError("base85 overflow in a group")
    out = words.astype(">u4").tobytes()
    return out[: len(out) - pad] if pad else out


def state_hash_of(snapshot: dict[str, Any]) -> str:
    return hash_value(snapshot)


# ---- compact initial states: a base world plus a patch ----------------------------------------
def _base_world(ref: WorldRef, near: Path | None = None, services: list[str] | None = None) -> dict[str, Any]:
    from compoworld.core.environment import seeded_world
    from compoworld.core.library import active

    if ref.lived is not None:  # only the task's services, each sorted and cached on its own
        from compoworld.worlds.store import lived_services

        lv = ref.lived
        return lived_services(
            lv.name, lv.digest, lv.persona, lv.day, ref.seed, ref.size, services or [], near
        )
    return seeded_world(active(), ref.seed, ref.size)  # `tasks.generator.base_world`


def state_patch(base: dict[str, Any], s0: dict[str, Any]) -> dict[str, Any]:
    """Per service of `s0`: only its tables that differ from `base`, and in them only the records
    that differ (`set`) or are gone (`del`); a service the base lacks is written whole (`all`)."""
    out: dict[str, Any] = {}
    bases = base.get("services", {})
    for name, svc in s0.get("services", {}).items():
        bsvc = bases.get(name)
        if not isinstance(bsvc, dict) or not isinstance(svc, dict):
            out[name] = {"all": svc}
            continue
        tables: dict[str, Any] = {}
        for t, table in svc.items():
            bt = bsvc.get(t)
            if bt is table:
                continue
            if not isinstance(bt, dict) or not isinstance(table, dict):
                if bt != table:
                    tables[t] = {"all": table}
                continue
            changed: dict[str, Any] = {}
            edits: dict[str, Any] = {}
            blobs: dict[str, Any] = {}
            for k, r in sorted(table.items()):  # in key order, as the rebuild is: one encoding per state
                old = bt.get(k, _GONE)
                if old is r or old == r:
                    continue
                if isinstance(old, dict) and isinstance(r, dict):  # an edited record: its fields
                    gone_fields = sorted(f for f in old if f not in r)
                    edits[k] = {"set": {f: v for f, v in r.items() if f not in old or old[f] != v}}
                    if gone_fields:
                        edits[k]["del"] = gone_fields
                else:
                    delta = blob_delta(old, r) if isinstance(old, str) and isinstance(r, str) else None
                    if delta is not None:
                        blobs[k] = delta
                    else:
                        changed[k] = r
            gone = sorted(k for k in bt if k not in table)
            rows = _columns(changed)
            if rows is not None:  # many new records of one shape: the field names once
                changed = {}
            parts = {"set": changed, "rows": rows, "del": gone, "edit": edits, "blob": blobs}
            if changed or rows or gone or edits or blobs:
                tables[t] = {k: v for k, v in parts.items() if v}
        dropped = sorted(t for t in bsvc if t not in svc)
        if dropped:
            out[name] = {"tables": tables, "drop": dropped}
        elif tables:
            out[name] = {"tables": tables}
    return out


def apply_patch(base: dict[str, Any], services: list[str], patch: dict[str, Any]) -> dict[str, Any]:
    """`services` of `base` with `patch` applied; every table's keys sorted as a full file's are."""
    bases = base["services"]
    out: dict[str, Any] = {}
    for name in sorted(services):
        p = patch.get(name)
        if p is not None and "all" in p:
            out[name] = p["all"]
            continue
        svc = dict(bases[name])
        if p is not None:
            for t in p.get("drop", ()):
                svc.pop(t, None)
            for t, tp in p.get("tables", {}).items():
                if "all" in tp:
                    svc[t] = tp["all"]
                    continue
                table = dict(svc.get(t) or {})
                table.update(tp.get("set", {}))
                if "rows" in tp:
                    table.update(_uncolumn(tp["rows"]))
                for k, delta in tp.get("blob", {}).items():
                    table[k] = apply_blob(table[k], delta)
                for k, e in tp.get("edit", {}).items():
                    rec = {**table[k], **e["set"]}
                    for f in e.get("del", ()):
                        rec.pop(f, None)
                    table[k] = dict(sorted(rec.items()))
                for k in tp.get("del", ()):
                    table.pop(k, None)
                svc[t] = dict(sorted(table.items()))
            svc = dict(sorted(svc.items()))
        out[name] = svc
    return out


def _columns(records: dict[str, Any]) -> dict[str, Any] | None:
    """Records that all have the same fields, as columns (`cols`) and rows; None otherwise."""
    if len(records) < 2:
        return None
    shape = None
    for r in records.values():
        if not isinstance(r, dict):
            return None
        keys = sorted(r)
        if shape is None:
            shape = keys
        elif keys != shape:
            return None
    assert shape is not None
    recs = list(records.values())
    same = [c for c in shape if all(r[c] == recs[0][c] for r in recs[1:])]
    cols = [c for c in shape if c not in same]
    out: dict[str, Any] = {"cols": cols, "vals": [[r[c] for c in cols] for r in recs]}
    if same:  # a column with one value (a flag, an empty list): written once
        out["same"] = {c: recs[0][c] for c in same}
    by = next((c for c in cols if all(r[c] == k for k, r in records.items())), None)
    if by is not None:  # the key is a field of the record (its id): not written twice
        out["key"] = by
    else:
        out["keys"] = list(records)
    return out


def _uncolumn(rows: dict[str, Any]) -> dict[str, Any]:
    cols, same = rows["cols"], rows.get("same", {})
    out = {}
    for i, vals in enumerate(rows["vals"]):
        rec = {**same, **dict(zip(cols, vals, strict=True))}
        rec = dict(sorted(rec.items()))
        out[rec[rows["key"]] if "key" in rows else rows["keys"][i]] = rec
    return out


def blob_delta(old: str, new: str) -> dict[str, Any] | None:
    """A database image (zlib, then base64: the SQL service's form) as the XOR of its bytes with the
    base's, compressed (a planted row changes a few bytes of a few pages). None where `new` is not
    such an image, or where recompressing would not give back its exact text."""
    if len(new) < 1024:
        return None
    try:
        a = zlib.decompress(base64.b64decode(old, validate=True))
        b = zlib.decompress(base64.b64decode(new, validate=True))
    except (ValueError, zlib.error):
        return None
    delta = {"len": len(b), "xor": base64.b64encode(zlib.compress(_xor(a, b), 9)).decode()}
    if len(delta["xor"]) >= len(new) or apply_blob(old, delta) != new:
        return None
    return delta


def apply_blob(old: str, delta: dict[str, Any]) -> str:
    a = zlib.decompress(base64.b64decode(old))
    b = _xor(a, zlib.decompress(base64.b64decode(delta["xor"])))[: delta["len"]]
    return base64.b64encode(zlib.compress(b, 6)).decode()


def _xor(a: bytes, b: bytes) -> bytes:
    n = max(len(a), len(b))
    x = int.from_bytes(a.ljust(n, b"\0"), "big") ^ int.from_bytes(b.ljust(n, b"\0"), "big")
    return x.to_bytes(n, "big")


def s0_digest(state: dict[str, Any], cache: dict[int, tuple[Any, str]] | None = None) -> str:
    """Digest of canonical JSON per table (tables shared between tasks are hashed once per `cache`)."""

    def th(table: Any) -> str:
        if cache is None:
            return hash_value(table)
        hit = cache.get(id(table))
        if hit is None or hit[0] is not table:
            hit = cache[id(table)] = (table, hash_value(table))
        return hit[1]

    return hash_value(
        {
            "clock": state.get("clock"),
            "services": {
                s: {t: th(v) for t, v in svc.items()} if isinstance(svc, dict) else hash_value(svc)
                for s, svc in state.get("services", {}).items()
            },
        }
    )


class _Rebuilder:
    """Rebuilds compact initial states; keeps each base world in sorted form, as a full file loads."""

    def __init__(self, near: Path | None = None) -> None:
        # shared by every load in this process: a persona world's day is tens of MiB, sorted and
        # digested once, not once per task file (entries hold their tables, so ids are never reused)
        self.worlds = _SORTED_BASES
        self.cache = _TABLE_DIGESTS
        self.near = near  # the task file's folder: where a persona world is looked for first

    def __call__(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        ref = WorldRef.model_validate(data.get("world"))
        if len(self.cache) > 20_000:  # it holds the tables it digested
            self.cache.clear()
        key = (ref.seed, ref.size)
        base = None
        if ref.lived is None:  # the sorted copy holds while the seeded world it came from does
            raw = _base_world(ref)
            hit = self.worlds.get(key)
            base = hit[1] if hit is not None and hit[0] is raw else None
        else:  # a persona world's day: the task's services, sorted once per process
            try:
                base = _base_world(ref, self.near, [*data.get("services", []), *data.get("distractors", [])])
            except ValueError as e:  # missing or different: one line, its digest named
                raise ValueError(f"{where}: {e}") from None
        if base is None:
            if len(self.worlds) >= 4:
                self.worlds.clear()
            raw = _base_world(ref)
            base = orjson.loads(orjson.dumps(raw, option=orjson.OPT_SORT_KEYS))
            self.worlds[key] = (raw, base)
        patch = data.pop("initial_state_patch")
        services = [*data.get("services", []), *data.get("distractors", [])]
        missing = [
            x for x in services if x not in base["services"] and "all" not in patch["services"].get(x, {})
        ]
        if missing:
            raise ValueError(
                f"{where}: the task uses services this library does not have: {', '.join(missing)} "
                "(compiled from manifests? load it with the same --manifests it was generated with)"
            )
        state = {"clock": patch["clock"], "services": apply_patch(base, services, patch["services"])}
        if s0_digest(state, self.cache) != patch["digest"]:
            raise ValueError(
                f"{where}: the initial state rebuilt from base world (seed {ref.seed}, size {ref.size}, "
                f"generator {ref.generator_version}) does not match the digest the file recorded: the "
                "seeded world changed since the file was written. Regenerate the set, or write it with "
                "`compoworld tasks export --full` on the version that made it"
            )
        return state


_GONE: Any = object()
_SORTED_BASES: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
_TABLE_DIGESTS: dict[int, tuple[Any, str]] = {}


def save_tasks(tasks: list[Task], path: str | Path, full: bool = False) -> None:
    """Write tasks as JSONL, one task a line; written to a temporary file then renamed (never half-written).

    Each task's s0 is written as a patch on its seeded base world (a few KB instead of a full
    snapshot); `full=True` writes self-contained tasks instead."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    gz = p.suffix == ".gz"
    with _open(tmp, "wb", gz=gz) as f:
        for t in tasks:
            f.write(t.to_line(full, pack=not gz) + b"\n")  # gzip packs a whole file better
    tmp.replace(p)


def _open(p: Path, mode: str, gz: bool | None = None):
    """Plain or gzip file (by suffix): task files are large, and compress ~10x."""
    if gz if gz is not None else p.suffix == ".gz":
        return gzip.open(p, mode, compresslevel=6)
    return p.open(mode)


def _not_a_task_file(p: Path) -> str | None:
    """Why `p` is no JSONL task file, when what it is can be told from its first bytes."""
    if p.is_dir():
        return f"{p} is a directory, not a task file: give the JSONL file inside it ({p / 'tasks.jsonl'}?)"
    with p.open("rb") as f:
        head = f.read(4)
    if head == b"PAR1":
        return (
            f"{p} is a Parquet file; task files are JSONL (`compoworld tasks generate --out tasks.jsonl` "
            "writes one; Parquet is an export)"
        )
    return None


def _not_a_task(data: Any, where: str) -> str | None:
    """Why a parsed JSON line is not a task, in its own words (an array, an RL or SFT row, an episode)."""
    if isinstance(data, list):
        return (
            f"{where}: a JSON array; a task file holds one task object per line (JSONL): "
            "`jq -c '.[]' FILE > tasks.jsonl` converts it"
        )
    if not isinstance(data, dict):
        return f"{where}: a JSON {type(data).__name__}, not a task object"
    if "instruction" in data or "format_version" in data:
        return None
    what = (
        "an SFT row (`export sft`)"
        if "messages" in data
        else "an RL row (`export rl`)"
        if "prompt" in data
        else "an episode record (a run's episodes.jsonl)"
        if "task_id" in data and "checks" in data
        else "a JSON object"
    )
    keys = ", ".join(list(data)[:6]) or "none"
    return f"{where}: {what}, not a task (fields: {keys}); a task has id, instruction, services, rubric, ..."


def load_tasks(path: str | Path, allow_empty: bool = False) -> list[Task]:
    """Read a JSONL task file; an invalid line raises ValueError naming the file, the line and the field.
    A file with no task is an error too (unless `allow_empty`)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such task file")
    if (why := _not_a_task_file(p)) is not None:
        raise ValueError(why)
    out = []
    rebuild = _Rebuilder(p.resolve().parent)
    with _open(p, "rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
                if (why := _not_a_task(data, f"{p}:{n}")) is not None:
                    raise ValueError(why)
                try:
                    data = unpack_line(data)
                except ValueError as e:
                    raise ValueError(f"{p}:{n}: invalid task: {e}") from None
                version = data.get("format_version", 1) if isinstance(data, dict) else None
                if version != TASK_FORMAT:
                    raise ValueError(
                        f"{p}:{n}: task format {version} is not supported (this version reads format "
                        f"{TASK_FORMAT}: grounded turns, guard checks, hash version {HASH_VERSION}); regenerate the set with "
                        "`compoworld tasks generate`"
                    )
                if "initial_state_patch" in data and "initial_state" not in data:
                    try:
                        data["initial_state"] = rebuild(data, f"{p}:{n}")
                    except (KeyError, TypeError, AttributeError) as e:
                        raise ValueError(
                            f"{p}:{n}: invalid task: field initial_state_patch: {type(e).__name__}: {e}"
                        ) from None
                out.append(Task.model_validate(data))
            except orjson.JSONDecodeError as e:
                raise ValueError(f"{p}:{n}: not valid JSON ({e})") from None
            except ValidationError as e:
                first = e.errors(include_url=False)[0]
                raise ValueError(
                    f"{p}:{n}: invalid task: field {'.'.join(map(str, first['loc']))}: {first['msg']}"
                ) from None
    if not out and not allow_empty:
        raise ValueError(f"{p} holds no tasks (it is empty): `compoworld tasks generate` writes some")
    return out


def export_parquet(tasks: list[Task], path: str | Path) -> None:
    """Parquet export (columns of plain types; nested fields as JSON text). Needs pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeError("Parquet export needs pyarrow: pip install 'compoworld[parquet]'") from None
    rows: dict[str, list[Any]] = {k: [] for k in Task.model_fields}
    for t in tasks:
        d = t.model_dump(mode="json")
        for k in rows:
            v = d[k]
            rows[k].append(
                orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode() if isinstance(v, dict | list) else v
            )
    pq.write_table(pa.table(rows), str(path))
