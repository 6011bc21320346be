"""`compoworld serve stdio|http`."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="Serve environments over MCP (stdio or streamable HTTP with a control API).", no_args_is_help=True
)


def _fail(msg: str) -> None:
    sys.stderr.write(f"error: {msg}\n")
    raise typer.Exit(2)


@app.command()
def stdio(
    tasks: Annotated[Path, typer.Option(help="JSONL task file.")],
    task_id: Annotated[str, typer.Option(help="The task to serve.")],
    mode: Annotated[str, typer.Option(help="direct or gateway tools.")] = "direct",
    result: Annotated[
        Path | None, typer.Option(help="Where to write the final state and verification on exit.")
    ] = None,
) -> None:
    """One task's environment over stdio (for an agent harness's MCP configuration)."""
    from compoworld.serve.stdio import default_results_dir, serve_stdio
    from compoworld.tasks.model import load_tasks

    if mode not in ("direct", "gateway"):
        _fail("--mode must be direct or gateway")
    try:
        found = [t for t in load_tasks(tasks) if t.id == task_id]
    except (OSError, ValueError) as e:
        _fail(str(e))
    if not found:
        _fail(f"no task {task_id!r} in {tasks}")
    serve_stdio(found[0], mode, result or default_results_dir() / f"{task_id}.json")


@app.command()
def http(
    tasks: Annotated[
        Path | None, typer.Option(help="JSONL task file whose tasks sessions can start from.")
    ] = None,
    host: Annotated[str, typer.Option(help="Bind address (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    control_token: Annotated[
        str | None,
        typer.Option(
            help="Control token (default: generated and printed).", envvar="COMPOWORLD_CONTROL_TOKEN"
        ),
    ] = None,
    mode: Annotated[str, typer.Option(help="Default tool mode of sessions: direct or gateway.")] = "direct",
    idle_timeout: Annotated[
        float, typer.Option(help="Seconds after which an idle session expires.")
    ] = 1800.0,
    results: Annotated[Path, typer.Option(help="Append-only file of verification results.")] = Path(
        "runs/serve/results.jsonl"
    ),
) -> None:
    """Many concurrent sessions: MCP at /mcp/{session}, control API at /sessions."""
    import uvicorn

    from compoworld.serve.http import Store, build_app
    from compoworld.tasks.model import load_tasks

    try:
        task_map = {t.id: t for t in load_tasks(tasks)} if tasks else {}
    except (OSError, ValueError) as e:
        _fail(str(e))
    token = control_token or secrets.token_urlsafe(24)
    if not control_token:
        sys.stderr.write(f"control token: {token}\n")
    store = Store(task_map, mode, idle_timeout, results)
    asgi, _ = build_app(store, token, f"http://{host}:{port}")
    sys.stderr.write(
        f"serving {len(task_map)} task(s) on http://{host}:{port} (control API /sessions, MCP /mcp/<session>)\n"
    )
    uvicorn.run(asgi, host=host, port=port, log_level="warning")
