"""The task model. A task is pure data: loading one runs nothing (no code, no eval, no imports)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compoworld.core.state import hash_value

TASK_FORMAT = 2  # 2: grounded turns with sources, goal/guard checks, traps, record-level collateral


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
    format_version: int = TASK_FORMAT

    @property
    def all_services(self) -> list[str]:
        return [*self.services, *self.distractors]

    def environment(self):
        """A fresh environment in this task's initial state."""
        from compoworld.core.environment import Environment

        return Environment.from_snapshot(self.all_services, self.initial_state)

    def to_json(self) -> bytes:
        return orjson.dumps(self.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)


def state_hash_of(snapshot: dict[str, Any]) -> str:
    return hash_value(snapshot)


def save_tasks(tasks: list[Task], path: str | Path) -> None:
    """Write tasks as JSONL, one task a line; written to a temporary file then renamed (never half-written)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    with _open(tmp, "wb", gz=p.suffix == ".gz") as f:
        for t in tasks:
            f.write(t.to_json() + b"\n")
    tmp.replace(p)


def _open(p: Path, mode: str, gz: bool | None = None):
    """Plain or gzip file (by suffix): task files are large, and compress ~10x."""
    if gz if gz is not None else p.suffix == ".gz":
        return gzip.open(p, mode, compresslevel=6)
    return p.open(mode)


def load_tasks(path: str | Path) -> list[Task]:
    """Read a JSONL task file; an invalid line raises ValueError naming the file, the line and the field."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such task file")
    out = []
    with _open(p, "rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
                version = data.get("format_version", 1) if isinstance(data, dict) else None
                if version != TASK_FORMAT:
                    raise ValueError(
                        f"{p}:{n}: task format {version} is not supported (this version reads format "
                        f"{TASK_FORMAT}: grounded turns and guard checks); regenerate the set with "
                        "`compoworld tasks generate`"
                    )
                out.append(Task.model_validate(data))
            except orjson.JSONDecodeError as e:
                raise ValueError(f"{p}:{n}: not valid JSON ({e})") from None
            except ValidationError as e:
                first = e.errors(include_url=False)[0]
                raise ValueError(
                    f"{p}:{n}: invalid task: field {'.'.join(map(str, first['loc']))}: {first['msg']}"
                ) from None
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
