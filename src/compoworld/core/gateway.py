"""Gateway mode: four meta-tools that let an agent discover and call tools among many services."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from compoworld.core.envelope import failure, ok
from compoworld.core.tool import ToolMeta, ToolSpec, compile_tool, tool_meta

if TYPE_CHECKING:
    from compoworld.core.environment import Environment


class _MetaTools:
    """Declarations only: their schemas are derived like any tool's; `Gateway` runs them."""

    def list_services(self) -> list[dict[str, Any]]:
        """List the services of this environment with their domain, description and tool count."""

    def list_tools(self, service: str) -> list[dict[str, Any]]:
        """List the tools of one service: full name and one-line description.

        Args:
            service: A service name from list_services, e.g. 'email'.
        """

    def describe_tool(self, tool: str) -> dict[str, Any]:
        """Give a tool's full description and the JSON Schema of its arguments.

        Args:
            tool: The full tool name, 'service__tool', as given by list_tools.
        """

    def call_tool(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call a tool by its full name and return its result.

        Args:
            tool: The full tool name, 'service__tool'.
            arguments: The tool's arguments as an object, following describe_tool's schema.
        """


def _compile() -> dict[str, ToolSpec]:
    out = {}
    for attr in ("list_services", "list_tools", "describe_tool", "call_tool"):
        fn = getattr(_MetaTools, attr)
        out[attr] = compile_tool(_MetaTools, attr, fn, tool_meta(fn) or ToolMeta(mutates=False, name=None))
    return out


SPECS = _compile()


class Gateway:
    specs = SPECS

    def __init__(self, env: Environment) -> None:
        self.env = env

    def tools(self, format: str = "openai") -> list[dict[str, Any]]:
        from compoworld.core.environment import tool_entry

        return [tool_entry(name, spec, format) for name, spec in SPECS.items()]

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        spec = SPECS.get(name)
        if spec is None:
            return failure(404, "unknown_tool", f"Unknown gateway tool '{name}'. Use: {', '.join(SPECS)}")
        if isinstance(arguments, str | bytes):
            import orjson

            try:
                arguments = orjson.loads(arguments) if arguments.strip() else {}
            except orjson.JSONDecodeError as e:
                return failure(400, "invalid_arguments", f"Arguments of {name} are not valid JSON: {e}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return failure(400, "invalid_arguments", f"Arguments of {name} must be a JSON object")
        try:
            kw = spec.validate(arguments)
        except ValidationError as e:
            return failure(400, "invalid_arguments", spec.explain(e))
        env = self.env
        if name == "list_services":
            return ok(
                [
                    {"service": n, "domain": s.domain, "description": s.summary(), "tools": len(s.tool_specs)}
                    for n, s in env.services.items()
                ]
            )
        if name == "list_tools":
            svc = env.services.get(kw["service"])
            if svc is None:
                return failure(
                    404,
                    "unknown_service",
                    f"Unknown service '{kw['service']}'. Services: {', '.join(env.services)}",
                )
            return ok(
                [
                    {"tool": f"{svc.name}__{t}", "description": s.description.split("\n", 1)[0]}
                    for t, s in svc.tool_specs.items()
                ]
            )
        if name == "describe_tool":
            target = env.tool_spec(kw["tool"])
            if target is None:
                return failure(404, "unknown_tool", env._unknown_tool_message(kw["tool"]))
            return ok(
                {
                    "tool": kw["tool"],
                    "description": target.description,
                    "input_schema": target.input_schema,
                    "mutates": target.mutates,
                }
            )
        # call_tool: never recurse into the gateway itself
        if env.tool_spec(kw["tool"]) is None:
            return failure(404, "unknown_tool", env._unknown_tool_message(kw["tool"]))
        return env.call(kw["tool"], kw["arguments"] or {})
