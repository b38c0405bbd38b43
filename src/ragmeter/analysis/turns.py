"""Scores by turn index (1, 2, 3+) and standalone vs non-standalone turns.

Single-turn numbers overstate conversational assistants: errors concentrate in later turns
and in questions that only make sense with the earlier ones (Katsis et al. 2025, MTRAG).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragmeter.core.sample import Sample


def bucket(turn: int) -> str:
    return str(turn) if turn < 3 else "3+"


def _standalone(sample: Sample, row: dict) -> bool | None:
    if "standalone" in sample.metadata:
        return bool(sample.metadata["standalone"])
    cell = row["metrics"].get("standalone_question")
    if cell and cell["status"] == "scored":
        return cell["value"] == 1.0
    return True if sample.metadata.get("turn") == 1 else None


def by_turn(samples: Sequence[Sample], rows: Sequence[dict]) -> dict:
    """{"turns": {bucket: {metric: {mean, n}}}, "standalone": {group: {metric: {mean, n}}}}."""
    by_id = {s.id: s for s in samples}
    turns: dict[str, dict[str, list[float]]] = {}
    groups: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        s = by_id.get(row["id"])
        if s is None or "turn" not in s.metadata:
            continue
        b = bucket(int(s.metadata["turn"]))
        alone = _standalone(s, row)
        g = {True: "standalone", False: "non-standalone", None: "unknown"}[alone]
        for metric, cell in row["metrics"].items():
            if cell["status"] == "scored" and metric != "standalone_question":
                turns.setdefault(b, {}).setdefault(metric, []).append(cell["value"])
                groups.setdefault(g, {}).setdefault(metric, []).append(cell["value"])

    def summary(d):
        return {k: {m: {"mean": math.fsum(v) / len(v), "n": len(v)} for m, v in ms.items()} for k, ms in d.items()}

    order = sorted(turns, key=lambda b: (b == "3+", b))
    return {"turns": {b: summary(turns)[b] for b in order}, "standalone": summary(groups)}


def svg_plot(table: dict, width: int = 520, height: int = 260) -> str:
    """A line per metric over turn buckets 1, 2, 3+ (self-contained SVG)."""
    buckets = list(table["turns"])
    metrics = sorted({m for b in buckets for m in table["turns"][b]})
    colors = ["#4c6ef5", "#e8590c", "#2b8a3e", "#ae3ec9", "#c92a2a", "#1098ad", "#5c940d", "#d6336c"]
    pad, inner_w, inner_h = 40, width - 160, height - 60
    x = {b: pad + (i * inner_w / max(1, len(buckets) - 1)) for i, b in enumerate(buckets)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11">', f'<line x1="{pad}" y1="{20 + inner_h}" x2="{pad + inner_w}" y2="{20 + inner_h}" '
             f'stroke="#999"/>', f'<line x1="{pad}" y1="20" x2="{pad}" y2="{20 + inner_h}" stroke="#999"/>']
    for b in buckets:
        parts.append(f'<text x="{x[b]:.0f}" y="{height - 20}" text-anchor="middle">turn {b}</text>')
    for i, m in enumerate(metrics):
        pts = [(x[b], 20 + inner_h * (1 - table["turns"][b][m]["mean"])) for b in buckets if m in table["turns"][b]]
        color = colors[i % len(colors)]
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" '
                     f'points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in pts)}"/>')
        parts.append(f'<text x="{pad + inner_w + 10}" y="{30 + 14 * i}" fill="{color}">{_xml(m)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _xml(text: str) -> str:
    import html

    return html.escape(text)
