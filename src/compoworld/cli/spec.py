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
    from compoworld.spec import compile_spec

    if not spec.is_file():
        err.print(f"[red]error:[/red] no spec file at {spec}")
        raise typer.Exit(2)
    m = compile_spec(spec, name, seed)
    table = Table(title=f"{m['service']}: {len(m['tools'])} tools from {spec.name}")
    for col in ("tool", "status", "operation", "why"):
        table.add_column(col)
    for t in m["tools"]:
        op = t["op"]
        what = f"{op['kind']} {op.get('resource', '')}".strip()
        color = {"compiled": "green", "quarantined": "yellow", "simulated": "cyan"}[t["status"]]
        table.add_row(t["name"], f"[{color}]{t['status']}[/{color}]", what, t.get("reason", ""))
    console.print(table)
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
) -> None:
    """Compile every spec in FOLDER and give the totals, with the causes of what did not compile."""
    from compoworld.spec import compile_spec

    files = sorted(p for p in folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        err.print(f"[red]error:[/red] no *.json specs in {folder}")
        raise typer.Exit(2)
    rows, causes, defects = [], Counter(), Counter()
    names: Counter[str] = Counter()
    for f in files:
        try:
            m = compile_spec(f)
        except Exception as e:  # a spec never stops the report
            rows.append({"spec": f.name, "error": f"{type(e).__name__}: {e}"})
            continue
        names[m["service"]] += 1
        if names[m["service"]] > 1:
            m["service"] = f"{m['service']}_{names[m['service']]}"
        c = Counter(t["status"] for t in m["tools"])
        rows.append(
            {
                "spec": f.name,
                "service": m["service"],
                "tools": len(m["tools"]),
                **{k: c[k] for k in ("compiled", "quarantined", "simulated")},
            }
        )
        for t in m["tools"]:
            if t["status"] != "compiled":
                causes[f"{t['status']}: {t.get('cause') or 'unknown'}"] += 1
        defects.update(d["kind"] for d in m["defects"])
        if out is not None:
            _write_json(out / f"{m['service']}.json", m)
    total = sum(r.get("tools", 0) for r in rows)
    compiled = sum(r.get("compiled", 0) for r in rows)
    summary = {
        "specs": len(files),
        "tools": total,
        "compiled": compiled,
        "quarantined": sum(r.get("quarantined", 0) for r in rows),
        "simulated": sum(r.get("simulated", 0) for r in rows),
        "compiled_share": round(compiled / total, 4) if total else 0.0,
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
        f"compiled and passing the adversarial tests: {compiled}/{total} ({100 * summary['compiled_share']:.1f}%)"
    )
    for cause, n in causes.most_common():
        console.print(f"  {n:4d}  {cause}")
    console.print(
        "spec defects normalised: " + (", ".join(f"{k} {v}" for k, v in defects.most_common()) or "none")
    )
