"""Inline SVG: the walk as a graph, and grouped bar charts (no script, no network)."""

from __future__ import annotations

from html import escape
from typing import Any

PALETTE = ("#2f6fdf", "#e07b24", "#2a9d6b", "#b04ad3", "#c23b4e", "#6b7a8f")


def walk_graph(nodes: list[Any], edges: list[Any]) -> str:
    """Steps left to right, one lane per service; an edge is a fact one step hands the next."""
    if not nodes:
        return "<p class='muted'>no walk recorded</p>"
    lanes: list[str] = []
    for n in nodes:
        if n.service not in lanes:
            lanes.append(n.service)
    dx, dy, w, h, left, top = 170, 64, 150, 40, 110, 24
    width = left + dx * len(nodes) + 20
    height = top + dy * len(lanes) + 30
    pos = {n.step: (left + dx * i, top + dy * lanes.index(n.service)) for i, n in enumerate(nodes)}
    parts = [
        f"<svg class='walk' role='img' aria-label='walk over {len(lanes)} services in {len(nodes)} steps' "
        f"viewBox='0 0 {width} {height}' width='{width}' height='{height}' xmlns='http://www.w3.org/2000/svg'>",
        "<defs><marker id='arr' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' markerHeight='7' "
        "orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' fill='#7a8699'/></marker></defs>",
    ]
    for i, s in enumerate(lanes):
        y = top + dy * i + h / 2
        parts.append(f"<text class='lane' x='6' y='{y + 4}'>{escape(s)}</text>")
        parts.append(f"<line x1='{left - 10}' y1='{y}' x2='{width - 10}' y2='{y}' class='laneline'/>")
    for a, b in zip(nodes, nodes[1:], strict=False):  # the walk's order
        (x1, y1), (x2, y2) = pos[a.step], pos[b.step]
        parts.append(
            f"<line class='order' x1='{x1 + w}' y1='{y1 + h / 2}' x2='{x2}' y2='{y2 + h / 2}' "
            "marker-end='url(#arr)'/>"
        )
    for e in edges:  # information dependencies: curved above the nodes, labelled with the fact
        if e.source not in pos or e.target not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e.source], pos[e.target]
        mx, my = (x1 + x2 + w) / 2, min(y1, y2) - 14
        label = f"{e.fact.type}: {e.fact.value}"
        parts.append(
            f"<path class='dep' d='M{x1 + w / 2},{y1} Q{mx},{my - 20} {x2 + w / 2},{y2}' marker-end='url(#arr)'>"
            f"<title>{escape(label)}</title></path>"
        )
    for n in nodes:
        x, y = pos[n.step]
        cls = "node mut" if n.mutates else "node"
        move = n.move if len(n.move) <= 22 else n.move[:21] + "…"
        parts.append(
            f"<g class='{cls}' data-step='{n.step}'><title>step {n.step}: {escape(n.service)}.{escape(n.move)}"
            f"{' (writes)' if n.mutates else ''}</title>"
            f"<rect x='{x}' y='{y}' width='{w}' height='{h}' rx='7'/>"
            f"<text x='{x + 8}' y='{y + 16}' class='step'>{n.step}{' ✎' if n.mutates else ''}</text>"
            f"<text x='{x + 8}' y='{y + 32}'>{escape(move)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(
    title: str,
    groups: list[str],
    series: list[tuple[str, list[float | None]]],
    note: dict[str, str] | None = None,
) -> str:
    """Horizontal grouped bars in [0, 1]: one row per group, one bar per series, each with its value
    written beside it (and as data- attributes, so the figure can be read back)."""
    bar, gap, label_w, plot_w = 14, 10, 190, 360
    row_h = bar * len(series) + gap
    height = 34 + row_h * len(groups) + 24
    width = label_w + plot_w + 70
    parts = [
        f"<svg class='chart' role='img' aria-label='{escape(title)}' data-title='{escape(title)}' "
        f"viewBox='0 0 {width} {height}' width='{width}' height='{height}' xmlns='http://www.w3.org/2000/svg'>",
        f"<text class='ctitle' x='0' y='14'>{escape(title)}</text>",
    ]
    for i, (name, _) in enumerate(series):  # legend
        x = label_w + i * 110
        parts.append(
            f"<rect x='{x}' y='4' width='10' height='10' fill='{PALETTE[i % len(PALETTE)]}'/>"
            f"<text class='legend' x='{x + 14}' y='13'>{escape(name)}</text>"
        )
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        x = label_w + plot_w * t
        parts.append(f"<line class='grid' x1='{x}' y1='26' x2='{x}' y2='{height - 20}'/>")
        parts.append(f"<text class='tick' x='{x - 8}' y='{height - 6}'>{t:g}</text>")
    for gi, g in enumerate(groups):
        y0 = 30 + gi * row_h
        label = g if len(g) <= 28 else g[:27] + "…"
        extra = f" ({note[g]})" if note and g in note else ""
        parts.append(
            f"<text class='glabel' x='0' y='{y0 + row_h / 2}'><title>{escape(g + extra)}</title>{escape(label)}</text>"
        )
        for si, (name, vals) in enumerate(series):
            v = vals[gi]
            y = y0 + si * bar
            color = PALETTE[si % len(PALETTE)]
            if v is None:
                parts.append(f"<text class='val' x='{label_w + 4}' y='{y + bar - 3}'>—</text>")
                continue
            parts.append(
                f"<g class='bar' data-group='{escape(g)}' data-series='{escape(name)}' data-value='{v:.4f}'>"
                f"<title>{escape(g)} · {escape(name)}: {v:.3f}</title>"
                f"<rect x='{label_w}' y='{y}' width='{max(plot_w * v, 1):.1f}' height='{bar - 2}' fill='{color}'/>"
                f"<text class='val' x='{label_w + plot_w * v + 4:.1f}' y='{y + bar - 3}'>{v:.2f}</text></g>"
            )
    parts.append("</svg>")
    return "".join(parts)


def count_bars(title: str, counts: dict[str, int], colors: dict[str, str] | None = None) -> str:
    """One horizontal bar per class, its count beside it."""
    items = list(counts.items())
    top = max([c for _, c in items] or [1]) or 1
    label_w, plot_w, bar = 150, 320, 20
    height = 24 + len(items) * (bar + 6) + 6
    parts = [
        f"<svg class='chart counts' role='img' aria-label='{escape(title)}' data-title='{escape(title)}' "
        f"viewBox='0 0 {label_w + plot_w + 60} {height}' width='{label_w + plot_w + 60}' height='{height}' "
        "xmlns='http://www.w3.org/2000/svg'>",
        f"<text class='ctitle' x='0' y='14'>{escape(title)}</text>",
    ]
    for i, (name, c) in enumerate(items):
        y = 22 + i * (bar + 6)
        color = (colors or {}).get(name, PALETTE[i % len(PALETTE)])
        parts.append(
            f"<g class='bar' data-group='{escape(name)}' data-value='{c}'>"
            f"<text class='glabel' x='0' y='{y + 14}'>{escape(name)}</text>"
            f"<rect x='{label_w}' y='{y}' width='{max(plot_w * c / top, 1):.1f}' height='{bar}' fill='{color}'/>"
            f"<text class='val' x='{label_w + plot_w * c / top + 4:.1f}' y='{y + 14}'>{c}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)
