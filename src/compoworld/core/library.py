"""`Library`: the services an environment may be composed from, as a value that is given, not discovered.

An `Environment`, the task generator and the servers take a `Library`. Core knows only this mapping
(name -> `Service` class); what fills it lives above: `compoworld.services.hand_built()` gives the
hand-built services, and `compoworld.compiler.library.load_library(manifests)` adds services compiled
from manifests. The CLI's `--manifests` builds one and makes it the process's *active* library, which
is what code that is not handed one uses (`active()`); with nothing set, that is the hand-built library.

A library is immutable and hashable (caches of seeded worlds and moves are keyed by it), and it
pickles as the manifests it was loaded from, so a worker process rebuilds the same one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compoworld.core.service import Service

Loader = Callable[[tuple[str, ...]], "Library"]


class Library(Mapping[str, "type[Service]"]):
    """Library services by name, in name order, plus the interface services an episode may add.

    `interfaces` are services that are not library services (never distractors, never in the base
    world) but may be composed into an environment by name: name -> a function giving the class,
    called on first use (the computer interface imports a browser driver)."""

    def __init__(
        self,
        services: Iterable[type[Service]],
        manifests: Sequence[str] = (),
        interfaces: Mapping[str, Callable[[], type[Service]]] | None = None,
    ) -> None:
        found: dict[str, type[Service]] = {}
        for cls in services:
            if not cls.name:
                raise ValueError(f"service class {cls.__qualname__} has no name")
            if cls.name in found and found[cls.name] is not cls:
                raise RuntimeError(f"two services are named {cls.name!r}")
            found[cls.name] = cls
        self._services = dict(sorted(found.items()))
        self.manifests = tuple(manifests)
        self._interfaces = dict(interfaces or {})
        self._loaded_as: tuple[str, ...] | None = None  # set by `load`: how a worker rebuilds it
        self._hash = hash((tuple(self._services.items()), tuple(sorted(self._interfaces))))

    # ---- the mapping --------------------------------------------------------------------------
    def __getitem__(self, name: str) -> type[Service]:
        return self._services[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._services)

    def __len__(self) -> int:
        return len(self._services)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Library):
            return NotImplemented
        return self._services == other._services and self._interfaces.keys() == other._interfaces.keys()

    def __repr__(self) -> str:
        return f"Library({len(self)} services, manifests={list(self.manifests)})"

    def __copy__(self) -> Library:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, object]) -> Library:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        if self._loaded_as is None:  # classes built in this process (compiled ones) do not pickle
            raise TypeError("only a library made by compoworld.core.library.load() can be pickled")
        return (load, (self._loaded_as,))

    # ---- lookups ------------------------------------------------------------------------------
    @property
    def interface_names(self) -> frozenset[str]:
        return frozenset(self._interfaces)

    def service(self, name: str) -> type[Service]:
        """The class of library or interface service `name`; a KeyError naming the known ones."""
        if name in self._services:
            return self._services[name]
        if name in self._interfaces:
            return self._interfaces[name]()
        raise KeyError(f"unknown service {name!r}; known services: {', '.join(self._services)}")

    def with_interfaces(self) -> dict[str, type[Service]]:
        """The library plus the interfaces (what an episode's tools can come from)."""
        return {**self._services, **{n: self.service(n) for n in self._interfaces}}

    def plus(self, services: Iterable[type[Service]], manifests: Sequence[str] = ()) -> Library:
        """This library with more services; a name already taken is refused."""
        extra = list(services)
        for cls in extra:
            if cls.name in self._services:
                where = f" ({cls.spec})" if getattr(cls, "spec", None) else ""
                raise RuntimeError(f"compiled service {cls.name!r}{where} clashes with another service's name")
        return Library([*self._services.values(), *extra], [*self.manifests, *manifests], self._interfaces)


# ---- the process's loader and active library (set at the edges: the package root and the CLI) ----
_loader: Loader | None = None
_loaded: dict[tuple[str, ...], Library] = {}
_active: Library | None = None


def set_loader(fn: Loader) -> None:
    """How `load` builds a library from manifest paths (registered by the `compoworld` package root,
    which may import every layer; core itself never imports the service library)."""
    global _loader
    _loader = fn
    _loaded.clear()


def load(manifests: Sequence[str] = ()) -> Library:
    """The hand-built library plus the services compiled from `manifests` (files), built once per process."""
    key = tuple(str(m) for m in manifests)
    if key not in _loaded:
        if _loader is None:
            raise RuntimeError("no library loader is registered: pass Environment(library=...)")
        lib = _loader(key)
        lib._loaded_as = key
        _loaded[key] = lib
    return _loaded[key]


def active() -> Library:
    """The library of this process: the one `use` set (the CLI's --manifests), else the hand-built one."""
    return _active if _active is not None else load()


def chosen() -> Library | None:
    """The library `use` set, or None when the process runs on the hand-built one."""
    return _active


def use(lib: Library | None) -> Library | None:
    """Make `lib` the active library (None: back to the hand-built one); returns the one it replaces."""
    global _active
    before, _active = _active, lib
    return before


@contextlib.contextmanager
def using(lib: Library | None) -> Iterator[Library]:
    """`use(lib)` for the duration of a block (None leaves the active library as it is)."""
    if lib is None:
        yield active()
        return
    before = use(lib)
    try:
        yield lib
    finally:
        use(before)
