"""Gateway mode: four meta-tools that let an agent discover and call tools among many services."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from compoworld.core.envelope import failure, ok
from compoworld.core.listing import tool_entry
from compoworld.core.tool import ToolMeta, ToolSpec, compile_tool, tool_meta

Environment = Any  # a `core.environment.Environment` (which opens its gateway: not imported back)


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


class _CompatMetaTools:
    """The published CompoWorld convention (AllSpark-Research/AgentEnv sample trajectories)."""

    def list_services(self) -> dict[str, Any]:
        """List the names of the services mounted in this session; call list_tools on one to learn what it can do."""

    def list_tools(self, service: str) -> dict[str, Any]:
        """List every tool of a service with its name and a short description (no argument schemas).

        Args:
            service: A service name from list_services.
        """

    def describe_tool(self, tool: str) -> dict[str, Any]:
        """Return the full parameter schema of one tool: the argument names, types and descriptions.

        Args:
            tool: A tool name from list_tools.
        """

    def call_tool(self, tool_name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Execute a tool by name with the given arguments and return its result.

        Args:
            tool_name: A tool name from list_tools.
            arguments: The tool's arguments as a JSON object, matching the schema from describe_tool.
        """


def _compile_compat() -> dict[str, ToolSpec]:
    out = {}
    for attr in ("list_services", "list_tools", "describe_tool", "call_tool"):
        fn = getattr(_CompatMetaTools, attr)
        out[attr] = compile_tool(
            _CompatMetaTools, attr, fn, tool_meta(fn) or ToolMeta(mutates=False, name=None)
        )
    return out


COMPAT_SPECS = _compile_compat()


class CompatGateway(Gateway):
    """`mode="gateway-compat"`: the convention of the CompoWorld authors' published trajectories.

    - `call_tool` takes `tool_name` (and, leniently, `tool`);
    - tools are listed by their bare real name where it is unique among the mounted services, and as
      `service__tool` only where two services share it; both forms resolve;
    - meta-tool results are plain objects (`{"services": [...]}`, `{"service": s, "tools": [...]}`),
      not envelopes; `call_tool` returns the tool's own envelope, and failures stay envelopes.
    """

    specs = COMPAT_SPECS

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        owners: dict[str, list[str]] = {}
        for full in env.tool_names:
            svc, bare = full.split("__", 1)
            owners.setdefault(bare, []).append(svc)
        self.owners = owners
        # the names the published data gives our services: the real server each models
        self.aliases = {alias(type(s)): n for n, s in env.services.items() if alias(type(s))}

    def service(self, name: Any) -> str | None:
        """Our service for a name: its own, or the real server's it models (`google_sheets`)."""
        if not isinstance(name, str):
            return None
        return name if name in self.env.services else self.aliases.get(name)

    def tools(self, format: str = "openai") -> list[dict[str, Any]]:
        return [tool_entry(name, spec, format) for name, spec in COMPAT_SPECS.items()]

    def shown_name(self, full: str) -> str:
        """What list_tools shows: the bare name when unique, else `service__tool`."""
        svc, bare = full.split("__", 1)
        return bare if len(self.owners.get(bare, ())) == 1 else full

    def resolve(self, name: Any) -> tuple[str | None, dict[str, Any] | None]:
        """(full name, None) or (None, a 404 envelope that says why)."""
        env = self.env
        if not isinstance(name, str) or not name:
            return None, failure(404, "unknown_tool", "give a tool name from list_tools")
        if env.tool_spec(name) is not None:
            return name, None
        if "__" in name:  # a prefix may name the real server: google_sheets__google_sheets_x
            prefix, bare = name.split("__", 1)
            ours = self.service(prefix)
            if ours is not None and env.tool_spec(f"{ours}__{bare}") is not None:
                return f"{ours}__{bare}", None
        owners = self.owners.get(name, [])
        if len(owners) == 1:
            return f"{owners[0]}__{name}", None
        if len(owners) > 1:
            return None, failure(
                404,
                "ambiguous_tool",
                f"'{name}' exists on {', '.join(owners)}: use " + " or ".join(f"{s}__{name}" for s in owners),
            )
        return None, failure(404, "unknown_tool", env._unknown_tool_message(name))

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        spec = COMPAT_SPECS.get(name)
        if spec is None:
            return failure(
                404, "unknown_tool", f"Unknown gateway tool '{name}'. Use: {', '.join(COMPAT_SPECS)}"
            )
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
        if name == "call_tool" and "tool_name" not in arguments and "tool" in arguments:
            arguments = {**arguments, "tool_name": arguments["tool"]}
            del arguments["tool"]
        try:
            kw = spec.validate(arguments)
        except ValidationError as e:
            return failure(400, "invalid_arguments", spec.explain(e))
        env = self.env
        if name == "list_services":
            return {"services": list(env.services)}
        if name == "list_tools":
            svc = env.services.get(self.service(kw["service"]) or "")
            if svc is None:
                return failure(
                    404,
                    "unknown_service",
                    f"Unknown service '{kw['service']}'. Services: {', '.join(env.services)}",
                )
            return {
                "service": svc.name,
                "tools": [
                    {
                        "name": self.shown_name(f"{svc.name}__{t}"),
                        "description": s.description.split("\n", 1)[0],
                    }
                    for t, s in svc.tool_specs.items()
                ],
            }
        full, err = self.resolve(kw["tool"] if name == "describe_tool" else kw["tool_name"])
        if err is not None:
            return err
        target = env.tool_spec(full)
        if name == "describe_tool":
            return {
                "name": self.shown_name(full),
                "description": target.description,
                "parameters": target.input_schema,
            }
        return env.call(full, kw["arguments"] or {})


def alias(cls: type) -> str | None:
    """The real server a service models, named as MCP catalogues name it (from its spec file:
    `klavis_google_sheets.json` -> `google_sheets`, `stripe-official.json` -> `stripe`)."""
    spec = getattr(cls, "spec", None)
    if not spec:
        return None
    stem = str(spec).rsplit("/", 1)[-1].removesuffix(".json")
    for prefix in ("klavis_", "mcp-official-archived_", "mcp-official_"):
        stem = stem.removeprefix(prefix)
    return stem.removesuffix("-official").replace("-", "_") or None
