"""World folders and packs: content digests, portable references, and lived states.

A world is a folder (or one `.cwworld` file packed from it, a zip) holding `world.json` and, per
persona, `persona.json` and one `dayNNN.json` per day (the day's patch on the day before). The
manifest in `world.json` lists every file's digest; the world's digest is the digest of that list
with the build's seed, days and size, so it names the content and not the place: a moved, renamed,
packed or unpacked world keeps it, and changing any byte of any file changes it (or is caught when
the file is read). Wall-clock build times live in `world.json` too, outside what the digest covers.

A task refers to its world by `{"name", "digest", "persona", "day"}`. `locate` finds it beside the
task file (`NAME/` or `NAME.cwworld`), in the folders of `COMPOWORLD_WORLDS`, or among the worlds
already opened by this process, and refuses any other world in one line naming both digests.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from compoworld.core.environment import seeded_world
from compoworld.core.library import active
from compoworld.core.state import hash_value
from compoworld.worlds.persona import Persona

PACK = ".cwworld"
ENV_PATH = "COMPOWORLD_WORLDS"
_OPEN: dict[str, World] = {}  # digest -> a world this process opened (a cache, never the truth)


def file_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def content_digest(meta: dict[str, Any]) -> str:
    return hash_value(
        {
            "format": meta.get("format"),
            "seed": meta.get("seed"),
            "days": meta.get("days"),
            "size": meta.get("size"),
            "files": meta.get("files", {}),
        }
    )


def write_manifest(out: Path, summary: dict[str, Any]) -> str:
    """List the world's files (each kept persona's, nothing else the folder may hold) with their
    digests and write `world.json`; the digest."""
    files = {}
    for p in summary["personas"]:
        for rel in [
            f"{p['id']}/persona.json",
            *(f"{p['id']}/day{d:03d}.json" for d in range(1, summary["days"] + 1)),
        ]:
            files[rel] = file_digest((out / rel).read_bytes())
    summary["files"] = files
    summary["digest"] = content_digest(summary)
    (out / "world.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    return summary["digest"]


class World:
    """An opened world: reads (and checks) its files from a folder or a pack."""

    def __init__(self, where: Path, read: Callable[[str], bytes]) -> None:
        self.where = where
        self._read = read
        try:
            self.meta: dict[str, Any] = json.loads(read("world.json"))
        except (KeyError, FileNotFoundError):
            raise ValueError(f"{where}: no world.json (build one with `compoworld worlds build`)") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: world.json is not valid JSON ({e})") from None
        if self.meta.get("format") != 2 or "digest" not in self.meta:
            raise ValueError(
                f"{where}: world format {self.meta.get('format')} is not supported (this version reads format 2); "
                "rebuild it with `compoworld worlds build`"
            )
        if content_digest(self.meta) != self.meta["digest"]:
            raise ValueError(
                f"{where}: world.json's file list does not match its digest {self.meta['digest']} (tampered?)"
            )
        self._states: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()

    @property
    def digest(self) -> str:
        return self.meta["digest"]

    @property
    def name(self) -> str:
        return self.meta.get("name") or self.where.name.removesuffix(PACK)

    @property
    def size(self) -> str:
        return self.meta.get("size", "small")

    @property
    def days(self) -> int:
        return self.meta["days"]

    def read(self, rel: str) -> bytes:
        want = self.meta["files"].get(rel)
        if want is None:
            raise ValueError(f"world {self.name} (digest {self.digest}): it has no file {rel}")
        data = self._read(rel)
        if file_digest(data) != want:
            raise ValueError(
                f"world {self.name} at {self.where}: {rel} does not match the digest its manifest lists "
                f"(tampered?); world digest {self.digest}"
            )
        return data

    def verify(self) -> list[str]:
        """Every file against the manifest (what `worlds check` and `worlds pack` read)."""
        bad = []
        for rel in self.meta["files"]:
            try:
                self.read(rel)
            except (ValueError, KeyError, FileNotFoundError) as e:
                bad.append(str(e))
        return bad

    def persona(self, pid: str) -> Persona:
        return Persona(**json.loads(self.read(f"{pid}/persona.json")))

    def day(self, pid: str, day: int) -> dict[str, Any]:
        return orjson.loads(self.read(f"{pid}/day{day:03d}.json"))

    def state(self, pid: str, day: int) -> dict[str, Any]:
        """W(persona, day): the persona's services after `day` (day 0: as seeded). Cached (a few)."""
        key = (pid, day)
        hit = self._states.get(key)
        if hit is not None:
            self._states.move_to_end(key)
            return hit
        if not 0 <= day <= self.days:
            raise ValueError(f"world {self.name}: no day {day} (it has days 1..{self.days})")
        p = self.persona(pid)
        from compoworld.services import registry

        missing = [x for x in p.services if x not in registry()]
        if missing:
            raise ValueError(
                f"world {self.name} (digest {self.digest}): persona {pid} uses compiled services "
                f"{', '.join(missing)}; load the manifests it was built with (COMPOWORLD_MANIFESTS or --manifests)"
            )
        base = _seeded(tuple(p.services), p.world_seed, self.size)
        services = {n: dict(t) for n, t in base["services"].items()}
        copied: set[tuple[str, str]] = set()
        clock = base["clock"]
        start = 0
        for (q, d), st in reversed(self._states.items()):  # continue from an earlier day we hold
            if q == pid and d < day:
                services = {n: dict(t) for n, t in st["services"].items()}
                clock, start = st["clock"], d
                break
        for d in range(start + 1, day + 1):
            rec = self.day(pid, d)
            clock = rec["clock"]
            for name, tables in rec["patch"].items():
                svc = services[name]
                for table, entry in tables.items():
                    if (name, table) not in copied:
                        svc[table] = dict(svc.get(table) or {})
                        copied.add((name, table))
                    t = svc[table]
                    t.update(entry.get("set", {}))
                    for k in entry.get("del", ()):
                        t.pop(k, None)
        out = {"clock": clock, "services": services}
        self._states[key] = out
        while len(self._states) > 3:
            self._states.popitem(last=False)
        return out


