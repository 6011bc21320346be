"""`compoworld worlds ...`: build, check, report, show, pack and unpack persona worlds."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(help="Persona worlds: replayable days of a person's work.", no_args_is_help=True)
# piped output (a log, a CI step) gets the report's columns whole, not cut at 80
console = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 140)
err = Console(stderr=True)
SIZES = ("small", "default", "large")
MAX_DAYS = 120

# What WildAWM reports about its worlds (as issue 31 states them): printed beside ours.
WILDAWM = {
    "personas": "dozens",
    "cumulative states": "hundreds",
    "final state": "tens of MiB (many database records and local files)",
    "last day": "more sites and services touched than on an average day",
}


def _use(manifests: str | None) -> None:
    if manifests:
        from compoworld.compiler.library import use_manifests

        try:
            use_manifests(manifests)
        except (FileNotFoundError, ValueError, RuntimeError) as e:
            raise _fail(f"--manifests: {e}") from None


def _fail(msg: str, code: int = 2) -> typer.Exit:
    err.print(f"[red]error:[/red] {msg}", markup=True, highlight=False)
    return typer.Exit(code)


@app.command()
def build(
    personas: Annotated[int, typer.Option(help="Number of personas.")] = 10,
    days: Annotated[int, typer.Option(help=f"Days per persona (1..{MAX_DAYS}).")] = 5,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same worlds.")] = 0,
    size: Annotated[
        str, typer.Option(help="small | default | large: the company and the daily volume.")
    ] = "small",
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("worlds"),
    workers: Annotated[int, typer.Option(help="Processes for the two replays of each persona.")] = 2,
    manifests: Annotated[
        str | None,
        typer.Option(
            help="Compiled services (manifest files or folders): personas keep records in one that fits."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Let this model propose personas and plans (optional).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Its OpenAI-compatible endpoint (or COMPOWORLD_BASE_URL).")
    ] = None,
) -> None:
    """Generate personas, live their days, keep the days two separate replays agree on."""
    from compoworld.worlds import build_world, make_personas

    if personas < 1 or not 1 <= days <= MAX_DAYS:
        raise typer.BadParameter(f"need --personas >= 1 and 1 <= --days <= {MAX_DAYS}")
    if size not in SIZES:
        raise typer.BadParameter(f"--size {size!r}: expected one of {', '.join(SIZES)}")
    if workers < 1:
        raise typer.BadParameter("--workers must be at least 1")
    if out.exists() and not out.is_dir():
        raise _fail(f"--out {out} exists and is not a folder")
    _use(manifests)
    try:
        people, dupes = make_personas(seed, personas, size=size)
    except ValueError as e:
        raise _fail(str(e)) from None
    if model:
        from compoworld.llm.client import LLMConfig
        from compoworld.worlds.propose import propose

        try:
            config = LLMConfig.from_env(base_url, model)
        except ValueError as e:
            raise _fail(str(e)) from None
        people, notes = propose(people, days, config, size)
        for n in notes:
            err.print(f"[yellow]{n}[/yellow]")
    with Progress(
        TextColumn("[bold]building (2 replays a persona)"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as bar:
        job = bar.add_task("replays", total=2 * len(people))
        summary = build_world(
            people, seed, days, out, on_progress=lambda n: bar.advance(job, n), size=size, workers=workers
        )
    table = Table(title=f"{len(summary['personas'])} personas x {days} days ({size}) -> {out}")
    for col in ("persona", "name", "occupation", "events by day", "MiB at the end"):
        table.add_column(col)
    for p in summary["personas"]:
        ev = [d["events"] for d in p["days"]]
        table.add_row(
            p["id"],
            p["name"],
            p["occupation"],
            " ".join(map(str, ev))
            if len(ev) <= 12
            else f"{' '.join(map(str, ev[:6]))} ... {' '.join(map(str, ev[-3:]))}",
            f"{p['days'][-1]['bytes'] / 2**20:.2f}",
        )
    console.print(table)
    _print_report(summary, out)
    console.print(
        f"near-duplicate personas rejected: {dupes}; near-duplicate day plans redrawn: "
        f"{sum(d['redrawn'] for p in summary['personas'] for d in p['days'])}; rejected worlds: {len(summary['rejected'])}"
    )
    for r in summary["rejected"]:
        console.print(
            f"  [red]{r['persona']}[/red] day {r['day']} {r['activity']}: {r['why']}", highlight=False
        )
    raise typer.Exit(1 if summary["rejected"] else 0)


def _print_report(meta: dict, where: Path) -> None:
    from compoworld.worlds.report import world_report

    rep = world_report(meta)
    t = Table(title=f"world {meta.get('name', where.name)} (digest {meta['digest']}): per day, over personas")
    for col in (
        "day",
        "date",
        "events (mean)",
        "state MiB (mean)",
        "build s (mean)",
        "replay s (mean)",
        "services touched",
    ):
        t.add_column(col, justify="right")
    for row in rep["days"]:
        t.add_row(
            str(row["day"]),
            row["date"],
            f"{row['events']:.0f}",
            f"{row['mib']:.2f}",
            f"{row['build_s']:.3f}",
            f"{row['replay_s']:.3f}",
            f"{row['services']:.1f}",
        )
    console.print(t)
    s = rep["summary"]
    console.print(
        f"last day vs mean day: events {s['last_events']:.0f} vs {s['mean_events']:.0f} "
        f"({s['events_ratio']:.2f}x), services touched {s['last_services']:.1f} vs {s['mean_services']:.1f} "
        f"({s['services_ratio']:.2f}x), build {s['last_build_s']:.3f}s vs {s['mean_build_s']:.3f}s"
    )
    console.print(
        f"build time per event: first third of the days {s['us_per_event_early']:.0f} us, last third "
        f"{s['us_per_event_late']:.0f} us ({s['flat_ratio']:.2f}x; flat = a day costs its events, not the history)"
    )
    c = Table(title="beside WildAWM")
    for col in ("", "this world", "WildAWM (as issue 31 states it)"):
        c.add_column(col)
    c.add_row("personas", str(s["personas"]), WILDAWM["personas"])
    c.add_row(
        "cumulative states (persona-days, each double-replayed)",
        str(s["states"]),
        WILDAWM["cumulative states"],
    )
    c.add_row(
        "final state",
        f"{s['final_mib_median']:.1f} MiB median ({s['final_mib_min']:.1f}-{s['final_mib_max']:.1f})",
        WILDAWM["final state"],
    )
    c.add_row(
        "last day",
        f"{s['events_ratio']:.2f}x the mean day's events, {s['services_ratio']:.2f}x its services",
        WILDAWM["last day"],
    )
    console.print(c)


@app.command()
def report(
    folder: Annotated[Path, typer.Argument(help="A world folder or pack.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """State size, events and build time per day, and the last day against the mean, beside WildAWM's."""
    from compoworld.worlds.report import world_report
    from compoworld.worlds.store import open_world

    try:
        w = open_world(folder)
    except ValueError as e:
        raise _fail(str(e)) from None
    if json_out:
        console.print_json(json.dumps(world_report(w.meta)))
        return
    _print_report(w.meta, folder)


