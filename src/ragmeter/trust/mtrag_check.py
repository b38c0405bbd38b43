"""``judge-check --set mtrag-dev``: how a judge's claim metrics rank real answers against people.

The configured judge scores the bundled MTRAG responses (``mtrag_set``) with the claim metrics
the ratings can check:

- ``faithfulness``, ``faithfulness(unsupported='pass')`` and ``-contradiction_rate`` (sign turned so
  that higher is better everywhere) against the median human *faithfulness* rating ("the
  response is faithful and grounded on the context");
- ``factual_correctness(mode='recall')`` (reference claims the response states) against the
  median human *completeness* rating, on the two models' responses only: the third response
  is the reference answer itself, recall 1 by construction, not a measurement.
  ``context_recall`` is not checked: it scores the passages against the reference, the same
  for the three responses of a task, so people's ratings of the responses cannot check it.

Reported per metric: Spearman's rho and Kendall's tau-b against the human rating, each with a
95% percentile bootstrap interval (2,000 draws over tasks, seed 0: a task's responses move
together), beside word-overlap K-Precision (computed here), the paper's Bert-KPrec and RougeL
and the benchmark's LLM judge ``rl_f`` (Bert-Rec and RougeL for completeness) on the very same
responses and draws; the mean score by human rating; and the responses the
metric could not score (no passages were shown, no claims, a failed call): how many, why, and
their human ratings, since a mean without them looks better than the answers were.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.trust.mtrag_set import Rated

DRAWS = 2000


@dataclass(frozen=True)
class Check:
    metric: str  # the measure scored
    label: str  # as printed
    sign: int  # +1, or -1 where lower is better
    rating: str  # faithfulness / completeness
    baselines: tuple[str, ...]
    models_only: bool = False


FAITH_BASELINES = ("K-Precision", "Bert-KPrec", "RougeL", "rl_f")
CHECKS = (
    Check("faithfulness", "faithfulness", 1, "faithfulness", FAITH_BASELINES),
    Check("faithfulness(unsupported='pass')", "faithfulness(unsupported='pass')", 1, "faithfulness",
          FAITH_BASELINES),
    Check("contradiction_rate", "-contradiction_rate", -1, "faithfulness", FAITH_BASELINES),
    Check("factual_correctness(mode='recall')", "factual_correctness(mode='recall')", 1, "completeness",
          ("Bert-Rec", "RougeL"), models_only=True),
)
METRICS = tuple(c.metric for c in CHECKS)


@dataclass
class Row:
    check: Check
    n: int = 0
    spearman: float | None = None
    spearman95: tuple[float, float] | None = None
    kendall: float | None = None
    kendall95: tuple[float, float] | None = None
    baselines: dict = field(default_factory=dict)  # name -> {"spearman", "spearman95", "kendall", "kendall95"}
    mean_by_rating: dict = field(default_factory=dict)
    unscored: dict = field(default_factory=dict)  # reason -> human ratings of the responses left out

    def as_dict(self) -> dict:
        return {"metric": self.check.label, "against": f"median human {self.check.rating}",
                "responses": "the two models' (not the reference answer)" if self.check.models_only else "all",
                "n": self.n, "spearman": _r(self.spearman), "spearman95": _r2(self.spearman95),
                "kendall": _r(self.kendall), "kendall95": _r2(self.kendall95), "beside": self.baselines,
                "mean_by_rating": self.mean_by_rating,
                "not_scored": {reason: {"n": len(h), "human": dict(sorted(Counter(h).items()))}
                               for reason, h in self.unscored.items()}}


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _r2(v: tuple[float, float] | None) -> list[float] | None:
    return None if v is None else [round(v[0], 4), round(v[1], 4)]


def correlations(score: list[float], human: list[float], groups: list[str], *, draws: int = DRAWS,
                 seed: int = 0) -> dict:
    """rho and tau-b with 95% percentile bootstrap intervals over groups (tasks).

    A bootstrap draw resamples tasks with replacement; a response then counts as many times as
    its task was drawn (integer weights w), and both statistics are computed on that weighted
    sample exactly as on the replicated one: average ranks R_i = sum_j w_j [x_j < x_i] +
    (sum_j w_j [x_j = x_i] + 1) / 2, rho = weighted Pearson correlation of the ranks; tau-b =
    S / sqrt((n0 - t_x)(n0 - t_y)) with S = w'Cw / 2 (C_ij = sign(x_i - x_j) sign(y_i - y_j)),
    n0 = N(N - 1) / 2, t_x = (w'E_x w - N) / 2 (E_x: ties in x). Weights all 1 give the point
    estimates (equal to ``spearman`` and ``kendall_tau_b``)."""
    x, y = np.asarray(score, float), np.asarray(human, float)
    keys = list(dict.fromkeys(groups))
    task = np.array([keys.index(g) for g in groups])
    rng = np.random.default_rng(seed)
    counts = np.stack([np.bincount(rng.integers(0, len(keys), size=len(keys)), minlength=len(keys))
                       for _ in range(draws)])
    weights = np.vstack([np.ones(len(x)), counts[:, task]])  # row 0: the sample itself
    rho, tau = _weighted(x, y, weights)
    return {"spearman": _finite(rho[0]), "spearman95": _interval(rho[1:]), "kendall": _finite(tau[0]),
            "kendall95": _interval(tau[1:])}


def _weighted(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Kendall's tau-b for each row of frequency weights ``w`` (draws x n)."""
    sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    ex, ey = (sx == 0).astype(float), (sy == 0).astype(float)
    big_n = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rx = w @ (sx > 0).T.astype(float) + (w @ ex.T + 1) / 2
        ry = w @ (sy > 0).T.astype(float) + (w @ ey.T + 1) / 2
        mx, my = (w * rx).sum(1) / big_n, (w * ry).sum(1) / big_n
        cov = (w * (rx - mx[:, None]) * (ry - my[:, None])).sum(1)
        var_x, var_y = (w * (rx - mx[:, None]) ** 2).sum(1), (w * (ry - my[:, None]) ** 2).sum(1)
        rho = cov / np.sqrt(var_x * var_y)
        s = np.einsum("di,ij,dj->d", w, sx * sy, w) / 2
        n0 = big_n * (big_n - 1) / 2
        tx = (np.einsum("di,ij,dj->d", w, ex, w) - big_n) / 2
        ty = (np.einsum("di,ij,dj->d", w, ey, w) - big_n) / 2
        tau = s / np.sqrt((n0 - tx) * (n0 - ty))
    return rho, tau


def _finite(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def _interval(values: np.ndarray) -> tuple[float, float] | None:
    values = values[np.isfinite(values)]
    return (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))) if len(values) > 10 else None