@lru_cache(maxsize=64)
def _seeded(services: tuple[str, ...], world_seed: int, size: str) -> dict[str, Any]:
    from compoworld.core.environment import Environment

    return Environment(services=list(services), seed=world_seed, size=size).snapshot()


def open_world(path: str | Path) -> World:
    """A world folder or pack (`.cwworld`); its manifest checked against its digest."""
    p = Path(path)
    if p.is_dir():
        w = World(p, lambda rel: (p / rel).read_bytes())
    elif p.is_file():
        try:
            z = zipfile.ZipFile(p)
        except zipfile.BadZipFile:
            raise ValueError(f"{p}: not a world pack (made by `compoworld worlds pack`)") from None
        w = World(p, z.read)
    else:
        raise ValueError(f"{p}: no such world folder or pack")
    _OPEN.setdefault(w.digest, w)
    return w


def pack(folder: str | Path, dest: str | Path) -> tuple[str, int]:
    """Pack a world folder into one file (every file checked first); its digest and size in bytes."""
    w = open_world(folder)
    bad = w.verify()
    if bad:
        raise ValueError(bad[0])
    dest = Path(dest)
    tmp = dest.with_name(dest.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        z.writestr("world.json", w._read("world.json"))
        for rel in w.meta["files"]:
            z.writestr(rel, w._read(rel))
    tmp.replace(dest)
    return w.digest, dest.stat().st_size


def unpack(src: str | Path, dest: str | Path) -> str:
    """Unpack a world pack into a folder (every file checked); its digest."""
    w = open_world(src)
    bad = w.verify()
    if bad:
        raise ValueError(bad[0])
    dest = Path(dest)
    for rel in ["world.json", *w.meta["files"]]:
        f = dest / rel
        if not f.resolve().is_relative_to(dest.resolve()):
            raise ValueError(f"{src}: member {rel} would land outside {dest}")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(w._read(rel))
    return w.digest


def world_ref(path: str | Path) -> dict[str, str]:
    w = open_world(path)
    return {"name": w.name, "digest": w.digest}


def locate(name: str, digest: str, near: Path | None = None) -> World:
    """The world a task names, by digest: beside the task file, in COMPOWORLD_WORLDS, or opened already."""
    hit = _OPEN.get(digest)
    if hit is not None:
        return hit
    roots = [near] if near is not None else []
    roots += [Path(x) for x in os.environ.get(ENV_PATH, "").split(os.pathsep) if x]
    found: list[tuple[Path, str]] = []
    for root in roots:
        for cand in (root / name, root / (name + PACK)):
            if cand.exists():
                try:
                    w = open_world(cand)
                except ValueError as e:
                    found.append((cand, str(e)))
                    continue
                if w.digest == digest:
                    return w
                found.append((cand, f"digest {w.digest}"))
    if found:
        where, what = found[0]
        raise ValueError(
            f"world {name}: the task needs digest {digest}, but {where} is a different world ({what})"
        )
    looked = ", ".join(str(r) for r in roots) or "nowhere"
    raise ValueError(
        f"world {name} (digest {digest}) not found: looked for {name}/ and {name}{PACK} in {looked}; "
        f"put it beside the task file or name its folder in {ENV_PATH}"
    )


def known(digest: str) -> World | None:
    return _OPEN.get(digest)


_LIVED: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_PARTS: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()


def persona_world(folder: str, persona: str, day: int, size: str) -> dict[str, Any]:
    """Every library service seeded for the persona's company, with the persona's own services as
    they stood after `day` (so the persona's days are the task's history)."""
    idx = world_index(folder)
    ref = idx["ref"]
    return lived_world(ref["name"], ref["digest"], persona, day, idx["personas"][persona]["world_seed"], size)


def lived_world(
    name: str, digest: str, persona: str, day: int, seed: int, size: str, near: Path | None = None
) -> dict[str, Any]:
    """A task's base state in a persona world (what the generator plants on): every library
    service seeded for the persona's company, with the persona's own services as `day` left them."""
    key = (digest, persona, day, seed, size)
    hit = _LIVED.get(key)
    if hit is not None:
        _LIVED.move_to_end(key)
        return hit
    w = locate(name, digest, near)
    lived = w.state(persona, day)
    base = seeded_world(active(), seed, size)  # the seeded library, shared with tasks (base_world)
    out = {"clock": lived["clock"], "services": {**base["services"], **lived["services"]}}
    _LIVED[key] = out
    while len(_LIVED) > 3:
        _LIVED.popitem(last=False)
    return out


def lived_services(
    name: str,
    digest: str,
    persona: str,
    day: int,
    seed: int,
    size: str,
    services: list[str],
    near: Path | None = None,
) -> dict[str, Any]:
    """The same base as `lived_world`, for `services` only, each service's tables in sorted key
    order (as a task file's full s0 loads) and cached on its own: a task pays for the services it
    uses, and tasks of one persona day share them (the persona's services are seeded and patched
    once; the others are seeded one service at a time, not the whole library)."""
    out: dict[str, Any] = {}
    w: World | None = None
    for svc in services:
        key = (digest, persona, day, seed, size, svc)
        part = _PARTS.get(key)
        if part is None:
            w = w or locate(name, digest, near)
            mine = w.persona(persona).services
            if svc in mine:
                raw = w.state(persona, day)["services"][svc]
            else:
                from compoworld.services import registry

                if svc not in registry():
                    continue  # a service this library lacks: the caller names it
                raw = _seeded((svc,), seed, size)["services"][svc]
            part = _PARTS[key] = orjson.loads(orjson.dumps(raw, option=orjson.OPT_SORT_KEYS))
            while len(_PARTS) > 96:
                _PARTS.popitem(last=False)
        else:
            _PARTS.move_to_end(key)
        out[svc] = part
    return {"clock": None, "services": out}


# ---- what the task generator asks of a world (`tasks generate --world DIR[@DAY]`) ---------------
def split_spec(spec: str) -> tuple[str, int | None]:
    """`DIR` or `DIR@DAY` (tasks only from that day)."""
    path, sep, day = spec.rpartition("@")
    if sep and day.isdigit() and path:
        return path, int(day)
    return spec, None


@lru_cache(maxsize=8)
def world_index(spec: str) -> dict[str, Any]:
    """The personas of a world, the days tasks may start from, its size and its reference."""
    path, only = split_spec(spec)
    w = open_world(path)
    people = {p["id"]: w.persona(p["id"]).to_dict() for p in w.meta["personas"]}
    if not people:
        raise ValueError(f"{path}: the world has no personas")
    if only is not None and not 1 <= only <= w.days:
        raise ValueError(f"{spec}: the world has days 1..{w.days}, not {only}")
    return {
        "days": w.days,
        "day_choices": [only] if only is not None else list(range(1, w.days + 1)),
        "personas": people,
        "size": w.size,
        "ref": {"name": w.name, "digest": w.digest},
        "label": w.name + (f"@{only}" if only is not None else ""),
    }


def spec_for(meta_world: dict[str, Any], label: str) -> str:
    """The `--world` spec that regenerates a task: the world it names (by digest, as opened by this
    process when its file loaded) with the recorded day restriction."""
    w = known(meta_world.get("digest", ""))
    if w is None:
        raise ValueError(
            f"world {meta_world.get('name')} (digest {meta_world.get('digest')}) is not open: load the task file first"
        )
    _, only = split_spec(label)
    return str(w.where) + (f"@{only}" if only is not None else "")
