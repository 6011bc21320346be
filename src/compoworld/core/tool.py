"""The `@tool` decorator and the compiled description of a tool (`ToolSpec`)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, create_model

from compoworld.core.schema import clean_schema, parse_docstring

_TOOL_ATTR = "__compoworld_tool__"


@dataclass(frozen=True)
class ToolMeta:
    mutates: bool
    name: str | None


def tool(fn: Callable | None = None, *, mutates: bool = False, name: str | None = None) -> Any:
    """Mark a `Service` method as a tool.

    `mutates=True` declares that the tool may write state (read-only calls can be skipped on
    replay). The input schema comes from the signature's type hints and the docstring's ``Args:``.
    """

    def mark(f: Callable) -> Callable:
        setattr(f, _TOOL_ATTR, ToolMeta(mutates=mutates, name=name))
        return f

    return mark(fn) if fn is not None else mark


def tool_meta(fn: Any) -> ToolMeta | None:
    return getattr(fn, _TOOL_ATTR, None)


def _describe_type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    t = schema.get("type")
    if t == "array":
        return f"array of {_describe_type(schema.get('items', {}))}s"
    if isinstance(t, str):
        return {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean"}.get(t, t)
    if "anyOf" in schema:
        return " or ".join(_describe_type(s) for s in schema["anyOf"])
    return "a value"


@dataclass
class ToolSpec:
    """Everything the engine needs to validate, run and advertise one tool."""

    name: str
    fn: Callable[..., Any]
    description: str
    mutates: bool
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    params: tuple[str, ...]
    required: frozenset[str]
    _validate: Callable[[Any], Any] = field(repr=False, default=None)  # type: ignore[assignment]

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments, or `ValidationError`."""
        return self._validate(arguments).__dict__

    def explain(self, error: ValidationError) -> str:
        """One sentence per bad field: which field, what was expected, what was sent."""
        parts = []
        props = self.input_schema.get("properties", {})
        for e in error.errors(include_url=False):
            loc = [str(x) for x in e["loc"]]
            fname = loc[0] if loc else "arguments"
            where = ".".join(loc) if loc else "arguments"
            if e["type"] == "missing":
                expected = _describe_type(props.get(fname, {}))
                parts.append(f"'{where}' is required ({expected})")
            elif e["type"] == "extra_forbidden":
                allowed = ", ".join(self.params) or "none"
                parts.append(f"'{where}' is not a parameter of this tool (allowed: {allowed})")
            else:
                got = repr(e.get("input"))
                if len(got) > 60:
                    got = got[:57] + "..."
                expected = _describe_type(props.get(fname, {}))
                parts.append(f"'{where}': {e['msg']} (expected {expected}, got {got})")
        return f"Invalid arguments for {self.name}: " + "; ".join(parts)


def compile_tool(owner: type, attr: str, fn: Callable[..., Any], meta: ToolMeta) -> ToolSpec:
    """Build the `ToolSpec` of method `fn`: a pydantic validator plus clean JSON Schemas."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    description, param_docs = parse_docstring(fn.__doc__)
    fields: dict[str, Any] = {}
    for pname, p in list(sig.parameters.items())[1:]:  # skip self
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{owner.__name__}.{attr}: tools cannot take *args/**kwargs")
        ann = hints.get(pname, Any)
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[pname] = (ann, Field(default, description=param_docs.get(pname) or None))
    model = create_model(  # type: ignore[call-overload]
        f"{owner.__name__}_{attr}_args",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
        **fields,
    )
    schema = clean_schema(model.model_json_schema())
    schema.setdefault("properties", {})
    schema["type"] = "object"
    schema["additionalProperties"] = False
    schema.pop("description", None)
    ret = hints.get("return", Any)
    out_schema = clean_schema(TypeAdapter(ret).json_schema()) if ret is not Any else {}
    required = frozenset(schema.get("required", []))
    return ToolSpec(
        name=meta.name or attr,
        fn=fn,
        description=description or f"{attr.replace('_', ' ')}.",
        mutates=meta.mutates,
        input_schema=schema,
        output_schema=out_schema,
        params=tuple(fields),
        required=required,
        _validate=model.model_validate,
    )
