"""MCP tool specs -> service manifests -> executable services (no LLM needed)."""

from compoworld.compiler.adversarial import run_adversarial
from compoworld.compiler.compiler import compile_manifest
from compoworld.compiler.ingest import Spec, SpecTool, load_spec
from compoworld.compiler.runtime import CompiledService, ManifestError, load_manifest, service_from_manifest


def compile_spec(source, name: str | None = None, seed: int = 0) -> dict:
    """Read, normalise, compile and adversarially test one spec: its manifest, statuses included."""
    return run_adversarial(compile_manifest(load_spec(source), name), seed)


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
