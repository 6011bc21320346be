"""CompoWorld: executable, stateful, composable tool environments for LLM agents.

The package root is the composition root: it tells `core.library` how a `Library` is loaded (the
hand-built services plus compiled manifests), lazily, so importing `compoworld.core` imports no
service, compiler or task module.
"""

from collections.abc import Sequence

from compoworld.core import library as _library
from compoworld.core.environment import Environment
from compoworld.core.library import Library


def _load_library(manifests: Sequence[str]) -> Library:
    from compoworld.compiler.library import load_library

    return load_library(manifests)


_library.set_loader(_load_library)

__all__ = ["Environment", "Library"]
__version__ = "0.1.0"
