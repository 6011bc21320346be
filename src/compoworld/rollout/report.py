"""A run's report: Markdown with PNG plots (score by walk length and by K, pass rate by domain,
outcome classes, turns), each bar labelled with its value and episode count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compoworld.rollout.metrics import breakdown, summarize


def hint_comparison(runs: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    """Per family: pass rate and mean score of each hint mode among `runs` ((config, episodes)
    pairs; `eval --hints` records the mode in both), and the hinted minus unhinted pass rate."""
    acc: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for cfg, eps in runs:
        for e in eps:
            mode = e.get("hints") or cfg.get("hints", "none")
            acc.setdefault(str(e.get("family") or "?"), {}).setdefault(mode, []).append(e)
    out: dict[str, dict[str, Any]] = {}
    for fam in sorted(acc):
        row: dict[str, Any] = {}
        for mode, es in sorted(acc[fam].items()):
            row[mode] = {
                "episodes": len(es),
                "pass_rate": round(sum(e["V"] for e in es) / len(es), 4),
                "mean_score": round(sum(e["score"] for e in es) / len(es), 4),
            }
        hinted = [m for m in row if m != "none"]
        if "none" in row and hinted:
            row["delta"] = round(row[hinted[0]]["pass_rate"] - row["none"]["pass_rate"], 4)
        out[fam] = row
    return out


def write_report(
    run_dir: str | Path,
    config: dict[str, Any],
    episodes: list[dict[str, Any]],
    against: list[tuple[dict[str, Any], list[dict[str, Any]]]] | None = None,
) -> tuple[dict[str, Any], Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = Path(run_dir)
    summary = summarize(episodes, config["k"])
    by = {key: breakdown(episodes, key) for key in ("domains", "services", "K", "L")}
    plots = {}
    ls = sorted(by["L"], key=_num)
    plots["score_by_walk_length"] = _bar_chart(
        plt,
        d / "score_by_walk_length.png",
        "Score by walk length",
        "walk length L",
        "mean score",
        ls,
        [by["L"][x]["mean_score"] for x in ls],
        [by["L"][x]["episodes"] for x in ls],
        "#4a7bb7",
    )
    ks = sorted(by["K"], key=_num)
    plots["score_by_k"] = _bar_chart(
        plt,
        d / "score_by_k.png",
        "Score by K (services per task)",
        "K",
        "mean score",
        ks,
        [by["K"][x]["mean_score"] for x in ks],
        [by["K"][x]["episodes"] for x in ks],
        "#7a5ab7",
    )
    doms = list(by["domains"])
    plots["pass_rate_by_domain"] = _bar_chart(
        plt,
        d / "pass_rate_by_domain.png",
        "Pass rate by domain",
        "domain",
        "pass rate (V = 1)",
        doms,
        [by["domains"][x]["pass_rate"] for x in doms],
        [by["domains"][x]["episodes"] for x in doms],
        "#5a9e6f",
        horizontal=True,
    )
    classes = summary["error_classes"]
    plots["error_classes"] = _bar_chart(
        plt,
        d / "error_classes.png",
        "Episodes by outcome class",
        "class",
        "episodes",
        list(classes),
        list(classes.values()),
        None,
        "#b74a5a",
        horizontal=True,
        share=False,
    )
    fig, ax = plt.subplots(figsize=(6, 3.5))
    turns = [e["turns"] for e in episodes]
    counts, _, bars = ax.hist(turns, bins=range(0, max(turns + [1]) + 2), color="#b76e4a", align="left")
    ax.bar_label(bars, labels=[str(int(c)) if c else "" for c in counts], fontsize=8)
    ax.set(xlabel="turns per episode", ylabel="episodes", title="Distribution of turns")
    if not turns:
        ax.text(0.5, 0.5, "no episodes", transform=ax.transAxes, ha="center", va="center")
    plots["turns"] = _save(fig, d / "turns.png")
    lines = [
        f"# Run report: {d.name}",
        "",
        f"agent `{config['agent']}`, mode `{config['mode']}`, k = {config['k']}, "
        f"tasks `{config['tasks_file']}`",
        "",
        "| metric | value |",
        "|---|---|",
    ]
    for key in (
        "tasks",
        "episodes",
        "pass@1",
        f"pass@{config['k']}",
        "pass^1",
        f"pass^{config['k']}",
        "mean_score",
        "mean_V",
    ):
        if key in summary:
            lines.append(f"| {key} | {summary[key]} |")
    lines += ["", "## Error classes", "", "| class | episodes |", "|---|---|"]
    lines += [f"| {c} | {n} |" for c, n in summary["error_classes"].items()]
    wm = summary.get("world_model_unavailable") or {}
    if wm.get("calls"):  # simulated tools called with no world model: neither the agent's nor a bug
        lines += [
            "",
            f"Simulated tools called with no world model configured (503 world_model_unavailable): "
            f"{wm['calls']} calls in {wm['episodes']} episodes ("
            + ", ".join(f"{t} {n}" for t, n in wm["tools"].items())
            + "); configure one with --world-model and --base-url.",
        ]
    for key, title in (("domains", "domain"), ("services", "service"), ("K", "K"), ("L", "L")):
        lines += [
            "",
            f"## By {title}",
            "",
            f"| {title} | episodes | pass rate | mean score |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {v} | {s['episodes']} | {s['pass_rate']} | {s['mean_score']} |" for v, s in by[key].items()
        ]
    by["family"] = breakdown(episodes, "family")
    hints = hint_comparison([(config, episodes), *(against or [])])
    modes = sorted({m for row in hints.values() for m in row if m != "delta"})
    lines += [
        "",
        "## Hinted and unhinted, by family",
        "",
        "| family | "
        + " | ".join(f"{m}: episodes | {m}: pass rate" for m in modes)
        + " | hinted - unhinted |",
        "|---|" + "---|---|" * len(modes) + "---|",
    ]
    for fam, row in hints.items():
        cells = [f"{row[m]['episodes']} | {row[m]['pass_rate']}" if m in row else "- | -" for m in modes]
        lines.append(f"| {fam} | " + " | ".join(cells) + f" | {row.get('delta', '-')} |")
    lines += ["", "## Plots", ""] + [f"![{name}]({path.name})" for name, path in plots.items()]
    out = d / "report.md"
    out.write_text("\n".join(lines) + "\n")
    return {**summary, "by": by, "hints": hints}, out


def _num(x: str) -> float:
    try:
        return float(x)
    except ValueError:
        return -1.0


def _bar_chart(
    plt: Any,
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    labels: list[str],
    values: list[float],
    counts: list[int] | None,
    color: str,
    horizontal: bool = False,
    share: bool = True,
) -> Path:
    """Bars with their value (and episode count) written on them. A share (0..1) keeps its 0..1
    axis, and a zero is drawn as a visible stub labelled 0.00, so an all-zero run reads as zeros,
    never as an empty chart."""
    fig, ax = plt.subplots(
        figsize=(7 if horizontal else 6, max(2.5, 0.45 * len(labels) + 1.5) if horizontal else 3.5)
    )
    labels = [str(x) for x in labels]
    if not labels:
        ax.text(0.5, 0.5, "no episodes", transform=ax.transAxes, ha="center", va="center")
        ax.set(title=title)
        return _save(fig, path)
    top = 1.0 if share else max([*values, 1])
    stub = [v if v > 0 else top * 0.004 for v in values]
    draw = ax.barh if horizontal else ax.bar
    bars = draw(labels, stub, color=color, edgecolor="#333333", linewidth=0.6)
    text = [
        (f"{v:.2f}" if share else f"{int(v)}") + (f"  (n={n})" if counts is not None else "")
        for v, n in zip(values, counts or [0] * len(values), strict=True)
    ]
    ax.bar_label(bars, labels=text, padding=3, fontsize=8)
    if horizontal:
        ax.set(xlabel=ylabel, ylabel=xlabel, title=title, xlim=(0, top * 1.25))
        ax.invert_yaxis()
    else:
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title, ylim=(0, top * 1.2))
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
