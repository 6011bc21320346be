"""`compoworld view`: a local web viewer for tasks, runs and failures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

err = Console(stderr=True, soft_wrap=True)  # an error is one line, however narrow the terminal


def view_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="A task file (JSONL, optionally .gz) and/or run directories of `compoworld eval`, in any order."
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="Port to serve on (0: any free port).")] = 8600,
    host: Annotated[str, typer.Option(help="Address to bind (local only by default).")] = "127.0.0.1",
) -> None:
    """Serve tasks, runs and failures in the browser: task list with filters, task and episode pages
    (calls, state diffs, verdicts beside the reference), run charts, and run comparison."""
    import socket

    import uvicorn

    from compoworld.view import Viewer, view_app

    tasks: Path | None = None
    runs: list[Path] = []
    for p in paths or []:
        if p.is_dir():
            if not (p / "config.json").is_file():
                err.print(
                    f"[red]error:[/red] {p} is not a run directory (no config.json; make one with `compoworld eval`)"
                )
                raise typer.Exit(2)
            runs.append(p)
        elif p.is_file():
            if tasks is not None:
                err.print(f"[red]error:[/red] give one task file, got {tasks} and {p}")
                raise typer.Exit(2)
            tasks = p
        else:
            err.print(f"[red]error:[/red] {p}: no such task file or run directory")
            raise typer.Exit(2)
    if tasks is None and not runs:
        err.print(
            "[red]error:[/red] give a task file and/or run directories, e.g. compoworld view tasks.jsonl runs/oracle"
        )
        raise typer.Exit(2)
    if not 0 <= port <= 65535:
        raise typer.BadParameter("--port must be in 0..65535")
    try:
        viewer = Viewer(tasks, runs)
    except (OSError, ValueError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    with socket.socket() as s:  # say clearly when the port is taken, before uvicorn logs a traceback
        try:
            s.bind((host, port))
            port = s.getsockname()[1]
        except OSError as e:
            err.print(f"[red]error:[/red] cannot serve on {host}:{port}: {e.strerror} (try --port 0)")
            raise typer.Exit(2) from None
    n_tasks = len(viewer.tasks.rows) if viewer.tasks else 0
    err.print(
        f"serving {n_tasks} tasks and {len(viewer.runs)} run(s) at [bold]http://{host}:{port}/[/bold] (Ctrl-C stops)"
    )
    uvicorn.run(view_app(viewer), host=host, port=port, log_level="warning")
