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


def _check_services(tasks: list, source: Path) -> None:
    """One clear line, not a traceback or a 500, when tasks need services the library lacks."""
    from compoworld.services import INTERFACES, registry

    missing = sorted({s for t in tasks for s in t.all_services} - set(registry()) - INTERFACES)
    if missing:
        _fail(
            f"tasks in {source} use services that are not loaded: {', '.join(missing)} "
            "(compiled services need --manifests PATH before 'serve', or COMPOWORLD_MANIFESTS)"
        )


def _limits(call_timeout: float, call_memory: int):
    from compoworld.core.limits import CallLimits

    if not call_timeout > 0 or call_timeout != call_timeout:
        _fail("--call-timeout must be a positive number of seconds")
    if call_memory <= 0:
        _fail("--call-memory must be a positive number of bytes")
    return CallLimits(cpu_s=call_timeout, memory_bytes=call_memory)


@app.command()
def stdio(
    tasks: Annotated[Path, typer.Option(help="JSONL task file.")],
    task_id: Annotated[str, typer.Option(help="The task to serve.")],
    mode: Annotated[str, typer.Option(help="direct or gateway tools.")] = "direct",
    result: Annotated[
        Path | None, typer.Option(help="Where to write the final state and verification on exit.")
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            help="Keep the episode in a state file across processes, for clients that start one "
            "server process per tool call (langchain-mcp-adapters does by default)."
        ),
    ] = None,
    call_timeout: Annotated[
        float, typer.Option(help="CPU seconds one tool call may use; past it the call is undone (422).")
    ] = 2.0,
    call_memory: Annotated[
        int, typer.Option(help="Bytes of memory one tool call may grow the server by (422 past it).")
    ] = 512 * 1024 * 1024,
) -> None:
    """One task's environment over stdio (for an agent harness's MCP configuration).

    Every exit (stdin closed, SIGTERM, SIGHUP, SIGINT) writes the result; a run that served no
    tool call never overwrites an existing one."""
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
    _check_services(found, tasks)
    if run_id is not None and not run_id.replace("-", "").replace("_", "").isalnum():
        _fail("--run-id takes letters, digits, '-' and '_' only")
    limits = _limits(call_timeout, call_memory)
    try:
        code = serve_stdio(
            found[0], mode, result or default_results_dir() / f"{task_id}.json", run_id, limits=limits
        )
    except ValueError as e:
        _fail(str(e))
    raise typer.Exit(code)


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
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Another Host header MCP clients may use (name or name:port; repeatable; '*' for "
            "any). Loopback and --host are always allowed."
        ),
    ] = None,
    state_budget: Annotated[
        int, typer.Option(help="Bytes of state one session may hold; writes past it get a 422.")
    ] = 32 * 1024 * 1024,
    call_timeout: Annotated[
        float, typer.Option(help="CPU seconds one tool call may use; past it the call is undone (422).")
    ] = 2.0,
    call_memory: Annotated[
        int, typer.Option(help="Bytes of memory one tool call may grow the server by (422 past it).")
    ] = 512 * 1024 * 1024,
    header_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds a client has to send a request's headers (408 past it while over half of "
            "--max-connections are open; six times that until then)."
        ),
    ] = 10.0,
    max_connections: Annotated[
        int | None,
        typer.Option(
            help="Open connections at most; more get an immediate 503 (default: what the fd limit allows)."
        ),
    ] = None,
) -> None:
    """Many concurrent sessions: MCP at /mcp/{session}, control API at /sessions.

    Sessions live in memory: a restart loses them (verification results are kept on disk)."""
    import uvicorn

    from compoworld.serve.http import KEEP_ALIVE_S, Store, build_app
    from compoworld.serve.transport import guarded_protocol, listen_socket
    from compoworld.tasks.model import load_tasks

    if mode not in ("direct", "gateway"):
        _fail("--mode must be direct or gateway")
    if state_budget <= 0:
        _fail("--state-budget must be a positive number of bytes")
    limits = _limits(call_timeout, call_memory)
    if not header_timeout > 0:
        _fail("--header-timeout must be a positive number of seconds")
    if max_connections is not None and max_connections < 1:
        _fail("--max-connections must be at least 1")
    try:
        loaded = load_tasks(tasks) if tasks else []
    except (OSError, ValueError) as e:
        _fail(str(e))
    if tasks:
        _check_services(loaded, tasks)
    task_map = {t.id: t for t in loaded}
    try:  # bind first: a port in use is one clear line, and "serving" is only said once it is true
        sock = listen_socket(host, port)  # IPPROTO_TCP: asyncio then sets TCP_NODELAY on every connection
    except OSError as e:
        _fail(
            f"cannot listen on {host}:{port}: {e.strerror or e} (is another server on that port? try --port)"
        )
    except (OverflowError, ValueError) as e:
        _fail(f"cannot listen on {host}:{port}: {e}")
    token = control_token or secrets.token_urlsafe(24)
    if not control_token:
        sys.stderr.write(f"control token: {token}\n")
    store = Store(task_map, mode, idle_timeout, results, state_budget, limits)
    shown = f"[{host}]" if ":" in host else host
    asgi, _ = build_app(store, token, f"http://{shown}:{port}", host=host, allowed_hosts=allow_host or [])
    config = uvicorn.Config(
        asgi,
        log_level="warning",
        timeout_keep_alive=KEEP_ALIVE_S,
        http=guarded_protocol(header_timeout, max_connections=max_connections),
    )
    sys.stderr.write(
        f"serving {len(task_map)} task(s) on http://{shown}:{port} (control API /sessions, MCP /mcp/<session>)\n"
    )
    # Tool calls run in worker threads: hand the GIL back to the event loop sooner than the 5 ms
    # default, so a heavy call in one session delays other sessions' requests less.
    sys.setswitchinterval(0.0005)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        store.close()


