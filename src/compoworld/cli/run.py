"""`compoworld eval`, `compoworld report` and `compoworld export`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

console = Console()
err = Console(stderr=True)
export_app = typer.Typer(help="Export datasets for trainers.", no_args_is_help=True)


def _fail(msg: str) -> None:
    err.print(f"[red]error:[/red] {msg}")
    raise typer.Exit(2)


def eval_command(
    tasks: Annotated[Path, typer.Option(help="JSONL task file.")],
    out: Annotated[Path, typer.Option(help="Run directory (runs/NAME); an existing run is resumed.")],
    agent: Annotated[
        str | None, typer.Option(help="Built-in agent: oracle or noop (no endpoint needed).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model name at the endpoint (or COMPOWORLD_MODEL).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible base URL (or COMPOWORLD_BASE_URL).")
    ] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (or COMPOWORLD_API_KEY).")] = None,
    k: Annotated[int, typer.Option(help="Samples per task.")] = 1,
    concurrency: Annotated[int, typer.Option(help="Episodes at once.")] = 8,
    mode: Annotated[
        str, typer.Option(help="direct (namespaced tools) or gateway (4 meta-tools).")
    ] = "direct",
    max_turns: Annotated[int, typer.Option(help="Turn limit per episode.")] = 40,
    max_tokens: Annotated[int, typer.Option(help="Token budget per episode.")] = 200_000,
    timeout: Annotated[float, typer.Option(help="Seconds per request to the endpoint.")] = 120.0,
    episode_timeout: Annotated[float, typer.Option(help="Seconds per episode, all turns included.")] = 1800.0,
    limit: Annotated[int | None, typer.Option(help="Only the first N tasks.")] = None,
) -> None:
    """Run k samples per task with C concurrent episodes; resumable; records rewards for every episode."""
    from compoworld.agents.policies import LLMAgent, NoopAgent, OracleAgent
    from compoworld.llm.client import LLMClient, LLMConfig
    from compoworld.rollout.runner import RunConfig, file_sha, run_eval
    from compoworld.tasks.model import load_tasks

    if mode not in ("direct", "gateway"):
        _fail("--mode must be direct or gateway")
    if k < 1 or concurrency < 1:
        _fail("--k and --concurrency must be at least 1")
    try:
        task_list = load_tasks(tasks)
    except (OSError, ValueError) as e:
        _fail(str(e))
    if limit is not None:
        task_list = task_list[:limit]
    client = None
    if agent is not None:
        if agent not in ("oracle", "noop"):
            _fail("--agent must be oracle or noop (or give --model and --base-url)")
        policy = OracleAgent() if agent == "oracle" else NoopAgent()
    else:
        try:
            config = LLMConfig.from_env(base_url, model, api_key, timeout=timeout)
        except ValueError as e:
            _fail(f"{e}; or pass --agent oracle|noop")
        client = LLMClient(config)
        policy = LLMAgent(client)
    cfg = RunConfig(
        tasks_file=str(tasks),
        tasks_sha=file_sha(tasks),
        agent=policy.name,
        k=k,
        mode=mode,
        max_turns=max_turns,
        max_tokens=max_tokens,
        episode_timeout=episode_timeout,
    )

    async def main() -> dict:
        with Progress(
            TextColumn("[bold]episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            disable=not err.is_terminal,
        ) as bar:
            job = bar.add_task("eval", total=len(task_list) * k)
            try:
                return await run_eval(
                    task_list, policy, cfg, out, concurrency, on_progress=lambda d: bar.advance(job, d)
                )
            finally:
                if client is not None:
                    await client.close()

    try:
        counts = asyncio.run(main())
    except ValueError as e:
        _fail(str(e))
    console.print(f"ran {counts['ran']} episode(s), {counts['skipped']} already done -> {out}")
    _print_summary(out)


def _print_summary(run_dir: Path) -> dict:
    from compoworld.rollout.metrics import summarize
    from compoworld.rollout.runner import load_run

    cfg, episodes, _ = load_run(run_dir)
    s = summarize(episodes, cfg["k"])
    table = Table(title=f"{run_dir}: {cfg['agent']} ({cfg['mode']}), k={cfg['k']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, val in s.items():
        table.add_row(key, json.dumps(val) if isinstance(val, dict) else str(val))
    console.print(table)
    return s


def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
) -> None:
    """Print pass@k, pass^k, mean score and error classes, broken down by domain, service, K and L; write report.md with plots."""
    from compoworld.rollout.report import write_report
    from compoworld.rollout.runner import load_run

    try:
        cfg, episodes, _ = load_run(run_dir)
    except FileNotFoundError as e:
        _fail(str(e))
    if not episodes:
        _fail(f"{run_dir} has no finished episodes yet")
    summary, path = write_report(run_dir, cfg, episodes)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    _print_summary(run_dir)
    for key in ("domains", "K", "L"):
        t = Table(title=f"by {key}")
        for col in (key, "episodes", "pass rate", "mean score"):
            t.add_column(col)
        for v, s in summary["by"][key].items():
            t.add_row(v, str(s["episodes"]), str(s["pass_rate"]), str(s["mean_score"]))
        console.print(t)
    console.print(f"report: {path}")


@export_app.command("sft")
def export_sft_command(
    runs: Annotated[Path, typer.Option(help="Run directory.")],
    out: Annotated[Path, typer.Option(help="Output JSONL.")],
    format: Annotated[str, typer.Option(help="openai or trl.")] = "openai",
    min_score: Annotated[float, typer.Option(help="Keep episodes scoring at least this.")] = 1.0,
) -> None:
    """Conversations of good episodes, one a line: messages plus tools."""
    from compoworld.export.sft import export_sft
    from compoworld.rollout.runner import load_run

    if format not in ("openai", "trl"):
        _fail("--format must be openai or trl")
    try:
        _, episodes, _ = load_run(runs)
    except FileNotFoundError as e:
        _fail(str(e))
    n = export_sft(episodes, out, format, min_score)
    console.print(f"wrote {n} conversation(s) ({format}) -> {out}")


@export_app.command("rl")
def export_rl_command(
    tasks: Annotated[Path, typer.Option(help="JSONL task file.")],
    out: Annotated[Path, typer.Option(help="Output Parquet file.")],
    format: Annotated[str, typer.Option(help="verl or trl.")] = "verl",
    mode: Annotated[str, typer.Option(help="direct or gateway tools.")] = "direct",
) -> None:
    """Prompts plus everything the reward needs, as verl or TRL read their datasets."""
    from compoworld.export.rl import export_rl
    from compoworld.tasks.model import load_tasks

    if format not in ("verl", "trl"):
        _fail("--format must be verl or trl")
    try:
        task_list = load_tasks(tasks)
    except (OSError, ValueError) as e:
        _fail(str(e))
    n = export_rl(task_list, out, format, mode)
    console.print(f"wrote {n} prompt(s) ({format}) -> {out}")
