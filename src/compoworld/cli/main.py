"""The `compoworld` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table


def _flags_without_a_type() -> None:
    """Typer's Rich help prints `<bool>` beside every flag (--json, --help): a flag takes no value."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_compoworld", False):
        return

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._compoworld = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_without_a_type()
app = typer.Typer(
    help="CompoWorld: executable, stateful, composable tool environments for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err = Console(stderr=True)


def _register_subcommands() -> None:
    from compoworld.cli.run import (
        EvalCommand,
        eval_command,
        export_app,
        replay_compat_command,
        report_command,
    )
    from compoworld.cli.tasks import app as tasks_app

    app.add_typer(tasks_app, name="tasks")
    from compoworld.cli.models import author_command, judge_command

    tasks_app.command("author")(author_command)
    tasks_app.command("judge")(judge_command)
    app.command("eval", cls=EvalCommand)(eval_command)
    app.command("replay-compat")(replay_compat_command)
    app.command("report")(report_command)
    app.add_typer(export_app, name="export")
    from compoworld.cli.serve import app as serve_app

    app.add_typer(serve_app, name="serve")
    from compoworld.cli.spec import app as spec_app
    from compoworld.cli.spec import worldmodel_app

    app.add_typer(spec_app, name="spec")
    from compoworld.cli.models import implement_command

    spec_app.command("implement")(implement_command)
    app.add_typer(worldmodel_app, name="worldmodel")
    from compoworld.cli.worlds import app as worlds_app

    app.add_typer(worlds_app, name="worlds")
    from compoworld.cli.view import view_command

    app.command("view")(view_command)


_register_subcommands()


@app.callback()
def _global(
    manifests: Annotated[
        str | None,
        typer.Option(
            "--manifests",
            help="Compiled service manifests (files or folders, ':'-separated) to add to the library.",
            envvar="COMPOWORLD_MANIFESTS",
        ),
    ] = None,
    world_model: Annotated[
        str | None,
        typer.Option(
            "--world-model",
            help="Model that simulates compiled tools code cannot do (endpoint: COMPOWORLD_BASE_URL).",
            envvar="COMPOWORLD_WORLD_MODEL",
        ),
    ] = None,
    world_model_cache: Annotated[
        Path | None,
        typer.Option(
            help="Replay cache of world-model proposals (JSONL).", envvar="COMPOWORLD_WORLD_MODEL_CACHE"
        ),
    ] = None,
) -> None:
    if world_model:
        from compoworld.llm.client import LLMConfig
        from compoworld.worldmodel import WorldModel, configure

        try:
            configure(WorldModel(LLMConfig.from_env(model=world_model), world_model_cache))
        except ValueError as e:
            err.print(f"[red]error:[/red] {e}")
            raise typer.Exit(2) from None
    if manifests:  # the library this command runs on: the hand-built one plus these manifests
        from compoworld.compiler.library import library_for
        from compoworld.core import library

        try:
            library.use(library_for(manifests))
        except (FileNotFoundError, ValueError, RuntimeError) as e:
            err.print(f"[red]error:[/red] {e}")
            raise typer.Exit(2) from None


def _split(services: str) -> list[str]:
    names = [s.strip() for s in services.split(",") if s.strip()]
    if not names:
        raise typer.BadParameter("give at least one service, e.g. --services email,chat")
    return names


def _env(services: str, seed: int, size: str = "default"):
    from compoworld.core.environment import Environment

    try:
        return Environment(services=_split(services), seed=seed, size=size)
    except (KeyError, ValueError) as e:
        err.print(f"[red]error:[/red] {e.args[0] if e.args else e}")
        raise typer.Exit(2) from None


@app.command()
def services(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List the library's services with their domain, tool count and description."""
    from compoworld.services import registry

    def as_code(c: Any) -> int:
        # a compiled service's simulated and quarantined tools are the world model's; the rest is code
        ops = getattr(c, "ops", None) or {}
        return sum(
            1
            for t in c.tool_specs
            if not (ops.get(t, {}).get("kind") == "simulated" or ops.get(t, {}).get("quarantined"))
        )

    rows = [
        {
            "name": n,
            "domain": c.domain,
            "tools": len(c.tool_specs),
            "as_code": as_code(c),
            "spec": c.spec,
            "description": c.summary(),
        }
        for n, c in registry().items()
    ]
    if as_json:
        summary = {
            "services": rows,
            "total_services": len(rows),
            "total_tools": sum(r["tools"] for r in rows),
            "total_as_code": sum(r["as_code"] for r in rows),
            "domains": sorted({r["domain"] for r in rows}),
        }
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    table = Table(
        title=f"{len(rows)} services, {sum(r['tools'] for r in rows)} tools "
        f"({sum(r['as_code'] for r in rows)} run as code)"
    )
    for col in ("name", "domain", "tools", "as code", "spec", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["name"], r["domain"], str(r["tools"]), str(r["as_code"]), r["spec"] or "", r["description"]
        )
    console.print(table)


@app.command()
def tools(
    services: Annotated[str, typer.Option(help="Comma-separated service names.")],
    format: Annotated[str, typer.Option(help="openai or mcp.")] = "openai",
    mode: Annotated[
        str, typer.Option(help="direct (namespaced tools) or gateway (4 meta-tools).")
    ] = "direct",
    seed: int = 0,
) -> None:
    """Print the tool list of an environment as JSON."""
    if format not in ("openai", "mcp"):
        raise typer.BadParameter("--format must be openai or mcp")
    if mode not in ("direct", "gateway"):
        raise typer.BadParameter("--mode must be direct or gateway")
    env = _env(services, seed, "small")
    sys.stdout.write(json.dumps(env.tools(format=format, mode=mode), indent=2) + "\n")


@app.command()
def call(
    tool: Annotated[str, typer.Argument(help="Full tool name, service__tool (or a gateway meta-tool).")],
    args: Annotated[str, typer.Argument(help="JSON object of arguments.")] = "{}",
    services: Annotated[str, typer.Option(help="Comma-separated service names.")] = "email,chat,calendar",
    seed: int = 0,
    size: str = "default",
) -> None:
    """Run one call on a fresh environment and print its envelope (exit 1 if it failed)."""
    env = _env(services, seed, size)
    result = env.call(tool, args)
    sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    raise typer.Exit(0 if result["success"] else 1)


@app.command()
def demo(seed: int = 0) -> None:
    """The built-in default job: compose an environment and run a scripted cross-service session."""
    from compoworld.cli.demo import run_demo

    run_demo(console, seed)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # python -m compoworld.cli.main
    app()
