"""`compoworld spec ...` (compile MCP specs into services) and `compoworld worldmodel ...`."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="Compile real MCP tool specs into executable services.", no_args_is_help=True)
worldmodel_app = typer.Typer(help="The LLM world model for tools code cannot do.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


@app.command("compile")
def compile_command(
    spec: Annotated[
        Path, typer.Argument(help="MCP tool list (tools/list JSON or the mcp-specs corpus format).")
    ],
    out: Annotated[Path, typer.Option(help="Where to write the service manifest (JSON).")],
    name: Annotated[str | None, typer.Option(help="Service name (default: from the file name).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the adversarial tests.")] = 0,
) -> None:
    """Compile one spec; print per tool: compiled, quarantined (why) or simulated (why)."""
    from compoworld.compiler import compile_spec

    if not spec.is_file():
        err.print(f"[red]error:[/red] no spec file at {spec}")
        raise typer.Exit(2)
    m = compile_spec(spec, name, seed)
    bad = [d["detail"] for d in m["defects"] if d.get("kind") == "bad_spec"]
    if bad or not m["tools"]:  # not a spec (a README, a config): say so, and write no manifest
        why = bad[0] if bad else "it lists no tools"
        err.print(
            f"[red]error:[/red] {spec} is not an MCP tool spec: {why} "
            '(expected a tools/list result: {"tools": [...]} or a JSON list of tools)'
        )
        raise typer.Exit(2)
    width = max(len(t["name"]) for t in m["tools"])
    lines = [f"{m['service']}: {len(m['tools'])} tools from {spec.name}"]
    for t in m["tools"]:  # one plain line per tool: greppable, never truncated
        op = t["op"]
        what = f"{op['kind']} {op.get('resource', '')}".strip()
        why = f"  ({t['cause']}: {t['reason']})" if t["status"] != "compiled" else ""
        lines.append(f"  {t['name']:<{width}}  {t['status']:<11}  {what}{why}")
    sys.stdout.write("\n".join(lines) + "\n")
    c = Counter(t["status"] for t in m["tools"])
    console.print(
        f"compiled {c['compiled']}, quarantined {c['quarantined']}, simulated {c['simulated']}; "
        f"{len(m['resources'])} resources; {len(m['defects'])} spec defects normalised"
    )
    _write_json(out, m)
    console.print(f"manifest -> {out}")


@app.command("report")
def report_command(
    folder: Annotated[Path, typer.Argument(help="A folder of spec files (*.json).")],
    out: Annotated[Path | None, typer.Option(help="Also write each manifest into this folder.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable totals.")] = False,
    recursive: Annotated[
        bool, typer.Option("--recursive", "-r", help="Also the specs in subfolders.")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the adversarial tests.")] = 0,
) -> None:
    """Compile every spec in FOLDER and give the totals, with the causes of what did not compile."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from compoworld.compiler import compile_spec
    from compoworld.compiler.compiler import unique_service_names
    from compoworld.core.environment import NAME_RE

    files = sorted(folder.rglob("*.json") if recursive else folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        err.print(
            f"[red]error:[/red] no *.json specs in {folder}" + ("" if recursive else " (try --recursive)")
        )
        raise typer.Exit(2)
    from compoworld.compiler.compiler import blind_list, meaningful

    rows, causes, defects = [], Counter(), Counter()
    lists = blind = 0
    bad_names: list[str] = []
    from compoworld.compiler.runtime import CompiledService
    from compoworld.services import registry

    hand_built = {n for n, c in registry().items() if not issubclass(c, CompiledService)}
    service_names = unique_service_names(files, hand_built)
    with Progress(
        TextColumn("[bold]compile"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as bar:
        job = bar.add_task("compile", total=len(files))
        manifests = []
        for f in files:
            bar.update(job, advance=1)
            try:
                manifests.append((f, compile_spec(f, service_names[f], seed)))
            except Exception as e:  # a spec never stops the report
                rows.append({"spec": str(f.relative_to(folder)), "error": f"{type(e).__name__}: {e}"})
    for f, m in manifests:
        for t in m["tools"]:
            full = f"{m['service']}__{t['name']}"
            if not NAME_RE.match(full) or "__" in t["name"]:
                bad_names.append(full)
        c = Counter(t["status"] for t in m["tools"])
        flags = [blind_list(t) for t in m["tools"]]
        lists += sum(x is not None for x in flags)
        blind += sum(x is True for x in flags)
        rows.append(
            {
                "spec": str(f.relative_to(folder)),
                "service": m["service"],
                "tools": len(m["tools"]),
                **{k: c[k] for k in ("compiled", "quarantined", "simulated")},
                "meaningful": sum(meaningful(t, m) for t in m["tools"]),
                "excluded": len(m.get("excluded", [])),
            }
        )
        for e in m.get("excluded", []):
            causes[f"excluded: {e['cause']}"] += 1
        for t in m["tools"]:
            if t["status"] != "compiled":
                causes[f"{t['status']}: {t.get('cause') or 'unknown'}"] += 1
        defects.update(d["kind"] for d in m["defects"])
        if out is not None:
            _write_json(out / f"{m['service']}.json", m)
    total = sum(r.get("tools", 0) for r in rows)
    compiled = sum(r.get("compiled", 0) for r in rows)
    excluded = sum(r.get("excluded", 0) for r in rows)
    crashes = [r for r in rows if "error" in r]
    summary = {
        "specs": len(files),
        "services": len(files) - len(crashes),
        "crashes": len(crashes),
        "invalid_names": len(bad_names),
        "tools": total,
        "compiled": compiled,
        "quarantined": sum(r.get("quarantined", 0) for r in rows),
        "simulated": sum(r.get("simulated", 0) for r in rows),
        "excluded": excluded,
        "entries": total + excluded,
        "meaningful": (useful := sum(r.get("meaningful", 0) for r in rows)),
        # compiled over state that means something (records with content, or computations)
        "meaningful_share": round(useful / total, 4) if total else 0.0,
        "compiled_share": round(compiled / total, 4) if total else 0.0,  # of the operations (tools served)
        "lists_with_filters": lists,
        "lists_every_filter_unsupported": blind,
        "blind_list_share": round(blind / lists, 4) if lists else 0.0,
        "compiled_share_of_entries": round(compiled / (total + excluded), 4) if total + excluded else 0.0,
        "causes": dict(causes.most_common()),
        "defects": dict(defects.most_common()),
        "per_spec": rows,
    }
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    table = Table(title=f"{len(files)} specs, {total} tools")
    for col in ("spec", "service", "tools", "compiled", "quarantined", "simulated"):
        table.add_column(col, justify="left" if col in ("spec", "service") else "right")
    for r in rows:
        if "error" in r:
            table.add_row(r["spec"], f"[red]{r['error']}[/red]", "", "", "", "")
        else:
            table.add_row(
                r["spec"],
                r["service"],
                *(str(r[k]) for k in ("tools", "compiled", "quarantined", "simulated")),
            )
    console.print(table)
    console.print(
        f"compiled with meaningful state: {useful}/{total} operations "
        f"({100 * summary['meaningful_share']:.1f}%); compiled at all: {compiled}/{total} "
        f"({100 * summary['compiled_share']:.1f}%); lists with every filter unsupported: {blind}/{lists} "
        f"({100 * summary['blind_list_share']:.1f}%)"
    )
    console.print(
        f"compiled and passing the adversarial tests: {compiled}/{total} operations "
        f"({100 * summary['compiled_share']:.1f}%); {compiled}/{total + excluded} of all spec entries "
        f"({100 * summary['compiled_share_of_entries']:.1f}%), {excluded} entries excluded as no operation; "
        f"{len(crashes)} crashes; {len(bad_names)} tool names invalid for OpenAI or MCP"
    )
    for cause, n in causes.most_common():
        console.print(f"  {n:4d}  {cause}")
    console.print(
        "spec defects normalised: " + (", ".join(f"{k} {v}" for k, v in defects.most_common()) or "none")
    )


@worldmodel_app.command("fidelity")
def fidelity_command(
    services: Annotated[str, typer.Option(help="Services whose real tools are compared (comma-separated).")],
    calls: Annotated[int, typer.Option("--calls", help="Random valid calls to make.")] = 100,
    tools: Annotated[str | None, typer.Option(help="Only these tools (comma-separated, namespaced).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (or COMPOWORLD_MODEL).")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (or COMPOWORLD_BASE_URL).")
    ] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (or COMPOWORLD_API_KEY).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the world and of the call draw.")] = 0,
    size: Annotated[str, typer.Option(help="World size: small, default or large.")] = "small",
    timeout: Annotated[float, typer.Option(help="Seconds per world-model request.")] = 60.0,
    max_tokens: Annotated[int, typer.Option(help="Completion cap of each proposal.")] = 1024,
    retries: Annotated[int, typer.Option(help="Retries of a failed request (5xx, 429, connection).")] = 2,
    server_profile: Annotated[
        str, typer.Option(help="auto, generic, openai, vllm, sglang, llamacpp or ollama.")
    ] = "auto",
    out: Annotated[Path, typer.Option(help="Folder for fidelity.json and fidelity.md.")] = Path(
        "runs/fidelity"
    ),
    cache: Annotated[
        Path | None, typer.Option(help="Proposal cache (JSONL); default: OUT/cache.jsonl.")
    ] = None,
) -> None:
    """Run the world model in place of real tools on N random valid calls; report agreement per tool
    and the prompt sizes. Fails (exit 1) when the endpoint cannot be reached or never answers."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from compoworld.core.environment import Environment
    from compoworld.llm.client import LLMConfig
    from compoworld.worldmodel.fidelity import FidelityError, measure, render
    from compoworld.worldmodel.simulator import WorldModel

    if calls < 1:
        raise typer.BadParameter("--calls must be at least 1")
    if max_tokens < 1 or timeout <= 0 or retries < 0:
        raise typer.BadParameter("--max-tokens and --timeout must be positive, --retries at least 0")
    try:
        config = LLMConfig.from_env(
            base_url, model, api_key, timeout=timeout, max_retries=retries, profile=server_profile
        )
        env = Environment(
            services=[s.strip() for s in services.split(",") if s.strip()], seed=seed, size=size
        )
    except (KeyError, ValueError) as e:
        err.print(f"[red]error:[/red] {e.args[0] if e.args else e}")
        raise typer.Exit(2) from None
    wm = WorldModel(config, cache or out / "cache.jsonl", max_tokens=max_tokens)
    piped = not err.is_terminal
    step = max(1, calls // 10)
    try:
        if not wm.cache:  # with no cache to replay, an endpoint that is not there fails at once
            why = wm.probe()
            if why is not None:
                err.print(f"[red]error:[/red] {why}; no fidelity figures (check --base-url)", soft_wrap=True)
                raise typer.Exit(1)
        err.print(
            f"fidelity: {calls} calls over {', '.join(env.services)} against {config.model} at "
            f"{config.base_url} (timeout {timeout}s, max_tokens {max_tokens})"
        )
        with Progress(
            TextColumn("[bold]fidelity"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=err,
            disable=piped,
        ) as bar:
            job = bar.add_task("fidelity", total=calls, info="")
            done = [0]

            def progress(n: int, m: WorldModel) -> None:
                done[0] += n
                info = f"{m.calls} model calls, {m.cache_hits} cached, {m.failures} failed"
                bar.update(job, advance=n, info=info)
                if piped and (done[0] % step == 0 or done[0] == calls):  # piped: a line now and then
                    err.print(f"fidelity: {done[0]}/{calls} calls ({info})")

            report = measure(
                env,
                wm,
                calls,
                seed,
                [t.strip() for t in tools.split(",")] if tools else None,
                on_progress=progress,
            )
    except KeyError as e:
        err.print(f"[red]error:[/red] {e.args[0]}")
        raise typer.Exit(2) from None
    except FidelityError as e:
        err.print(f"[red]error:[/red] {e}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        wm.close()
    _write_json(out / "fidelity.json", report)
    (out / "fidelity.md").write_text(render(report), encoding="utf-8")
    console.print(render(report))
    console.print(f"report -> {out}/fidelity.json, {out}/fidelity.md")
