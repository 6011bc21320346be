"""`compoworld tasks ...`: generate, check and show verified task sets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(help="Generate, check and inspect verified cross-service tasks.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _walk(value: str) -> tuple[int, int]:
    try:
        lo, _, hi = value.partition(":")
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise typer.BadParameter(f"--walk takes MIN:MAX such as 7:12, got {value!r}") from None
    if (a, b) != (0, 0) and not 2 <= a <= b <= 30:
        raise typer.BadParameter("--walk needs 2 <= MIN <= MAX <= 30 (or 0:0 for the generator's own range)")
    return a, b


def _load(file: Path) -> list:
    """The tasks of a file, or one clear line and exit 2 (a missing file, a bad line, an old format)."""
    from compoworld.tasks.model import load_tasks

    try:
        return load_tasks(file)
    except (OSError, ValueError) as e:
        from rich.markup import escape

        err.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _interfaces(value: str | None, k: int) -> tuple[str, ...]:
    if not value:
        return ()
    from compoworld.tasks.generator import INTERFACES

    got = tuple(sorted({x.strip() for x in value.split(",") if x.strip()}))
    bad = [x for x in got if x not in INTERFACES]
    if bad or len(got) < 2:
        raise typer.BadParameter(f"--interfaces takes two or more of {', '.join(INTERFACES)} (got {value!r})")
    if 0 < k < len(got):
        raise typer.BadParameter(f"--k must be at least {len(got)} to cross {len(got)} interfaces")
    return got


def _difficulty(value: str | None, k: int) -> str:
    from compoworld.tasks.compose import TIER_NAMES

    if value is None:
        return ""
    if value not in TIER_NAMES:
        raise typer.BadParameter(f"--difficulty takes {', '.join(TIER_NAMES)} (got {value!r})")
    return value


def _impossible(settings) -> str | None:
    """Why no task can meet `settings`, said before any work starts (else a run would only reject)."""
    from compoworld.tasks.generator import uses_composition, uses_workflows

    if uses_composition(settings):
        return _impossible_composed(settings)
    if settings.world or uses_workflows(settings):
        return None  # workflow families that fit exist (a world's personas are checked per task)
    return "no workflow family fits these settings (see `compoworld tasks families`)"


def _impossible_composed(settings) -> str | None:
    """Composed work: K within what its stages span, a walk that can cover K and revisit one, and
    (with a pool, a world or interfaces) at least one plan inside them."""
    from compoworld.services import registry
    from compoworld.tasks.compose import TIERS
    from compoworld.tasks.themes import themes

    knobs = TIERS[settings.difficulty or ("hard" if settings.k >= 6 else "medium" if settings.k >= 4 else "easy")]
    lo, hi = (settings.walk_min, settings.walk_max) if settings.walk_max else knobs["walk"]
    spans = sorted({s for th in themes() for p in th.plans for s in p.services()})  # every theme's
    ks = [settings.k] if settings.k else list(range(knobs["k"][0], knobs["k"][1] + 1))
    for k in ks:
        if hi < k + 1:
            return (
                f"a walk of at most {hi} steps cannot cover {k} services and revisit one "
                f"(give --walk {max(lo, k + 1)}:{max(hi, k + 3)} or a smaller --k)"
            )
        if settings.pool and k > len(settings.pool):
            return f"--k {k} is more than the {len(settings.pool)} services of --services"
        if k > 7:
            return f"--k {k} is more than the 7 services one piece of composed work joins"
        if k > len(spans):
            return f"--k {k} is more than the {len(spans)} services composed work spans ({', '.join(spans)})"
        if k + settings.distractors > len(registry()):
            return f"--k {k} plus --distractors {settings.distractors} is more than the {len(registry())} services"
    if settings.pool and not set(settings.pool) & set(spans):
        return f"--services: composed work needs some of {', '.join(spans)}"
    if settings.world:  # every task draws a persona: some persona's services must hold a plan
        import random

        from compoworld.tasks.generator import Rejected, _world_index, composed_plans

        personas = _world_index(settings.world)["personas"].values()
        for p in personas:
            try:
                composed_plans(settings, random.Random(0), {*p["services"], "browser"})
                return None
            except Rejected:
                continue
        return (
            f"no persona of --world has the services for composed work at K={settings.k or knobs['k']} "
            f"with a walk in {lo}:{hi}"
            + (f" crossing {','.join(settings.interfaces)}" if settings.interfaces else "")
            + " (try another --k, --difficulty or --walk)"
        )
    return None


@app.command()
def generate(
    n: Annotated[int, typer.Option("--n", help="Number of verified tasks to keep.")] = 100,
    k: Annotated[
        int, typer.Option("--k", help="Services each task walks over (K); 0: each family's own.")
    ] = 0,
    distractors: Annotated[int, typer.Option(help="Distractor services per task (D).")] = 5,
    walk: Annotated[
        str, typer.Option(help="Walk length range MIN:MAX (L); 0:0 is the generator's own.")
    ] = "0:0",
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives byte-identical tasks.")] = 0,
    decoys: Annotated[
        float, typer.Option(help="Decoy density: chance that a relay step gets a near-duplicate decoy.")
    ] = 1.0,
    answer_rate: Annotated[
        float, typer.Option(help="Share of tasks that also ask for a final answer.")
    ] = 0.35,
    size: Annotated[str, typer.Option(help="Seed data size: small, default or large.")] = "small",
    services: Annotated[
        str | None, typer.Option(help="Draw each task's K services from these only (comma-separated).")
    ] = None,
    world: Annotated[
        Path | None,
        typer.Option(
            help="A world of `worlds build` (folder or pack; DIR@DAY: only that day): tasks start from a persona's day."
        ),
    ] = None,
    interfaces: Annotated[
        str | None,
        typer.Option(help="XAI tasks: interfaces every walk crosses, from gui,mcp,cli (and revisits one)."),
    ] = None,
    families: Annotated[
        str | None,
        typer.Option(
            help="Workflow families to draw from, by name or prefix (comma-separated; see `tasks families`)."
        ),
    ] = None,
    difficulty: Annotated[
        str | None,
        typer.Option(
            help="Composed work at a tier: easy, medium or hard (K, L, decisions, aggregates, pagination, "
            "evidence distance; recorded in meta). --k 4 or more composes at medium (6-7: hard) without it."
        ),
    ] = None,
    workers: Annotated[int, typer.Option(help="Worker processes (results do not depend on it).")] = 1,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run on Ray: --ray auto joins this machine's cluster, --ray HOST:PORT another, --ray local "
            "starts one (the output is byte-identical to a local run; needs compoworld\\[ray]).",
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="Output JSONL file.")] = Path("tasks.jsonl"),
    parquet: Annotated[
        Path | None, typer.Option(help="Also write a Parquet export here (needs pyarrow).")
    ] = None,
    target: Annotated[
        Path | None,
        typer.Option(help="Curriculum: weight families by this run directory's failure rates (see --floor)."),
    ] = None,
    schedule: Annotated[
        int,
        typer.Option(
            help="Curriculum: N rounds whose K (and --walk's longest L) grow; --n tasks a round, a file each."
        ),
    ] = 0,
    floor: Annotated[
        float, typer.Option(help="Curriculum: the share of tasks spread evenly over every family (coverage).")
    ] = 0.2,
    realise_with: Annotated[
        str | None,
        typer.Option(
            "--realise-with",
            metavar="MODEL",
            help="Rewrite each instruction in natural language with this model (COMPOWORLD_BASE_URL), gates re-run.",
        ),
    ] = None,
) -> None:
    """Generate N tasks that pass every gate, with a progress bar and a summary."""
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.model import export_parquet, save_tasks
    from compoworld.tasks.pipeline import generate as run

    lo, hi = _walk(walk)
    if n < 1 or k < 0 or distractors < 0 or not 0 <= decoys <= 1 or not 0 <= answer_rate <= 1:
        raise typer.BadParameter(
            "need --n >= 1, --k >= 0, --distractors >= 0, and --decoys, --answer-rate in [0, 1]"
        )
    if size not in ("small", "default", "large"):
        raise typer.BadParameter("--size must be small, default or large")
    settings = Settings(
        k=k,
        distractors=distractors,
        walk_min=lo,
        walk_max=hi,
        decoys=decoys,
        answer_rate=answer_rate,
        size=size,
        pool=tuple(sorted(x.strip() for x in services.split(",") if x.strip())) if services else (),
        interfaces=_interfaces(interfaces, k),
        world=str(world.resolve()) if world else "",
        families=tuple(x.strip() for x in families.split(",") if x.strip()) if families else (),
        difficulty=_difficulty(difficulty, k),
    )
    if settings.families:
        from compoworld.tasks.generator import eligible_families
        from compoworld.tasks.themes import themes

        composed = any(t.family.startswith(f) for t in themes() for f in settings.families)
        if not eligible_families(settings) and not composed:
            raise typer.BadParameter(
                f"--families {families}: no workflow family matches (see `compoworld tasks families`)"
            )
    if world is not None:
        from compoworld.worlds.store import world_index

        try:  # a folder or a pack, its files checked against its digest; DIR@DAY: tasks from that day
            world_index(str(world.resolve()))
        except ValueError as e:
            raise typer.BadParameter(f"--world {world}: {e}") from None
    if (impossible := _impossible(settings)) is not None:
        raise typer.BadParameter(impossible)
    if target is not None or schedule:  # curriculum from failures (tasks/curriculum.py)
        from compoworld.cli.curriculum import generate_curriculum

        if parquet or schedule < 0:
            raise typer.BadParameter("--target/--schedule take no --parquet, and --schedule needs N >= 1")
        return generate_curriculum(n, seed, settings, target, schedule, floor, workers, ray, out, console, err)
    with Progress(
        TextColumn("[bold]generating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as bar:
        job = bar.add_task("tasks", total=n)
        try:
            tasks, stats = run(
                n, seed, settings, workers, on_progress=lambda d: bar.advance(job, d), ray_address=ray
            )
        except RuntimeError as e:
            err.print(f"[red]error:[/red] {e}")
            raise typer.Exit(2) from None
    if realise_with:  # the model-driven realiser (tasks/realise.py); the offline default is unchanged
        from compoworld.cli.models import realise_set

        tasks = realise_set(tasks, realise_with)
    save_tasks(tasks, out)
    if parquet:
        export_parquet(tasks, parquet)
    s = stats.summary()
    table = Table(title=f"{s['kept']} verified tasks -> {out}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("kept", str(s["kept"]))
    for gate, count in sorted(s["rejected"].items()):
        table.add_row(f"rejected: {gate}", str(count))
    table.add_row("distinct service sets", str(s["distinct_service_sets"]))
    table.add_row("distinct move sequences", str(s["distinct_move_sequences"]))
    table.add_row("tasks per second", f"{s['tasks_per_second']}")
    console.print(table)


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="A JSONL task file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
    regenerate: Annotated[
        bool, typer.Option(help="Also regenerate each task from its seed and compare bytes.")
    ] = True,
) -> None:
    """Re-run every gate on every task; exit 1 if any task fails."""
    from compoworld.tasks.gates import GATES, run_gates

    tasks = _load(file)
    from compoworld.services import INTERFACES, registry

    missing = sorted({s for t in tasks for s in t.services + t.distractors} - set(registry()) - INTERFACES)
    if missing:
        err.print(
            f"[red]error:[/red] the tasks use services that are not loaded: {', '.join(missing)} "
            "(compiled services need --manifests PATH or COMPOWORLD_MANIFESTS)"
        )
        raise typer.Exit(2)
    from compoworld.tasks.adversaries import ADVERSARIES

    failures: dict[str, dict[str, str]] = {}
    counts = dict.fromkeys([*GATES, *(f"adversary:{a}" for a in ADVERSARIES)], 0)
    # the attack suite per family: tasks, and how many of them each adversary / attack got through
    by_family: dict[str, dict[str, int]] = {}
    with Progress(
        TextColumn("[bold]checking"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal or as_json,
    ) as bar:
        job = bar.add_task("tasks", total=len(tasks))
        for t in tasks:
            result = run_gates(t, regenerate=regenerate)
            bad = {g: why for g, why in result.items() if why}
            name = str(t.meta.get("family") or t.meta.get("generator") or "chain")
            fam = by_family.setdefault(name, {"tasks": 0})
            fam["tasks"] += 1
            for g in bad:
                counts[g] += 1
                if g.startswith("adversary:"):
                    fam[g.split(":", 1)[1]] = fam.get(g.split(":", 1)[1], 0) + 1
            if bad:
                failures[t.id] = bad
            bar.advance(job)
    summary = {
        "tasks": len(tasks),
        "passed": len(tasks) - len(failures),
        "failed": len(failures),
        "failures_by_gate": counts,
        "adversaries_by_family": by_family,
        "failures": failures,
    }
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        console.print(f"{summary['passed']}/{summary['tasks']} tasks pass every gate")
        table = Table(title="gates and adversaries")
        table.add_column("gate / adversary")
        table.add_column("tasks passing", justify="right")
        table.add_column("failing", justify="right")
        for g, n in counts.items():
            label = f"{g.split(':', 1)[1]} gets V = 0" if g.startswith("adversary:") else g
            table.add_row(label, str(len(tasks) - n), str(n))
        console.print(table)
        fams = Table(title=f"attack suite by family ({len(ADVERSARIES)} adversaries and attacks a task)")
        fams.add_column("family")
        fams.add_column("tasks", justify="right")
        fams.add_column("attacks held", justify="right")
        fams.add_column("attacks that passed")
        for name, f in sorted(by_family.items()):
            passed = {a: n for a, n in f.items() if a != "tasks"}
            held = f["tasks"] * len(ADVERSARIES) - sum(passed.values())
            got = ", ".join(f"{a} {n}" for a, n in passed.items()) or "none"
            fams.add_row(name, str(f["tasks"]), str(held), got)
        console.print(fams)
        for tid, bad in list(failures.items())[:20]:
            for g, why in bad.items():
                console.print(f"  [red]{tid}[/red] {g}: {why}")
    raise typer.Exit(1 if failures else 0)


@app.command()
def export(
    file: Annotated[Path, typer.Argument(help="A task file (JSONL, optionally .gz).")],
    out: Annotated[Path, typer.Argument(help="Where to write the tasks (JSONL; .gz compresses).")],
    full: Annotated[
        bool,
        typer.Option(
            "--full/--compact",
            help="--full: every task carries its whole initial state (self-contained, ~100x larger); "
            "--compact: the initial state as a patch on its seeded base world (the default file form).",
        ),
    ] = False,
) -> None:
    """Rewrite a task file, with self-contained initial states (--full) or compact ones."""
    from compoworld.tasks.model import save_tasks

    tasks = _load(file)
    save_tasks(tasks, out, full=full)
    size = out.stat().st_size
    console.print(
        f"{len(tasks)} tasks -> {out} ({'full' if full else 'compact'}, {size / 1e6:.2f} MB, "
        f"{size / max(len(tasks), 1) / 1e3:.1f} KB a task)"
    )


@app.command()
def show(
    file: Annotated[Path, typer.Argument(help="A JSONL task file.")],
    id: Annotated[str | None, typer.Option("--id", help="Task id (default: the first).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole task as JSON.")] = False,
) -> None:
    """Print one task readably: walk and graph, instruction, rubric, reference solution (nothing cut:
    long checks and arguments wrap); --json prints the task as data."""

    tasks = _load(file)
    task = next((t for t in tasks if t.id == id), None) if id else (tasks[0] if tasks else None)
    if task is None:
        err.print(f"[red]error:[/red] no task {id!r} in {file}")
        raise typer.Exit(2)
    if as_json:
        sys.stdout.write(json.dumps(task.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
        return
    console.print(
        Panel(
            task.instruction, title=f"{task.id}  (K={task.meta['K']}, L={task.meta['L']}, D={task.meta['D']})"
        )
    )
    console.print(
        f"[bold]services[/bold] {', '.join(task.services)}   [bold]distractors[/bold] {', '.join(task.distractors)}"
    )
    console.print(
        "[bold]walk[/bold]  "
        + " -> ".join(f"{n.service}.{n.move}{'*' if n.mutates else ''}" for n in task.dependency_graph.nodes)
    )
    for e in task.dependency_graph.edges:
        console.print(f"  step {e.source} -> {e.target}: {e.fact.type} = {e.fact.value}")
    rub = Table(title="rubric")
    for col in ("id", "kind", "weight", "description", "check"):
        rub.add_column(col, overflow="fold")  # long ids and JSON wrap; nothing is cut
    for r in task.rubric:
        # escaped: JSON such as "values": [false] is data, not Rich markup
        check = escape(json.dumps(r.check, ensure_ascii=False))
        rub.add_row(r.id, r.kind, str(r.weight), escape(r.description), check)
    console.print(rub)
    if task.traps:
        console.print("[bold]traps[/bold] " + "; ".join(f"{t.kind}: {t.description}" for t in task.traps))
    ref = Table(title="reference solution")
    for col in ("turn", "step", "tool", "arguments", "sources"):
        ref.add_column(col, overflow="fold")
    for c in task.reference_solution:
        ref.add_row(
            str(c.turn),
            str(c.step),
            c.tool,
            escape(json.dumps(c.arguments, ensure_ascii=False)),
            ", ".join(f"{k}<-{v}" for k, v in c.sources.items()),
        )
    console.print(ref)
    if task.answer is not None:
        console.print(f"[bold]answer[/bold] {task.answer}")
    console.print(f"[bold]hint[/bold] {task.hint}")


@app.command()
def audit(
    file: Annotated[Path, typer.Argument(help="A JSONL task file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
    oldest: Annotated[
        bool,
        typer.Option("--oldest", hidden=True, help="No-op: the oldest-candidate solver always runs."),
    ] = False,
) -> None:
    """Run lazy solvers that never follow the chain (act on every candidate, on the most recent,
    on the oldest, on the first listed, on the best keyword match) and report how often each
    passes; exit 1 if any passes 5% or more."""
    from compoworld.tasks.adversaries import SOLVERS, solve_lazily

    del oldest  # kept so older scripts that pass --oldest still run
    tasks = _load(file)
    if not tasks:
        err.print(f"[red]error:[/red] {file} holds no tasks")
        raise typer.Exit(2)
    totals = dict.fromkeys(SOLVERS, 0.0)
    passed_by: dict[str, list[str]] = {s: [] for s in SOLVERS}
    with Progress(
        TextColumn("[bold]auditing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal or as_json,
    ) as bar:
        job = bar.add_task("tasks", total=len(tasks))
        for t in tasks:
            for s, p in solve_lazily(t).items():
                if s not in totals:
                    continue
                totals[s] += p
                if p > 0:
                    passed_by[s].append(t.id)
            bar.advance(job)
    from compoworld.tasks.shape import shape

    rates = {s: round(totals[s] / len(tasks), 4) for s in SOLVERS}
    summary = {"tasks": len(tasks), "pass_rate": rates, "passed": passed_by, "shape": shape(tasks)}
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        table = Table(title=f"lazy solvers on {len(tasks)} tasks")
        table.add_column("solver")
        table.add_column("pass rate", justify="right")
        table.add_column("tasks passed (some)")
        for s in SOLVERS:
            table.add_row(s, f"{100 * rates[s]:.1f}%", ", ".join(passed_by[s][:4]))
        console.print(table)
        shp = Table(title="shape of the set")
        shp.add_column("figure")
        shp.add_column("value", justify="right")
        for k, v in summary["shape"].items():
            shp.add_row(k, str(v))
        console.print(shp)
    raise typer.Exit(1 if any(r >= 0.05 for r in rates.values()) else 0)


@app.command()
def stats(
    file: Annotated[Path, typer.Argument(help="A JSONL task file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
) -> None:
    """Distributions of a set's depth (K, D, L, reference calls, decisions, aggregates, writes,
    revisits, interface switches, instruction words, tiers) beside the papers' figures, and how
    many planted records label themselves wrong."""
    from compoworld.tasks.shape import PAPERS, depth

    tasks = _load(file)
    if not tasks:
        err.print(f"[red]error:[/red] {file} holds no tasks")
        raise typer.Exit(2)
    d = depth(tasks)
    if as_json:
        sys.stdout.write(json.dumps(d, indent=2) + "\n")
        return
    table = Table(title=f"depth of {len(tasks)} tasks in {file}")
    for col in ("figure", "min", "p10", "median", "mean", "p90", "max", "papers"):
        table.add_column(col, justify="right" if col not in ("figure", "papers") else "left")
    for key, v in d.items():
        if isinstance(v, dict) and "median" in v:
            table.add_row(key, *(str(v[x]) for x in ("min", "p10", "median", "mean", "p90", "max")), PAPERS.get(key, ""))
    console.print(table)
    for key in ("generators", "tiers"):
        console.print(f"[bold]{key}[/bold] " + ", ".join(f"{k}: {n}" for k, n in d[key].items()))
    for key in ("share_L_7_12", "revisit_share", "share_writes_3plus_services", "interface_revisit"):
        if key in d:
            console.print(f"[bold]{key}[/bold] {100 * d[key]:.1f}%   {PAPERS.get(key.replace('share_', ''), '')}")
    console.print(f"[bold]labelled planted records[/bold] {d['labelled_records']}")
    for line in d["labelled_examples"]:
        console.print(f"  {line}")


@app.command("families")
def list_families(
    compiled: Annotated[
        bool,
        typer.Option(
            "--compiled",
            help="Per compiled service of the loaded manifests: its families, or per resource why it has none.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the families as JSON.")] = False,
) -> None:
    """List the workflow families: name, domain, services (names are never cut: copy them into --families)."""
    from compoworld.tasks.families import families

    if as_json and not compiled:
        rows = [
            {"family": f.name, "domain": f.domain, "services": list(f.services), "summary": f.summary or ""}
            for f in sorted(families().values(), key=lambda f: f.name)
        ]
        typer.echo(json.dumps(rows, indent=1, ensure_ascii=False))
        return

    if compiled:
        from collections import Counter

        from compoworld.tasks.families.compiled import coverage

        cov = coverage()
        if not cov:
            err.print("[red]error:[/red] no compiled service is loaded (pass --manifests DIR)")
            raise typer.Exit(2)
        if as_json:
            have = sum(1 for c in cov.values() if c["families"])
            out = {"services": len(cov), "with_families": have, "coverage": cov}
            typer.echo(json.dumps(out, indent=1, ensure_ascii=False))
            return
        table = Table(title="compiled services: families, or why none")
        for col in ("service", "families", "resources without a family: cause"):
            table.add_column(col)
        tally: Counter = Counter()
        for name, c in cov.items():
            tally.update(c["causes"].values())
            causes = "; ".join(f"{r}: {why}" for r, why in sorted(c["causes"].items()))
            table.add_row(name, ", ".join(c["families"]) or "-", causes[:300])
        console.print(table)
        have = sum(1 for c in cov.values() if c["families"])
        console.print(f"{have}/{len(cov)} compiled services have families")
        top = Table(title="causes, by resources")
        top.add_column("cause")
        top.add_column("resources", justify="right")
        for why, n in tally.most_common(25):
            top.add_row(why, str(n))
        console.print(top)
        return
    table = Table(title="workflow families")
    table.add_column("family", no_wrap=True, overflow="fold", min_width=max(len(n) for n in families()))
    for col in ("domain", "services", "what"):
        table.add_column(col)
    for f in sorted(families().values(), key=lambda f: f.name):
        table.add_row(
            f.name, f.domain, ", ".join(f.services), f.summary.splitlines()[0][:70] if f.summary else ""
        )
    console.print(table)


@app.command()
def examples(
    out: Annotated[Path, typer.Option(help="Markdown file to write.")] = Path("docs/tasks.md"),
    n: Annotated[int, typer.Option("--n", help="Examples: one per group of families.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the set the examples come from.")] = 0,
) -> None:
    """Write readable example tasks (instruction, hint, subtasks, rubric), one per group of families."""
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate as run

    tasks, _ = run(max(3 * n, 60), seed, Settings())
    chosen: dict[str, object] = {}
    for t in tasks:  # one per family first, spread across work domains
        chosen.setdefault(t.meta["family"], t)
    by_domain: dict[str, list] = {}
    for t in chosen.values():
        by_domain.setdefault(t.meta["work_domain"], []).append(t)
    picked = []
    while len(picked) < n and any(by_domain.values()):
        for d in sorted(by_domain):
            if by_domain[d] and len(picked) < n:
                picked.append(by_domain[d].pop(0))
    lines = [
        "# Example tasks",
        "",
        f"{len(picked)} tasks of a default set (`compoworld tasks generate --seed {seed}`), one per group of",
        "workflow families. Each passed every gate and adversary. Regenerate this page with",
        f"`compoworld tasks examples --n {n} --seed {seed} --out {out}`.",
        "",
    ]
    for t in picked:
        lines += [
            f"## {t.meta['family']} ({t.meta['work_domain']})",
            "",
            f"Services: {', '.join(t.services)}; walk: {' -> '.join(t.walk)}; "
            f"traps: {', '.join(tr.kind for tr in t.traps)}",
            "",
            "**Instruction**",
            "",
            *[f"> {line}" for line in t.instruction.splitlines()],
            "",
            f"**Hint.** {t.hint}",
            "",
            "**Subtasks**",
            "",
            *[f"{i}. {s}" for i, s in enumerate(t.subtasks, 1)],
            "",
            "**Rubric**",
            "",
            *[f"- *{r.kind}*: {r.description}" for r in t.rubric],
            "",
        ]
        if t.answer:
            lines += [f"**Expected answer:** {t.answer}", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    console.print(f"wrote {len(picked)} examples to {out}")
