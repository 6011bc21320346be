"""The `Service` base class: typed state in a `Store`, tools marked with `@tool`, atomic calls."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from compoworld.core import limits
from compoworld.core.clock import IdFactory, SimClock, derive_rng
from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, ToolError, failure
from compoworld.core.state import META, Store, diff_tables
from compoworld.core.tool import ToolSpec, compile_tool, tool_meta

if TYPE_CHECKING:
    from compoworld.core.company import Company

Size = Literal["small", "default", "large"]
SIZES: tuple[str, ...] = ("small", "default", "large")


@dataclass(frozen=True)
class SeedContext:
    """What a service's seed function may draw from: the shared company, a private rng, the size."""

    company: Company
    rng: random.Random
    size: str
    clock: SimClock

    def scale(self, small: int, default: int, large: int) -> int:
        return {"small": small, "default": default, "large": large}[self.size]


class Service:
    """Base class of every service.

    Subclasses set `name`, `domain`, `state_model` (a pydantic model whose fields are the tables,
    each ``dict[str, Record]``) and define tools with `@tool`. Tools read and write only through
    the helpers below, which journal every write so that a failed call changes nothing.
    """

    name: ClassVar[str] = ""
    domain: ClassVar[str] = ""
    spec: ClassVar[str | None] = None  # the file in shared/mcp-specs this service models
    state_model: ClassVar[type[BaseModel] | None] = None
    tool_specs: ClassVar[dict[str, ToolSpec]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        specs: dict[str, ToolSpec] = {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                meta = tool_meta(fn)
                if meta is not None:
                    spec = compile_tool(cls, attr, fn, meta)
                    specs[spec.name] = spec
        cls.tool_specs = specs
        if cls.state_model is None:  # derive the typed state from the declared resources
            from compoworld.core.resource import Resource

            fields = {
                r.table: (dict[str, r.model], {})
                for klass in reversed(cls.__mro__)
                for r in vars(klass).values()
                if isinstance(r, Resource)
            }
            if fields:
                cls.state_model = create_model(  # type: ignore[call-overload]
                    f"{cls.__name__}State", __config__=ConfigDict(extra="forbid"), **fields
                )

    def __init__(self, *, seed: int, clock: SimClock) -> None:
        self.store = Store()
        self.seed = seed
        self.clock = clock
        for table in self.state_model.model_fields if self.state_model else ():
            self.store.tables[table] = {}  # every table exists from the start: reads never create one

    @classmethod
    def summary(cls) -> str:
        doc = (cls.__doc__ or "").strip().splitlines()
        return doc[0].strip() if doc else cls.name

    # Interfaces over other services (the browser) act through the environment's tools; a plain
    # service never sees the environment.
    acts_on_others: ClassVar[bool] = False
    ephemeral_tables: ClassVar[frozenset[str]] = frozenset()  # UI state (a browser tab): not a write

    def bind(self, env: Any) -> None:
        """Called once the environment is assembled (after seeding)."""

    # ---- seeding ------------------------------------------------------------------------
    def seed_data(self, ctx: SeedContext) -> None:
        """Fill the initial state from the shared company. Override in each service."""

    # ---- reads --------------------------------------------------------------------------
    def table(self, name: str) -> dict[str, Any]:
        """The live table (read it; write through `insert` / `update` / `remove`)."""
        t = self.store.tables.get(name)
        return {} if t is None else t

    def get(self, table: str, key: str) -> Any:
        return self.store.tables.get(table, {}).get(key)

    def require(self, table: str, key: Any, what: str | None = None) -> dict[str, Any]:
        """The record, or a 404 that names what was looked for."""
        rec = self.store.tables.get(table, {}).get(key) if isinstance(key, str) else None
        if rec is None:
            label = what or table.rstrip("s")
            raise NotFound(f"{label} '{key}' not found", type=f"{label.replace(' ', '_')}_not_found")
        return rec

    # ---- writes -------------------------------------------------------------------------
    def insert(self, table: str, record: dict[str, Any], key: str = "id") -> dict[str, Any]:
        """Add a new record; an existing key is a conflict, never a silent overwrite."""
        k = record[key]
        if k in self.table(table):
            raise Conflict(f"{table.rstrip('s')} '{k}' already exists", type="already_exists")
        self.store.put(table, k, record)
        return record

    def update(self, table: str, key: str, **changes: Any) -> dict[str, Any]:
        """Replace the record with a changed copy (records are values, never edited in place)."""
        new = {**self.require(table, key), **changes}
        self.store.put(table, key, new)
        return new

    def remove(self, table: str, key: str) -> dict[str, Any]:
        self.require(table, key)
        return self.store.delete(table, key)

    @property
    def ids(self) -> IdFactory:
        """Ids are salted with the seed recorded in state, so an environment rebuilt from a snapshot
        mints exactly the ids the original would have."""
        return IdFactory(self.store.tables[META].get("seed", self.seed), self.name)

    def next_id(self, prefix: str, width: int = 12, alphabet: str = "hex") -> str:
        """A fresh deterministic id; its counter lives in state, so restores replay the same ids."""
        counter = f"id:{prefix}"
        n = self.store.tables[META].get(counter, 0) + 1
        self.store.put(META, counter, n)
        return self.ids.make(prefix, n, width, alphabet)

    def next_seq(self, name: str) -> int:
        n = self.store.tables[META].get(name, 0) + 1
        self.store.put(META, name, n)
        return n

    def rng(self, *parts: Any) -> random.Random:
        """Randomness for a tool: derived from the seed, the service and the call's own parts."""
        return derive_rng(
            self.store.tables[META].get("seed", self.seed), self.name, self.next_seq("seq:rng"), *parts
        )

    # ---- calls --------------------------------------------------------------------------
    def invoke(self, spec: ToolSpec, arguments: Any) -> dict[str, Any]:
        """Validate, run and commit one call; any failure rolls back and becomes an envelope."""
        try:
            arguments, bad = decode_arguments(spec.name, arguments)
            if bad is not None:
                return bad
            try:
                kwargs = spec.validate(arguments)
            except ValidationError as e:
                return failure(400, "invalid_arguments", spec.explain(e))
        except RecursionError:  # nothing ran yet: arguments nested deeper than Python can walk
            return failure(400, "invalid_arguments", f"Arguments of {spec.name} are nested too deeply")
        store = self.store
        engine_before = None
        if spec.mutates:
            engine_before = limits.engine_size(self)
            for pname, v in kwargs.items():  # bulk writes are bounded by count, in every service
                if type(v) is list and len(v) > limits.MAX_BULK_ITEMS:
                    return failure(
                        422,
                        "resource_limit",
                        f"{spec.name}: '{pname}' lists {len(v)} items; one call writes at most "
                        f"{limits.MAX_BULK_ITEMS} (split it into several calls)",
                    )
        try:
            data = spec.fn(self, **kwargs)
            limits.settle(self, spec.name, engine_before)  # charge the budget; no limit past here
        except ToolError as e:
            store.rollback()
            return failure(e.code, e.type, e.message)
        except limits.CallLimitExceeded:  # the call's watchdog stopped it: undo, let the caller answer
            store.rollback()
            raise
        except Exception as e:  # a bug in the environment: keep it apart from agent errors
            store.rollback()
            return failure(500, "server_error", f"{spec.name} failed: {type(e).__name__}: {e}")
        store.commit()
        return {"success": True, "data": data}

    # ---- state --------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return self.store.snapshot()

    def restore(self, snap: dict[str, Any]) -> None:
        self.store.restore(snap)

    def state_hash(self) -> str:
        return self.store.state_hash()

    def diff(self, a: dict[str, Any], b: dict[str, Any]) -> list:
        return diff_tables(self.name, a, b)

    def inert(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether this call of `tool` changes no state, whatever the state holds (see
        `Environment.inert`). Only a service that can tell says yes."""
        return False

    def validate_state(self) -> None:
        """Raise `ValidationError` if the state does not fit `state_model` (the health check)."""
        if self.state_model is None:
            return
        tables = {k: v for k, v in self.store.tables.items() if k != META}
        self.state_model.model_validate(tables)


def decode_arguments(tool: str, arguments: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Arguments as a dict (None -> {}, JSON text parsed), or a 400 envelope saying why not."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, str | bytes):
        try:
            arguments = orjson.loads(arguments) if arguments.strip() else {}
        except orjson.JSONDecodeError as e:
            return {}, failure(400, "invalid_arguments", f"Arguments of {tool} are not valid JSON: {e}")
    if not isinstance(arguments, dict):
        return {}, failure(
            400,
            "invalid_arguments",
            f"Arguments of {tool} must be a JSON object, got {type(arguments).__name__}",
        )
    return arguments, None


def check_arg(condition: bool, message: str) -> None:
    """Raise a 400 naming the problem when a semantic argument check fails."""
    if not condition:
        raise InvalidArguments(message)