def score(judge: Any, items: list[Rated], *, progress: Any = None) -> dict[str, dict[str, object]]:
    """Each check's metric on each response, through ``judge`` (one claim matrix per response)."""
    from ragmeter.engine.evaluate import evaluate

    result = evaluate([i.sample() for i in items], list(METRICS), judge=judge, progress=progress)
    return {m: {i.id: result.outcome(m, i.id) for i in items} for m in METRICS}


def report(items: list[Rated], outcomes: dict[str, dict[str, object]], *, draws: int = DRAWS) -> list[Row]:
    """``outcomes[metric][response id]``: the metric's Outcome for that response."""
    rows = []
    for check in CHECKS:
        row = Row(check)
        scored: list[tuple[Rated, float]] = []
        for item in items:
            if check.models_only and item.model == "reference":
                continue
            o = outcomes[check.metric].get(item.id)
            value = getattr(o, "value", None)
            if value is None:
                reason = getattr(o, "reason", None) or getattr(o, "error", None) or "not scored"
                row.unscored.setdefault(_short(str(reason)), []).append(item.human(check.rating))
            else:
                scored.append((item, check.sign * float(value)))
        row.n = len(scored)
        if len(scored) >= MIN_SCORED:
            human = [i.human(check.rating) for i, _ in scored]
            groups = [i.task for i, _ in scored]
            c = correlations([v for _, v in scored], human, groups, draws=draws)
            row.spearman, row.spearman95, row.kendall, row.kendall95 = (c["spearman"], c["spearman95"], c["kendall"],
                                                                        c["kendall95"])
            for name in check.baselines:
                pairs = [(i, baseline(i, name)) for i, _ in scored]
                if all(v is not None for _, v in pairs):
                    b = correlations([float(v) for _, v in pairs], human, groups, draws=draws)  # type: ignore[arg-type]
                    row.baselines[name] = {k: (_r2(v) if isinstance(v, tuple) else _r(v)) for k, v in b.items()}
            by: dict[float, list[float]] = {}
            for (_, v), h in zip(scored, human):  # v is already signed: the label's (-contradiction_rate) mean
                by.setdefault(h, []).append(v)
            row.mean_by_rating = {str(h): round(float(np.mean(v)), 3) for h, v in sorted(by.items())}
        rows.append(row)
    return rows


