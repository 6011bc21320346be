"""`Environment`: the product of any subset of services, with namespaced tools and global state ops."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from compoworld.core.clock import SimClock, derive_rng
from compoworld.core.company import Company, make_company
from compoworld.core.envelope import failure
from compoworld.core.library import Library, active
from compoworld.core.limits import Budget, CallLimits, limited_call
from compoworld.core.listing import (  # noqa: F401  (re-exported: the names callers import from here)
    MODES,
    NAME_RE,
    SEP,
    Format,
    Mode,
    check_name,
    full_name,
    tool_entry,
)
from compoworld.core.service import SIZES, SeedContext, Service
from compoworld.core.state import META, Change, combine, hash_value
from compoworld.core.tool import ToolSpec


class Environment:
    """A product environment composed of services.

    >>> env = Environment(services=["email", "chat"], seed=0)
    >>> env.call("chat__slack_user_list_channels", {"limit": 2})["success"]
    True

    Every call runs under `limits` (CPU time and memory per call; None: unbounded) and, when a
    `budget` is set, is charged to it (see `core/limits.py`).
    """

    limits: CallLimits | None = CallLimits()
    budget: Budget | None = None

    def __init__(
        self,
        services: Sequence[str | type[Service]],
        seed: int = 0,
        start_time: datetime | str | None = None,
        size: str = "default",
        library: Library | None = None,
    ) -> None:
        if size not in SIZES:
            raise ValueError(f"unknown size {size!r}: expected one of {', '.join(SIZES)}")
        if not services:
            raise ValueError("an environment needs at least one service")
        self.seed = int(seed)
        self.size = size
        self.clock = SimClock(start_time)
        self.company: Company = make_company(self.seed, size)
        self.services: dict[str, Service] = {}
        self._tools: dict[str, tuple[Service, ToolSpec]] = {}
        self.library = library if library is not None else active()
        for item in services:
            cls = self.library.service(item) if isinstance(item, str) else item
            if cls.name in self.services:
                raise ValueError(f"service {cls.name!r} listed twice")
            svc = cls(seed=self.seed, clock=self.clock)
            svc.store.put(META, "seed", self.seed)  # travels with snapshots: see Service.ids
            # Each service's data depends only on (seed, service): composing never changes it.
            ctx = SeedContext(self.company, derive_rng(self.seed, "seed", cls.name), size, self.clock)
            svc.seed_data(ctx)
            svc.store.commit()
            self.services[cls.name] = svc
            for tname, spec in cls.tool_specs.items():
                self._tools[check_name(cls.name, tname)] = (svc, spec)
        self._gateway = None
        for svc in self.services.values():
            svc.bind(self)
        self.initial = self.snapshot()

    @classmethod
    def from_snapshot(
        cls, services: Sequence[str], snapshot: dict[str, Any], library: Library | None = None
    ) -> Environment:
        """An environment in exactly `snapshot`'s state, without running any seeding (cheap)."""
        env = cls.__new__(cls)
        env.library = library if library is not None else active()
        env.seed = 0
        env.size = "snapshot"
        env.clock = SimClock(snapshot.get("clock"))
        env.company = None  # type: ignore[assignment]
        env.services = {}
        env._tools = {}
        for name in services:
            svc_cls = env.library.service(name)
            svc = svc_cls(seed=0, clock=env.clock)
            env.services[name] = svc
            for tname, spec in svc_cls.tool_specs.items():
                env._tools[check_name(name, tname)] = (svc, spec)
        env._gateway = None
        for svc in env.services.values():
            svc.bind(env)
        env.restore(snapshot)
        env.initial = env.snapshot()
        return env

    # ---- tools --------------------------------------------------------------------------
    @property
    def tool_names(self) -> list[str]:
        return list(self._tools)

    def tool_spec(self, name: str) -> ToolSpec | None:
        entry = self._tools.get(name)
        return entry[1] if entry else None

    def inert(self, name: str, arguments: Any) -> bool:
        """Whether this call changes no state whatever the state holds (its service says so: a shell
        line of reads only): a replay that keeps only the end state may leave it out."""
        entry = self._tools.get(name)
        return entry is not None and isinstance(arguments, dict) and entry[0].inert(entry[1].name, arguments)

    def isolated(self, name: str) -> bool:
        """Whether a call of this tool reads and changes its own service's state alone, so that its
        effect depends on that service's state only: every service but those bound to the others
        (the browser renders their pages and submits its forms to their tools): neither acting on
        the others (`Service.acts_on_others`) nor given the environment (`Service.bind`)."""
        entry = self._tools.get(name)
        if entry is None:
            return False
        cls = type(entry[0])
        return not cls.acts_on_others and cls.bind is Service.bind

    def tools(self, format: Format = "openai", mode: Mode = "direct") -> list[dict[str, Any]]:
        if mode in ("gateway", "gateway-compat"):
            return self.gateway_for(mode).tools(format)
        if mode != "direct":
            raise ValueError(f"unknown tool mode {mode!r}: expected one of {', '.join(MODES)}")
        return [tool_entry(name, spec, format) for name, (_, spec) in self._tools.items()]

    @property
    def gateway(self):
        if self._gateway is None:
            from compoworld.core.gateway import Gateway

            self._gateway = Gateway(self)
        return self._gateway

    def gateway_for(self, mode: str):
        """The meta-tools of a gateway mode: ours, or the published convention (`gateway-compat`)."""
        if mode != "gateway-compat":
            return self.gateway
        compat = getattr(self, "_compat", None)
        if compat is None:
            from compoworld.core.gateway import CompatGateway

            compat = self._compat = CompatGateway(self)
        return compat

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """Run one tool and return its envelope. Never raises for bad input."""
        entry = self._tools.get(name)
        if entry is None:
            if isinstance(name, str) and name in self.gateway.specs:
                return self.gateway.call(name, arguments)
            return failure(404, "unknown_tool", self._unknown_tool_message(name))
        if self.limits is None and self.budget is None:
            return entry[0].invoke(entry[1], arguments)
        return limited_call(self, entry[0], entry[1], arguments)

    def _unknown_tool_message(self, name: Any) -> str:
        if not isinstance(name, str):
            return f"Tool name must be a string, got {type(name).__name__}"
        svc = name.split(SEP, 1)[0]
        if svc in self.services:
            return f"Unknown tool '{name}'. Service '{svc}' has: " + ", ".join(
                full_name(svc, t) for t in self.services[svc].tool_specs
            )
        return f"Unknown tool '{name[:100]}'. Services in this environment: " + ", ".join(self.services)

    # ---- state --------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Plain JSON-able state. Unchanged parts are shared with the live state: treat as read-only."""
        return {"clock": self.clock.iso(), "services": {n: s.snapshot() for n, s in self.services.items()}}

    def restore(self, snap: dict[str, Any]) -> None:
        """Bring the state back to `snap`; costs what changed since, not what the state holds."""
        services = snap.get("services") if isinstance(snap, dict) else None
        if not isinstance(services, dict) or set(services) != set(self.services):
            have = sorted(services) if isinstance(services, dict) else None
            raise ValueError(
                f"snapshot does not match this environment: it has services {have}, "
                f"the environment has {sorted(self.services)}"
            )
        self.clock.set(snap["clock"])
        for name, svc in self.services.items():
            svc.restore(services[name])

    def reset(self) -> None:
        self.restore(self.initial)

    def service_hashes(self) -> dict[str, str]:
        return {name: svc.state_hash() for name, svc in self.services.items()}

    def state_hash(self) -> str:
        return combine({"clock": hash_value(self.clock.iso()), **self.service_hashes()})

    def diff(self, a: dict[str, Any] | None = None, b: dict[str, Any] | None = None) -> list[Change]:
        """Changes from `a` (default: the initial state) to `b` (default: now)."""
        a = self.initial if a is None else a
        b = self.snapshot() if b is None else b
        out: list[Change] = []
        if a.get("clock") != b.get("clock"):
            out.append(Change("_env", "clock", "change", a.get("clock"), b.get("clock")))
        sa, sb = a["services"], b["services"]
        for name in sorted(set(sa) | set(sb)):
            if sa.get(name) is sb.get(name):
                continue
            svc = self.services.get(name)
            ta, tb = sa.get(name, {}), sb.get(name, {})
            if svc is not None:
                out.extend(svc.diff(ta, tb))
        return out

    def validate(self) -> dict[str, str | None]:
        """Health: per service, None if its state validates against its model, else the error."""
        out: dict[str, str | None] = {}
        for name, svc in self.services.items():
            try:
                svc.validate_state()
                out[name] = None
            except Exception as e:
                out[name] = str(e)
        return out

    @classmethod
    def available(cls, library: Library | None = None) -> Iterable[str]:
        return (library if library is not None else active()).keys()


@lru_cache(maxsize=4)
def seeded_world(library: Library, seed: int, size: str) -> dict[str, Any]:
    """The seeded state of every service of `library` (built once per world and library, then shared
    copy-on-write): what tasks are planted on (`tasks.generator.base_world`) and persona worlds extend."""
    return Environment(services=list(library), seed=seed, size=size, library=library).snapshot()
