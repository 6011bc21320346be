"""Commands with a model in the loop: `tasks author`, `tasks judge`, `spec implement`.

Each talks to one OpenAI-compatible endpoint through `compoworld.llm` (`--base-url` / `--model`, or
COMPOWORLD_BASE_URL / COMPOWORLD_MODEL). Registered on the `tasks` and `spec` command groups by
`cli.main`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

console = Console()
err = Console(stderr=True)

Model = Annotated[str | None, typer.Option("--model", help="Model name (or COMPOWORLD_MODEL).")]
BaseUrl = Annotated[str | None, typer.Option("--base-url", help="Endpoint (or COMPOWORLD_BASE_URL).")]
Timeout = Annotated[float, typer.Option(help="Seconds per request.")]
MaxTokens = Annotated[int, typer.Option("--max-tokens", help="Completion cap of each request.")]
Profile = Annotated[
    str, typer.Option("--server-profile", help="auto, generic, openai, vllm, sglang, llamacpp, ollama.")
]


def _client(base_url: str | None, model: str | None, timeout: float, max_tokens: int, profile: str) -> Any:
    from compoworld.llm.client import LLMClient, LLMConfig

    try:
        return LLMClient(
            LLMConfig.from_env(
                base_url, model, timeout=timeout, max_tokens=max_tokens, profile=profile, temperature=0.0
            )
        )
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None


async def _reachable(client: Any) -> None:
    why = await client.probe()
    if why:
        err.print(f"[red]error:[/red] {why}")
        raise typer.Exit(2)


def _jsonl(path: Path | None):
    """An append-only log of every proposal / verdict, or a no-op."""
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    f = path.open("a", encoding="utf-8")

    def write(rec: dict[str, Any]) -> None:
        f.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        f.flush()

    return write


def author_command(
    model: Model = None,
    base_url: BaseUrl = None,
    n: Annotated[int, typer.Option("--n", help="Tasks to keep.")] = 10,
    k: Annotated[int, typer.Option("--k", help="Services each task crosses (K).")] = 2,
    distractors: Annotated[int, typer.Option(help="Distractor services per task (D).")] = 2,
    walk: Annotated[str, typer.Option(help="Walk skeleton length MIN:MAX (L).")] = "3:6",
    services: Annotated[
        str | None, typer.Option(help="Draw the K services from these (comma-separated).")
    ] = None,
    rounds: Annotated[
        int, typer.Option("--rounds", help="Revision rounds after a rejected proposal (R).")
    ] = 2,
    explore_turns: Annotated[
        int, typer.Option(help="Model turns of exploration before it must propose.")
    ] = 8,
    mode: Annotated[str, typer.Option(help="Tools the author sees: direct or gateway.")] = "direct",
    attempts: Annotated[int | None, typer.Option(help="Authoring sessions at most (default 2N + 2).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the walk skeletons and base worlds.")] = 0,
    size: Annotated[str, typer.Option(help="Seed data size: small, default or large.")] = "small",
    out: Annotated[Path, typer.Option(help="Output JSONL task file (the `tasks generate` format).")] = Path(
        "runs/authored.jsonl"
    ),
    log: Annotated[
        Path | None, typer.Option(help="Append every proposal and its diagnostics here (JSONL).")
    ] = None,
    timeout: Timeout = 120.0,
    max_tokens: MaxTokens = 2048,
    server_profile: Profile = "auto",
) -> None:
    """A model writes tasks (explore, design, probe, submit); every gate of `tasks generate` decides."""
    from compoworld.services import registry
    from compoworld.tasks.author import AuthorSettings, author_tasks
    from compoworld.tasks.model import Task, save_tasks

    try:
        lo, _, hi = walk.partition(":")
        wmin, wmax = int(lo), int(hi or lo)
    except ValueError:
        raise typer.BadParameter(f"--walk takes MIN:MAX such as 3:6, got {walk!r}") from None
    pool = tuple(sorted(x.strip() for x in services.split(",") if x.strip())) if services else ()
    unknown = [x for x in pool if x not in registry()]
    if unknown:
        raise typer.BadParameter(
            f"--services: unknown service(s) {', '.join(unknown)} (see `compoworld services`)"
        )
    if n < 1 or k < 1 or distractors < 0 or rounds < 0 or explore_turns < 0:
        raise typer.BadParameter(
            "need --n >= 1, --k >= 1, --distractors >= 0, --rounds >= 0, --explore-turns >= 0"
        )
    if not 2 <= wmin <= wmax <= 30 or wmax < k + 1:
        raise typer.BadParameter(
            f"--walk needs 2 <= MIN <= MAX <= 30 and MAX >= K + 1 = {k + 1} (to revisit one)"
        )
    if pool and k > len(pool):
        raise typer.BadParameter(f"--k {k} is more than the {len(pool)} services of --services")
    if mode not in ("direct", "gateway"):
        raise typer.BadParameter("--mode must be direct or gateway")
    settings = AuthorSettings(
        k=k,
        distractors=distractors,
        walk_min=wmin,
        walk_max=wmax,
        rounds=rounds,
        explore_turns=explore_turns,
        mode=mode,
        size=size,
        pool=pool,
    )
    client = _client(base_url, model, timeout, max_tokens, server_profile)
    write = _jsonl(log)

    def progress(o: Any) -> None:
        what = "kept" if o.task is not None else f"rejected ({o.cause})"
        err.print(f"  session {o.index}: {what} after {len(o.rounds)} proposal(s)")

    async def go() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        await _reachable(client)
        try:
            return await author_tasks(client, n, seed, settings, attempts, progress, write)
        finally:
            await client.close()

    kept, summary = asyncio.run(go())
    tasks = [Task.model_validate(t) for t in kept]
    save_tasks(tasks, out)
    table = Table(title=f"{summary['kept']} authored tasks -> {out}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("kept", str(summary["kept"]))
    table.add_row("sessions", str(summary["sessions"]))
    table.add_row("requests", str(summary["requests"]))
    for cause, count in sorted(summary["rejected"].items()):
        table.add_row(f"session rejected: {cause}", str(count))
    for cause, count in sorted(summary["diagnostics"].items()):
        table.add_row(f"proposal failed: {cause}", str(count))
    console.print(table)
    if summary["rejected"].get("context_overflow"):
        err.print(
            "[red]error:[/red] the prompt does not fit the model's context: try --mode gateway, a smaller --k / --distractors, or a larger window"
        )
        raise typer.Exit(2)
    if summary["rejected"].get("endpoint_error"):
        raise typer.Exit(2)
    raise typer.Exit(0 if summary["kept"] >= n else 1)


def judge_command(
    tasks_file: Annotated[Path, typer.Argument(metavar="TASKS", help="A task file (JSONL).")],
    runs: Annotated[
        list[Path],
        typer.Option(
            "--runs", help="Run directories with the tasks' trajectories (repeat or comma-separate)."
        ),
    ],
    model: Model = None,
    base_url: BaseUrl = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Where to write the judged tasks (default: TASKS, rewritten atomically)."),
    ] = None,
    log: Annotated[
        Path | None, typer.Option(help="Append every verdict, raw replies of judge errors included (JSONL).")
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Hint-free attempts the difficulty gate reads.")] = 3,
    budget: Annotated[
        int, typer.Option(help="Characters of trajectory and diff the LLM judge reads.")
    ] = 12000,
    agent_turns: Annotated[int, typer.Option(help="Tool turns of the agent judge.")] = 6,
    agent_mode: Annotated[
        str, typer.Option(help="The agent judge's tools: direct (read-only tools) or gateway (meta-tools).")
    ] = "direct",
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    timeout: Timeout = 120.0,
    max_tokens: MaxTokens = 1024,
    server_profile: Profile = "auto",
) -> None:
    """LLM judge and agent judge over the runs' trajectories: consistency, difficulty, counterfactual probing."""
    from compoworld.rollout.judging import judge_tasks
    from compoworld.tasks.model import load_tasks, save_tasks

    try:
        tasks = load_tasks(tasks_file)
    except (OSError, ValueError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    dirs = [Path(p) for r in runs for p in str(r).split(",") if p]
    for d in dirs:
        if not (d / "config.json").is_file():
            err.print(
                f"[red]error:[/red] {d} is not a run directory (no config.json; make one with `compoworld eval`)"
            )
            raise typer.Exit(2)
    if k < 1 or budget < 500 or agent_turns < 0 or agent_mode not in ("direct", "gateway"):
        raise typer.BadParameter(
            "need --k >= 1, --budget >= 500, --agent-turns >= 0, --agent-mode direct|gateway"
        )
    client = _client(base_url, model, timeout, max_tokens, server_profile)
    write = _jsonl(log)

    def progress(t: Any, res: dict[str, Any]) -> None:
        if not as_json:
            err.print(f"  {t.id}: {res['status']}")

    async def go() -> list[Any]:
        await _reachable(client)
        try:
            return await judge_tasks(client, tasks, dirs, k, budget, agent_turns, progress, write, agent_mode)
        finally:
            await client.close()

    judged = asyncio.run(go())
    save_tasks(judged, out or tasks_file)
    results = {
        t.id: {
            x: t.meta["judges"][x]
            for x in ("status", "consistency", "difficulty", "counterfactual", "judge_errors")
        }
        for t in judged
    }
    if as_json:
        sys.stdout.write(json.dumps(results, indent=1, default=str) + "\n")
        return
    table = Table(title=f"judged {len(judged)} tasks -> {out or tasks_file}")
    for col in (
        "task",
        "status",
        "consistency (agree/disagree)",
        "difficulty",
        "counterfactual",
        "judge errors",
    ):
        table.add_column(col)
    for tid, r in results.items():
        c, d, p = r["consistency"], r["difficulty"], r["counterfactual"]
        table.add_row(
            tid,
            r["status"],
            f"{c['status']} ({c['agree']}/{c['disagree']})",
            f"{d['level']} ({d['successes']}/{d['attempts']})",
            p["status"],
            str(r["judge_errors"]),
        )
    console.print(table)


def implement_command(
    spec: Annotated[Path, typer.Argument(metavar="SPEC", help="An MCP tool spec (tools/list JSON).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for service.py, manifest.json and report.json.")],
    model: Model = None,
    base_url: BaseUrl = None,
    rounds: Annotated[int, typer.Option("--rounds", help="Rewrites after failing tests.")] = 1,
    seconds: Annotated[float, typer.Option(help="Sandbox wall clock per request (seconds).")] = 5.0,
    cpu_seconds: Annotated[int, typer.Option(help="Sandbox CPU seconds in all.")] = 20,
    memory_mb: Annotated[int, typer.Option(help="Sandbox address space (MB).")] = 768,
    seed: Annotated[int, typer.Option(help="Seed of the compiler's tests and of the service's state.")] = 0,
    timeout: Timeout = 300.0,
    max_tokens: MaxTokens = 4096,
    server_profile: Profile = "auto",
) -> None:
    """A model writes the spec's service in a sandbox; spec-derived tests decide which tools are kept."""
    from compoworld.compiler.implement import Limits, implement

    if not spec.is_file():
        err.print(f"[red]error:[/red] no spec file at {spec}")
        raise typer.Exit(2)
    if seconds <= 0 or cpu_seconds < 1 or memory_mb < 256 or rounds < 0:
        raise typer.BadParameter("need --seconds > 0, --cpu-seconds >= 1, --memory-mb >= 256, --rounds >= 0")
    from compoworld.compiler import load_spec

    try:
        if not load_spec(spec).tools:
            raise ValueError("it lists no tools")
    except Exception as e:  # noqa: BLE001 (not a spec: one line)
        err.print(f"[red]error:[/red] {spec} is not an MCP tool spec: {e}")
        raise typer.Exit(2) from None
    client = _client(base_url, model, timeout, max_tokens, server_profile)
    limits = Limits(seconds=seconds, cpu_seconds=cpu_seconds, memory_mb=memory_mb)

    async def go() -> dict[str, Any]:
        await _reachable(client)
        try:
            return await implement(spec, client, out, limits, seed, rounds)
        finally:
            await client.close()

    summary = asyncio.run(go())
    table = Table(title=f"{summary['service']}: {len(summary['kept'])} tools kept from the model -> {out}")
    table.add_column("tool")
    table.add_column("runs as")
    for name in summary["kept"]:
        table.add_row(name, "sandbox (the model's code, tests passed)")
    for name, status in summary["fallback"].items():
        table.add_row(name, f"{status} (fallback)")
    console.print(table)
    if summary["violation"]:
        v = summary["violation"]
        console.print(f"[red]sandbox refused the module:[/red] {v['cause']}: {v['detail']}")
    for a in summary["attempts"]:
        if a.get("error"):
            console.print(f"attempt: {a['error']}")


def realise_set(tasks: list[Any], model: str) -> list[Any]:
    """`tasks generate --realise-with MODEL`: every instruction rewritten, then held to the gates again."""
    from compoworld.tasks.realise import realise_tasks

    client = _client(None, model, 120.0, 512, "auto")

    async def go() -> tuple[list[Any], dict[str, Any]]:
        await _reachable(client)
        try:
            return await realise_tasks(client, tasks)
        finally:
            await client.close()

    out, summary = asyncio.run(go())
    kept = ", ".join(f"{k} {v}" for k, v in sorted(summary["kept_original"].items())) or "none"
    err.print(
        f"realised {summary['realised']}/{len(tasks)} instructions with {model}; kept the original: {kept}"
    )
    return out
