"""`compoworld worlds ...`: build, check and show persona worlds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(help="Persona worlds: replayable days of a person's work.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


@app.command()
def build(
    personas: Annotated[int, typer.Option(help="Number of personas.")] = 10,
    days: Annotated[int, typer.Option(help="Days per persona.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same worlds.")] = 0,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("worlds"),
    model: Annotated[
        str | None, typer.Option(help="Let this model propose personas and plans (optional).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Its OpenAI-compatible endpoint (or COMPOWORLD_BASE_URL).")
    ] = None,
) -> None:
    """Generate personas, live their days, keep the days two separate replays agree on."""
    from compoworld.worlds import build_world, make_personas

    if personas < 1 or not 1 <= days <= 25:
        raise typer.BadParameter("need --personas >= 1 and 1 <= --days <= 25")
    try:
        people, dupes = make_personas(seed, personas)
    except ValueError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    if model:
        from compoworld.llm.client import LLMConfig
        from compoworld.worlds.propose import propose

        try:
            config = LLMConfig.from_env(base_url, model)
        except ValueError as e:
            err.print(f"[red]error:[/red] {e}")
            raise typer.Exit(2) from None
        people, notes = propose(people, days, config)
        for n in notes:
            err.print(f"[yellow]{n}[/yellow]")
    with Progress(
        TextColumn("[bold]building"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as bar:
        job = bar.add_task("personas", total=len(people))
        summary = build_world(people, seed, days, out, on_progress=lambda n: bar.advance(job, n))
    table = Table(title=f"{len(summary['personas'])} personas x {days} days -> {out}")
    for col in ("persona", "name", "occupation", "records by day", "files by day"):
        table.add_column(col)
    for p in summary["personas"]:
        table.add_row(
            p["id"],
            p["name"],
            p["occupation"],
            " ".join(map(str, p["records"])),
            " ".join(map(str, p["files"])),
        )
    console.print(table)
    console.print(f"near-duplicate personas rejected: {dupes}; rejected worlds: {len(summary['rejected'])}")
    for r in summary["rejected"]:
        console.print(f"  [red]{r['persona']}[/red] day {r['day']} {r['activity']}: {r['why']}")
    raise typer.Exit(1 if summary["rejected"] else 0)


@app.command()
def check(folder: Annotated[Path, typer.Argument(help="A folder written by `worlds build`.")]) -> None:
    """Replay every persona and day from its seed and compare with the stored hashes."""
    from compoworld.worlds import check_world

    if not (folder / "world.json").is_file():
        err.print(f"[red]error:[/red] {folder} has no world.json (build it with `compoworld worlds build`)")
        raise typer.Exit(2)
    problems = check_world(folder)
    meta = json.loads((folder / "world.json").read_text())
    n = len(meta["personas"]) * meta["days"]
    console.print(f"{n - len(problems)}/{n} persona-days replay to their stored hashes")
    for p in problems:
        console.print(f"  [red]{p}[/red]")
    raise typer.Exit(1 if problems else 0)


@app.command()
def show(
    folder: Annotated[Path, typer.Argument(help="A folder written by `worlds build`.")],
    persona: Annotated[str, typer.Option(help="Persona id, e.g. p000.")] = "p000",
    day: Annotated[int, typer.Option(help="Day number.")] = 1,
) -> None:
    """Print a persona and what happened on one day."""
    pdir = folder / persona
    dfile = pdir / f"day{day}.json"
    if not dfile.is_file():
        err.print(f"[red]error:[/red] no day {day} for persona {persona} in {folder}")
        raise typer.Exit(2)
    p = json.loads((pdir / "persona.json").read_text())
    d = json.loads(dfile.read_text())
    console.print(f"[bold]{p['name']}[/bold], {p['occupation']} at {p['employer']} ({p['email']})")
    console.print(f"uses: {', '.join(p['services'])}; habits: {'; '.join(p['habits'])}")
    for s in p["stories"]:
        console.print(
            f"  story {s['id']}: {s['kind'].replace('_', ' ')} with {s['customer']} ({s['contact_name']}, {s['code']})"
        )
    console.print(f"[bold]day {day}[/bold]  state {d['hash']}")
    for a in d["activities"]:
        console.print(f"  - {a['skill']} ({a['story']}): {a['summary']}", markup=False)
    console.print("records: " + ", ".join(f"{k} {v}" for k, v in d["counts"].items()))
