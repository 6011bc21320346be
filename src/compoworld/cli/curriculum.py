"""`tasks generate --target RUN_DIR / --schedule N`: the curriculum's command-line side."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import typer
from rich.console import Console
from rich.table import Table


def run_failures(run_dir: Path, err: Console) -> tuple[Any, int]:
    """The failure table of a run directory, its task metas read from the run's task file."""
    from compoworld.rollout.runner import file_sha, load_run
    from compoworld.tasks.curriculum import failure_table

    try:
        config, episodes, _ = load_run(run_dir)
    except (FileNotFoundError, json.JSONDecodeError) as e:
        err.print(f"[red]error:[/red] --target {run_dir}: {e}", soft_wrap=True)
        raise typer.Exit(2) from None
    if not episodes:
        err.print(f"[red]error:[/red] --target {run_dir}: the run has no finished episodes", soft_wrap=True)
        raise typer.Exit(2)
    metas: dict[str, dict[str, Any]] = {}
    name = Path(config.get("tasks_file") or "")
    found = None
    for cand in [name, run_dir.parent / name, run_dir / name.name] if str(name) else []:
        if cand.is_file() and (not config.get("tasks_sha") or file_sha(cand) == config["tasks_sha"]):
            found = cand
            break
    if found is None:
        err.print(
            f"[yellow]note:[/yellow] {run_dir}'s task file {str(name)!r} is not found (or changed since the run): "
            "families are weighted by their services and K only"
        )
    else:
        from compoworld.tasks.model import unpack_line

        opener = gzip.open if found.suffix == ".gz" else open
        with opener(found, "rb") as f:
            for line in f:
                if line.strip():
                    d = unpack_line(orjson.loads(line))
                    metas[d["id"]] = d.get("meta") or {}
    return failure_table(episodes, metas), len(episodes)


def generate_curriculum(
    n: int,
    seed: int,
    settings: Any,
    target: Path | None,
    schedule: int,
    floor: float,
    workers: int,
    ray: str | None,
    out: Path,
    console: Console,
    err: Console,
) -> None:
    from compoworld.tasks.curriculum import generate_plan, plan
    from compoworld.tasks.model import save_tasks

    table = None
    if target is not None:
        table, episodes = run_failures(target, err)
        err.print(f"weighting by {episodes} episodes of {target}")
    try:
        p = plan(n, settings, table, floor, max(schedule, 1), str(target) if target else None)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]generating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as bar:
        job = bar.add_task("tasks", total=n * len(p.rounds))
        try:
            rounds = generate_plan(p, seed, settings, workers, lambda d: bar.advance(job, d), ray)
        except RuntimeError as e:
            err.print(f"[red]error:[/red] {e}", soft_wrap=True)
            raise typer.Exit(2) from None
    paths = []
    for r, (tasks, _) in zip(p.rounds, rounds, strict=True):
        path = out if len(p.rounds) == 1 else out.with_name(f"{out.stem}.round{r.index}{out.suffix}")
        save_tasks(tasks, path)
        paths.append(path)
    summary = p.summary()
    for s, (_, stats), path in zip(summary["rounds"], rounds, paths, strict=True):
        s["out"], s["kept"], s["rejected"] = str(path), stats.kept, dict(stats.rejected)
    out.with_name(out.stem + ".curriculum.json").write_text(json.dumps(summary, indent=2))
    for s in summary["rounds"]:
        table_ = Table(
            title=f"round {s['round']}/{len(summary['rounds'])}: {s['kept']} tasks -> {s['out']} "
            f"(K <= {s['max_k']}{', walk ' + ':'.join(map(str, s['walk'])) if s['walk'][1] else ''})"
        )
        for col in ("family", "failure rate", "weight", "tasks"):
            table_.add_column(col, justify="left" if col == "family" else "right")
        for fam, c in sorted(s["made"].items(), key=lambda kv: -kv[1]):
            table_.add_row(fam, f"{summary['failure_rates'][fam]:.2f}", f"{s['weights'][fam]:.3f}", str(c))
        console.print(table_)
        for fam, why in s["skipped"].items():
            err.print(
                f"[yellow]note:[/yellow] round {s['round']}: {fam} made no more tasks: {why}", soft_wrap=True
            )
    for dim in ("K", "difficulty"):  # the knobs' failure rates in the run, as the priors used them
        vals = summary["knobs"].get(dim) or {}
        if vals:
            rates = ", ".join(f"{v}: {x['failure_rate']:.2f} ({x['episodes']})" for v, x in vals.items())
            console.print(f"failure rate by {dim} (episodes): {rates}", soft_wrap=True)
    console.print(f"weights and failure rates -> {out.with_name(out.stem + '.curriculum.json')}")