@app.command()
def check(
    folder: Annotated[Path, typer.Argument(help="A world folder or pack written by `worlds build`.")],
    manifests: Annotated[str | None, typer.Option(help="The compiled services it was built with.")] = None,
) -> None:
    """Check every file against the world's digest, replay every persona and day from its seed,
    and compare each day with its stored file."""
    from compoworld.worlds import check_world
    from compoworld.worlds.store import open_world

    _use(manifests)

    try:
        w = open_world(folder)
    except ValueError as e:
        raise _fail(str(e)) from None
    bad = w.verify()
    problems = bad or check_world(folder)
    n = len(w.meta["personas"]) * w.meta["days"]
    bad_days = {p.split(":")[0] for p in problems}
    console.print(
        f"{n - min(n, len(bad_days))}/{n} persona-days replay to their stored hashes (digest {w.digest})"
    )
    for p in problems:
        console.print("  " + p, style="red", highlight=False, markup=False)
    raise typer.Exit(1 if problems else 0)


@app.command()
def show(
    folder: Annotated[Path, typer.Argument(help="A world folder or pack written by `worlds build`.")],
    persona: Annotated[str, typer.Option(help="Persona id, e.g. p000.")] = "p000",
    day: Annotated[int, typer.Option(help="Day number.")] = 1,
) -> None:
    """Print a persona and what happened on one day."""
    from compoworld.worlds.store import open_world

    try:
        w = open_world(folder)
        p = w.persona(persona)
        d = w.day(persona, day)
    except (ValueError, KeyError, FileNotFoundError):
        raise _fail(f"no day {day} for persona {persona} in {folder}") from None
    console.print(f"[bold]{p.name}[/bold], {p.occupation} at {p.employer} ({p.email})")
    console.print(f"uses: {', '.join(p.services)}; habits: {'; '.join(p.habits)}")
    for s in d["ledger"]["stories"]:
        state = f"closed day {s['closed']}" if s.get("closed") else f"stage {s['stage']}/{s['stages']}"
        console.print(
            f"  story {s['id']}: {s['kind'].replace('_', ' ')} with {s['customer']} ({s['contact_name']}, {s['code']}), "
            f"opened day {s['opened']}, {state}",
            highlight=False,
        )
    console.print(
        f"[bold]day {day}[/bold] ({d['date']})  state {d['hash']}  events {d['events']}  {d['bytes'] / 2**20:.2f} MiB"
    )
    for a in d["activities"]:
        console.print(
            f"  - {a['skill']} ({a.get('story', '')}): {a['summary']} [{a['events']} events]", markup=False
        )
    console.print("services written: " + ", ".join(d["services_touched"]))


@app.command("pack")
def pack_cmd(
    folder: Annotated[Path, typer.Argument(help="A world folder written by `worlds build`.")],
    out: Annotated[
        Path | None, typer.Option(help="The pack file (default: FOLDER.cwworld beside it).")
    ] = None,
) -> None:
    """Pack a world folder into one file (every file checked against the digest first)."""
    from compoworld.worlds.store import PACK, pack

    dest = out or folder.with_name(folder.name + PACK)
    try:
        digest, n = pack(folder, dest)
    except ValueError as e:
        raise _fail(str(e)) from None
    console.print(f"packed {folder} -> {dest} ({n / 2**20:.1f} MiB, digest {digest})")


@app.command()
def unpack(
    pack_file: Annotated[Path, typer.Argument(help="A .cwworld file written by `worlds pack`.")],
    out: Annotated[
        Path | None, typer.Option(help="The folder (default: the pack's name without .cwworld).")
    ] = None,
) -> None:
    """Unpack a world pack into a folder (every file checked against the digest)."""
    from compoworld.worlds.store import PACK, unpack

    dest = out or pack_file.with_name(pack_file.name.removesuffix(PACK))
    try:
        digest = unpack(pack_file, dest)
    except ValueError as e:
        raise _fail(str(e)) from None
    console.print(f"unpacked {pack_file} -> {dest} (digest {digest})")
