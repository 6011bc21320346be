"""A run's report: Markdown with PNG plots (score by walk length, pass rate by domain, turns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compoworld.rollout.metrics import breakdown, summarize


def write_report(
    run_dir: str | Path, config: dict[str, Any], episodes: list[dict[str, Any]]
) -> tuple[dict[str, Any], Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = Path(run_dir)
    summary = summarize(episodes, config["k"])
    by = {key: breakdown(episodes, key) for key in ("domains", "services", "K", "L")}
    plots = {}
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ls = sorted(by["L"], key=lambda x: float(x) if x not in ("None",) else -1)
    ax.bar(ls, [by["L"][x]["mean_score"] for x in ls], color="#4a7bb7")
    ax.set(xlabel="walk length L", ylabel="mean score", ylim=(0, 1), title="Score by walk length")
    plots["score_by_walk_length"] = _save(fig, d / "score_by_walk_length.png")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    doms = list(by["domains"])
    ax.barh(doms, [by["domains"][x]["pass_rate"] for x in doms], color="#5a9e6f")
    ax.set(xlabel="pass rate (V = 1)", xlim=(0, 1), title="Pass rate by domain")
    plots["pass_rate_by_domain"] = _save(fig, d / "pass_rate_by_domain.png")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    turns = [e["turns"] for e in episodes]
    ax.hist(turns, bins=range(0, max(turns + [1]) + 2), color="#b76e4a")
    ax.set(xlabel="turns per episode", ylabel="episodes", title="Distribution of turns")
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
    lines += ["", "## Plots", ""] + [f"![{name}]({path.name})" for name, path in plots.items()]
    out = d / "report.md"
    out.write_text("\n".join(lines) + "\n")
    return {**summary, "by": by}, out


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