@app.command()
def router(
    backend: Annotated[
        list[str], typer.Option("--backend", help="A `serve http` base URL (repeat for each).")
    ],
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8700,
    public_url: Annotated[
        str | None, typer.Option(help="The URL clients reach the router at (default http://HOST:PORT).")
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="Another Host header clients may use (as `serve http --allow-host`)."),
    ] = None,
    table: Annotated[
        Path | None,
        typer.Option(help="File the session table is kept in, so a restarted router knows every session."),
    ] = None,
    stream_timeout: Annotated[
        float, typer.Option(help="Seconds an upstream stream may stay silent before it is closed.")
    ] = 60.0,
    header_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to send a request's headers (408 past it).")
    ] = 10.0,
) -> None:
    """Put N `serve http` processes behind one URL: each new session goes to the least-loaded live
    backend, and every later request of that session to the same backend (see serve/router.py)."""
    import uvicorn

    from compoworld.serve.router import build_router
    from compoworld.serve.transport import guarded_protocol, listen_socket

    url = public_url or f"http://{host}:{port}"
    if not stream_timeout > 0 or not header_timeout > 0:
        _fail("--stream-timeout and --header-timeout must be positive numbers of seconds")
    try:
        app_ = build_router(
            list(backend),
            url,
            host=host,
            allowed_hosts=allow_host or [],
            table_path=table,
            stream_timeout=stream_timeout,
        )
    except (ValueError, OSError) as e:
        _fail(str(e))
    try:
        sock = listen_socket(host, port)
    except (OSError, OverflowError, ValueError) as e:
        _fail(f"cannot listen on {host}:{port}: {e} (is another server on that port? try --port)")
    typer.echo(f"routing {len(backend)} backend(s) at {url}", err=True)
    config = uvicorn.Config(
        app_, log_level="warning", timeout_keep_alive=75, http=guarded_protocol(header_timeout)
    )
    uvicorn.Server(config).run(sockets=[sock])
