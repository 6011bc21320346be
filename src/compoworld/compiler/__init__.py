"""The compiler (layer 3, beside `worldmodel`): MCP tool specs -> service manifests -> executable
services (no LLM needed), and the `Library` of hand-built plus compiled services (`compiler.library`).

May import: `core`, `services`, `llm` (`spec implement`'s coder). Never tasks or anything above.
"""

from compoworld.compiler.adversarial import compile_spec, run_adversarial
from compoworld.compiler.compiler import compile_manifest
from compoworld.compiler.ingest import Spec, SpecTool, load_spec
from compoworld.compiler.library import load_manifest
from compoworld.compiler.runtime import CompiledService, ManifestError, service_from_manifest

__all__ = [
    "CompiledService",
    "ManifestError",
    "Spec",
    "SpecTool",
    "compile_manifest",
    "compile_spec",
    "load_manifest",
    "load_spec",
    "service_from_manifest",
    "run_adversarial",
]
