"""What the viewer reads: task files and run directories, indexed by byte offset.

A task file or an `episodes.jsonl` is read once, line by line, into small summary rows and the byte
offset of each line; a page then reads only the lines it shows (a seek and one parse each). A run
that is still being written is indexed incrementally: only bytes past the last whole line are read.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from compoworld.agents.loop import ENDPOINT_FAILURES
from compoworld.rollout.metrics import pass_at_k, pass_hat_k
from compoworld.tasks.curriculum import tier_of
from compoworld.tasks.generator import interface_of
from compoworld.tasks.model import Task, _Rebuilder, unpack_line

# failure classes, read from the verdicts and the episode's error class (first match wins)
PASSED = "passed"
FAILURE_CLASSES = (
    "endpoint error",  # the endpoint failed or timed out: the model never finished
    "environment error",  # a tool answered 500: a bug on our side, kept apart from the agent's
    "format failure",  # turns without a usable tool call
    "guard tripped",  # a trap was acted on, or something else changed
    "missed goal",  # the work asked for is not (all) there
    "limit reached",  # out of turns or tokens with every check passing but not finished
)


def failure_class(error_class: str | None, checks: list[dict[str, Any]], passed: bool) -> str:
    if error_class in ENDPOINT_FAILURES or error_class == "context_overflow":
        return "endpoint error"
    if error_class == "server_error":
        return "environment error"
    if error_class == "agent_format":
        return "format failure"
    if passed:
        return PASSED
    if any(not c.get("passed") and c.get("kind") == "guard" for c in checks):
        return "guard tripped"
    if any(not c.get("passed") for c in checks):
        return "missed goal"
    return "limit reached"


def difficulty_of(meta: dict[str, Any]) -> str:
    """The tier the generator recorded; else one derived from the work it planted (calls, decisions)."""
    return tier_of(meta)


def _open_bytes(path: Path) -> bytes | None:
    """A gzip file's whole text (it cannot be seeked by line); None for a plain file (read by offset)."""
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            return f.read()
    return None


@dataclass
class TaskRow:
    id: str
    instruction: str
    family: str
    domain: str
    domains: list[str]
    K: int | None
    L: int | None
    D: int | None
    difficulty: str
    services: list[str]
    distractors: list[str]
    interfaces: list[str]
    checks: int
    guards: int
    calls: int
    answer: bool
    offset: int
    length: int

    def as_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d.pop("offset")
        d.pop("length")
        return d


def task_row(data: dict[str, Any], offset: int, length: int) -> TaskRow:
    meta = data.get("meta") or {}
    services = list(data.get("services") or [])
    walk = list(data.get("walk") or services)
    rubric = data.get("rubric") or []
    return TaskRow(
        id=str(data["id"]),
        instruction=str(data.get("instruction", "")),
        family=str(meta.get("family") or meta.get("generator") or "unknown"),
        domain=str(meta.get("work_domain") or ",".join(meta.get("domains") or []) or "unknown"),
        domains=list(meta.get("domains") or []),
        K=meta.get("K"),
        L=meta.get("L"),
        D=meta.get("D"),
        difficulty=difficulty_of(meta),
        services=services,
        distractors=list(data.get("distractors") or []),
        interfaces=sorted(set(meta.get("interface_walk") or [interface_of(s) for s in walk])),
        checks=len(rubric),
        guards=sum(1 for r in rubric if r.get("kind") == "guard"),
        calls=len(data.get("reference_solution") or []),
        answer=bool(data.get("answer")),
        offset=offset,
        length=length,
    )