MIN_SCORED = 3  # responses a correlation (and its baselines beside it) needs


def baseline(item: Rated, name: str) -> float | None:
    """A score beside the judge's: the file's (Bert-KPrec, RougeL, Bert-Rec, rl_f), or
    ``K-Precision``, word overlap of the response with its passages computed here (Adlakha et
    al. 2023, ``metrics/generation/kprecision.py``)."""
    if name == "K-Precision":
        from ragmeter.metrics.generation.kprecision import words_k_precision

        return words_k_precision(item.response, [text for _, text in item.passages])
    value = item.baselines.get(name)
    return None if value is None else float(value)


def _short(reason: str) -> str:
    return reason if len(reason) <= 90 else reason[:87] + "..."


def lines(rows: list[Row]) -> list[str]:
    """The table ``judge-check --set mtrag-dev`` prints."""
    def ci(v: float | None, iv: tuple[float, float] | list | None) -> str:
        if v is None:
            return f"{'n/a':>17}"
        return f"{v:6.3f} [{iv[0]:5.2f},{iv[1]:5.2f}]" if iv else f"{v:6.3f} {'':10}"

    out = [f"{'metric':36} {'against people':14} {'n':>4}  {'Spearman [95%]':>21}  {'Kendall [95%]':>21}"]
    for row in rows:
        out.append(f"{row.check.label:36} {row.check.rating:14} {row.n:4d}  {ci(row.spearman, row.spearman95):>21}"
                   f"  {ci(row.kendall, row.kendall95):>21}")
        for name, b in row.baselines.items():
            out.append(f"{'  beside: ' + name:36} {row.check.rating:14} {row.n:4d}  "
                       f"{ci(b['spearman'], b['spearman95']):>21}  {ci(b['kendall'], b['kendall95']):>21}")
    for row in rows:
        if row.n < MIN_SCORED:
            out.append(f"{row.check.label}: {row.n} response(s) scored, fewer than the {MIN_SCORED} a correlation "
                       f"needs (n/a, and no baselines beside it): give a larger --limit")
        if row.mean_by_rating:
            means = ", ".join(f"{h}: {m:.2f}" for h, m in row.mean_by_rating.items())
            out.append(f"mean {row.check.label} by human {row.check.rating}: {means}")
        for reason, human in row.unscored.items():
            counts = ", ".join(f"{h:g}: {c}" for h, c in sorted(Counter(human).items()))
            out.append(f"{row.check.label}: {len(human)} responses not scored ({reason}), left out of the "
                       f"figures above; their human {row.check.rating}: {counts}")
    return out