class TaskCatalog:
    """The tasks of one file: summary rows in memory, whole tasks read (and s0 rebuilt) on demand."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such task file")
        self._buf = _open_bytes(self.path)
        self.rows: list[TaskRow] = []
        self.by_id: dict[str, TaskRow] = {}
        self._rebuild = _Rebuilder()
        self._cache: OrderedDict[str, Task] = OrderedDict()
        self._lock = threading.Lock()
        data = self._buf if self._buf is not None else self.path.read_bytes()
        pos = 0
        for n, line in enumerate(data.splitlines(keepends=True), 1):
            if line.strip():
                try:
                    d = unpack_line(orjson.loads(line))
                    row = task_row(d, pos, len(line))
                except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as e:
                    raise ValueError(f"{self.path}:{n}: not a task line ({type(e).__name__}: {e})") from None
                if row.id not in self.by_id:
                    self.rows.append(row)
                    self.by_id[row.id] = row
            pos += len(line)

    def _line(self, row: TaskRow) -> bytes:
        if self._buf is not None:
            return self._buf[row.offset : row.offset + row.length]
        with self.path.open("rb") as f:
            f.seek(row.offset)
            return f.read(row.length)

    def raw(self, task_id: str) -> dict[str, Any] | None:
        row = self.by_id.get(task_id)
        return None if row is None else unpack_line(orjson.loads(self._line(row)))

    def task(self, task_id: str) -> Task | None:
        """The whole task (s0 rebuilt from its base world), cached for the last few pages."""
        with self._lock:
            if task_id in self._cache:
                self._cache.move_to_end(task_id)
                return self._cache[task_id]
            data = self.raw(task_id)
            if data is None:
                return None
            if "initial_state_patch" in data and "initial_state" not in data:
                data["initial_state"] = self._rebuild(data, f"{self.path}:{task_id}")
            task = Task.model_validate(data)
            self._cache[task_id] = task
            while len(self._cache) > 32:
                self._cache.popitem(last=False)
            return task


@dataclass
class EpisodeRow:
    index: int  # position among the run's finished episodes (and pending endpoint failures)
    task_id: str
    sample: int
    V: int
    score: float
    error_class: str
    outcome: str  # passed, or the failure class
    failed: list[str]  # ids of failed checks
    turns: int
    calls: int
    K: int | None
    L: int | None
    services: list[str]
    domains: list[str]
    file: str  # episodes or failures
    offset: int
    length: int

    def as_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        for k in ("offset", "length", "file"):
            d.pop(k)
        return d


def episode_row(e: dict[str, Any], index: int, file: str, offset: int, length: int) -> EpisodeRow:
    checks = e.get("checks") or []
    V = int(e.get("V") or 0)
    return EpisodeRow(
        index=index,
        task_id=str(e["task_id"]),
        sample=int(e.get("sample") or 0),
        V=V,
        score=float(e.get("score") or 0.0),
        error_class=str(e.get("error_class") or "ok"),
        outcome=failure_class(e.get("error_class"), checks, bool(V)),
        failed=[str(c.get("id")) for c in checks if not c.get("passed")],
        turns=int(e.get("turns") or 0),
        calls=len(e.get("steps") or []),
        K=e.get("K"),
        L=e.get("L"),
        services=list(e.get("services") or []),
        domains=list(e.get("domains") or []),
        file=file,
        offset=offset,
        length=length,
    )


@dataclass
class _Tail:
    """How far a JSONL file has been indexed (a growing run: only new whole lines are read)."""

    path: Path
    indexed: int = 0


class RunIndex:
    """One run directory: its config, and a row per finished episode (a later record of the same
    (task, sample) never replaces the first, as the runner's `finished` reads it); endpoint failures
    that no later episode finished are rows too, classed "endpoint error"."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = Path(path)
        cfg = self.path / "config.json"
        if not cfg.is_file():
            raise FileNotFoundError(f"{self.path} is not a run directory (no config.json)")
        try:
            self.config: dict[str, Any] = orjson.loads(cfg.read_bytes())
        except orjson.JSONDecodeError as e:
            raise ValueError(f"{cfg}: not valid JSON ({e})") from None
        self.name = name or self.path.name
        self.k = int(self.config.get("k") or 1)
        self.rows: list[EpisodeRow] = []
        self._by_key: dict[tuple[str, int], int] = {}
        self._pending: dict[tuple[str, int], EpisodeRow] = {}
        self._tails = {
            "episodes": _Tail(self.path / "episodes.jsonl"),
            "failures": _Tail(self.path / "failures.jsonl"),
        }
        self._lock = threading.Lock()
        self._version = 0
        self._cached: dict[str, Any] = {}
        self.refresh()

    def refresh(self) -> None:
        """Index what was appended since the last call (cheap when nothing was)."""
        with self._lock:
            grew = False
            for file, tail in self._tails.items():
                if not tail.path.exists() or tail.path.stat().st_size <= tail.indexed:
                    continue
                with tail.path.open("rb") as f:
                    f.seek(tail.indexed)
                    data = f.read()
                end = data.rfind(b"\n") + 1  # a torn last line waits for its end
                pos = tail.indexed
                for line in data[:end].splitlines(keepends=True):
                    self._add(file, line, pos)
                    pos += len(line)
                tail.indexed += end
                grew = grew or end > 0
            if grew:
                self._version += 1
                self._cached.clear()

    def _add(self, file: str, line: bytes, pos: int) -> None:
        try:
            e = orjson.loads(line)
            key = (str(e["task_id"]), int(e.get("sample") or 0))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return  # a torn line of a killed run
        if key in self._by_key:
            return
        if e.get("error_class") in ENDPOINT_FAILURES:  # not finished: shown until a rerun finishes it
            self._pending[key] = episode_row(e, -1, file, pos, len(line))
            return
        row = episode_row(e, len(self.rows), file, pos, len(line))
        self._by_key[key] = row.index
        self.rows.append(row)
        self._pending.pop(key, None)

    def all_rows(self) -> list[EpisodeRow]:
        """Finished episodes, then the endpoint failures still pending (indexed after them)."""
        if "all" not in self._cached:
            pending = []
            for i, r in enumerate(self._pending.values()):
                pending.append(EpisodeRow(**{**r.__dict__, "index": len(self.rows) + i}))
            self._cached["all"] = [*self.rows, *pending]
        return self._cached["all"]

    def find(self, task_id: str, sample: int) -> EpisodeRow | None:
        i = self._by_key.get((task_id, sample))
        if i is not None:
            return self.rows[i]
        return next(
            (r for r in self.all_rows() if r.task_id == task_id and r.sample == sample),
            None,
        )

    def episode(self, row: EpisodeRow) -> dict[str, Any]:
        """The whole record of one row: one seek and one parse."""
        with self._tails[row.file].path.open("rb") as f:
            f.seek(row.offset)
            return orjson.loads(f.read(row.length))

    def by_task(self) -> dict[str, list[EpisodeRow]]:
        if "by_task" not in self._cached:
            out: dict[str, list[EpisodeRow]] = defaultdict(list)
            for r in self.rows:
                out[r.task_id].append(r)
            self._cached["by_task"] = dict(out)
        return self._cached["by_task"]

    def outcome_of(self, task_id: str) -> str:
        """pass (every sample passed), fail (none did), mixed, or unrun."""
        eps = self.by_task().get(task_id)
        if not eps:
            return "unrun"
        c = sum(r.V for r in eps)
        return "pass" if c == len(eps) else "fail" if c == 0 else "mixed"


@dataclass
class Group:
    """pass@k and pass^k of a set of tasks (each with its n samples, c passing)."""

    tasks: int = 0
    episodes: int = 0
    passes: int = 0
    metrics: dict[str, float] = field(default_factory=dict)


def task_dims(row: TaskRow | None, eps: list[EpisodeRow]) -> dict[str, list[str]]:
    """The values a task takes on each breakdown (a task crossing two interfaces counts in both)."""
    e = eps[0]
    return {
        "family": [row.family if row else "unknown"],
        "K": [str(row.K if row and row.K is not None else e.K)],
        "difficulty": [row.difficulty if row else "unknown"],
        "interface": (row.interfaces if row else sorted({interface_of(s) for s in e.services})) or ["mcp"],
        "domain": [row.domain if row else ",".join(e.domains) or "unknown"],
    }


DIMENSIONS = ("family", "K", "difficulty", "interface", "domain")


def run_metrics(run: RunIndex, tasks: TaskCatalog | None) -> dict[str, Any]:
    """Overall and per-breakdown pass@k / pass^k (k = 1 and the run's k), episode outcomes by class."""
    key = "metrics"
    if key in run._cached:
        return run._cached[key]
    ks = sorted({1, run.k})
    names = [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks if k > 1]
    overall: dict[str, list[tuple[int, int]]] = {"all": []}
    by: dict[str, dict[str, list[tuple[int, int]]]] = {d: defaultdict(list) for d in DIMENSIONS}
    for task_id, eps in run.by_task().items():
        nc = (len(eps), sum(r.V for r in eps))
        overall["all"].append(nc)
        row = tasks.by_id.get(task_id) if tasks else None
        for dim, values in task_dims(row, eps).items():
            for v in values:
                by[dim][v].append(nc)

    def group(ncs: list[tuple[int, int]]) -> dict[str, Any]:
        out: dict[str, Any] = {"tasks": len(ncs), "episodes": sum(n for n, _ in ncs)}
        out["passes"] = sum(c for _, c in ncs)
        for k in ks:
            usable = [(n, c) for n, c in ncs if n >= k]
            out[f"pass@{k}"] = _mean(pass_at_k(n, c, k) for n, c in usable)
            if k > 1:
                out[f"pass^{k}"] = _mean(pass_hat_k(n, c, k) for n, c in usable)
        return out

    outcomes: dict[str, int] = dict.fromkeys((PASSED, *FAILURE_CLASSES), 0)
    for r in run.all_rows():
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    result = {
        "metrics": names,
        "overall": group(overall["all"]),
        "by": {
            d: {v: group(ncs) for v, ncs in sorted(g.items(), key=lambda kv: _order(kv[0]))}
            for d, g in by.items()
        },
        "outcomes": outcomes,
    }
    run._cached[key] = result
    return result


def _order(v: str) -> tuple[bool, float, str]:
    num = v.lstrip("-").replace(".", "", 1).isdigit()
    tiers = {"easy": 0, "medium": 1, "hard": 2}
    if v in tiers:
        return (False, float(tiers[v]), v)
    return (not num, float(v) if num else 0.0, v)


def _mean(xs) -> float:
    xs = list(xs)
    return round(sum(xs) / len(xs), 4) if xs else 0.0


def resolve_tasks_file(run: RunIndex) -> Path | None:
    """The task file a run was made from: as written in its config, or beside the run, if its
    bytes still hash to the config's `tasks_sha` (a task file regenerated since is not used)."""
    from compoworld.rollout.runner import file_sha

    name = run.config.get("tasks_file")
    if not name:
        return None
    p = Path(name)
    for cand in (
        [p] if p.is_absolute() else [p, run.path.parent / p, run.path / p.name, run.path.parent / p.name]
    ):
        if cand.is_file():
            sha = run.config.get("tasks_sha")
            if not sha or file_sha(cand) == sha:
                return cand.resolve()
    return None
