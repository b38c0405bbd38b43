"""The plain per-query table and summary, laid out as the article "RAG Evaluation Metrics: Formulas
and a Worked Example" prints them.

    query  ranks 1-5  relevant  P@5    R@5    hit  RR     nDCG@5
    q1     .R.R.      3         0.400  0.667  1    0.500  0.498
    mean   precision@5 0.300 | recall@5 0.778 | ...

Rank pattern: ``R`` relevant (grade >= 1), ``.`` not relevant, ``-`` past the end of the list.
Cells that were not scored read ``n/c`` (not computed) or ``failed``; the coverage lines say why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.core.display import terminal_safe
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.results import Outcome, Score
from ragmeter.core.score_column import ScoreColumn

#: Past-the-end dashes are drawn up to k only while k is at most this or the longest list.
PATTERN_PAD = 20


def pattern_width(k: int | None, longest: int) -> int:
    """The ranks the pattern shows: k, unless k runs past both the longest list and
    :data:`PATTERN_PAD` ranks (``--k 1000000000``), or there is no cut-off (``--k 0``): then the
    longest list, up to :data:`PATTERN_PAD` ranks (the header then says how many ranks the lists
    hold: a 540-long list is not drawn 540 characters wide).

    >>> pattern_width(5, 3), pattern_width(10**9, 7), pattern_width(None, 7), pattern_width(None, 540)
    (5, 7, 7, 20)
    >>> pattern_width(10**9, 540), pattern_width(100, 540)
    (20, 100)
    """
    if k is None or k > max(longest, PATTERN_PAD):
        return min(longest, PATTERN_PAD)
    return k


def _pattern(ids: Sequence[str], relevance: Mapping[str, float], k: int | None) -> str:
    width = len(ids) if k is None else k
    marks = ["R" if relevance.get(cid, 0.0) >= 1 else "." for cid in ids[:width]]
    return "".join(marks) + "-" * (width - len(marks))


def _cell(measure: Measure, outcome: Outcome) -> str:
    if isinstance(outcome, Score):
        return str(int(outcome.value)) if measure.binary else f"{outcome.value:.3f}"
    return "n/c" if outcome.status == "not_computed" else "failed"


def _cells(measure: Measure, outcomes: Sequence[Outcome]) -> list[str]:
    """A measure's column of cells (a ScoreColumn's read from its arrays: no outcome built)."""
    if not isinstance(outcomes, ScoreColumn):
        return [_cell(measure, o) for o in outcomes]
    binary = measure.binary
    if outcomes.all_scored:
        values = outcomes.values.tolist()
        return [str(int(v)) for v in values] if binary else [f"{v:.3f}" for v in values]
    # a column holds no failure: the rest were not computed (their values mean nothing)
    return [("n/c" if v is None else str(int(v)) if binary else f"{v:.3f}") for v in outcomes.value_list()]


def _ranked_view(result: EvaluationResult, view: str
                 ) -> tuple[Sequence[str], Sequence[Sequence[str]], Sequence[Mapping[str, float]]]:
    """Sample ids, ranked lists and labels: from the columns when held (no Sample built)."""
    if result.columns is not None and view == "retrieved":
        return result.columns.ids, result.columns.retrieved, result.columns.relevance
    samples = result.samples
    return [s.id for s in samples], [s.ranked_ids(view) for s in samples], [s.relevance for s in samples]


def _pattern_view(measures: tuple[Measure, ...]) -> tuple[str, int | None]:
    for m in measures:
        if m.view == "retrieved":
            return "retrieved", m.k
    return "context", None


def render_table(result: EvaluationResult) -> str:
    """Per-query rows, the mean line, then one coverage line per metric."""
    view, k = _pattern_view(result.measures)
    ids, lists, labels = _ranked_view(result, view)
    longest = max((len(r) for r in lists), default=0)
    width = pattern_width(k, longest)
    # no ranked list anywhere (agent runs scored on their tool calls): no rank columns
    ranked = longest > 0 or any(labels)
    cut = f" of {longest}" if (k is None or k > longest) and width < longest else ""  # the first ranks
    headers = ["query"] + ([f"ranks 1-{width}{cut}" if view == "retrieved" else f"context 1-{width}{cut}", "relevant"]
                           if ranked else [])
    mixed = len({m.view for m in result.measures}) > 1
    headers += [f"{label} [{m.view}]" if mixed else label
                for m, label in zip(result.measures, with_cutoffs(result.measures, "label"))]
    rows = []
    columns = [_cells(m, result.outcomes[m]) for m in result.measures]  # a column at a time
    groups = request_groups(result.samples) if result.columns is None else {}
    grouped = {j for _, members in groups.values() for j in members}
    for i, (sid, ranking, relevance) in enumerate(zip(ids, lists, labels)):
        if i in groups:  # a request that retrieved several times: a line for it, its retrievals under it
            rid, members = groups[i]
            rows.append([terminal_safe(f"{rid} ({len(members)} retrievals)")] + (["", ""] if ranked else [])
                        + [_request_cell(m, [result.outcomes[m][j] for j in members]) for m in result.measures])
        relevant = sum(1 for g in relevance.values() if g >= 1)
        pad = "  " if i in grouped else ""
        row = [pad + terminal_safe(sid)] + ([_pattern(ranking, relevance, width), str(relevant)] if ranked else [])
        row += [cells[i] for cells in columns]
        rows.append(row)
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    lines = [_join(r, widths) for r in [headers, *rows]]
    lines.append("")
    lines.append(mean_line(result, pad=widths[0]))
    lines.append("")
    lines.extend(coverage_lines(result))
    return "\n".join(lines)


def request_groups(samples: Sequence[Any]) -> dict[int, tuple[str, list[int]]]:
    """The requests read from traces that retrieved several times: the position of each one's
    first retrieval -> (request id, the positions of its retrievals)."""
    found: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        n = s.metadata.get("retrievals")
        if isinstance(n, int) and n > 1 and s.metadata.get("request") is not None:
            found.setdefault(str(s.metadata["request"]), []).append(i)
    return {members[0]: (rid, members) for rid, members in found.items()}


def _request_cell(measure: Measure, outcomes: Sequence[Outcome]) -> str:
    """A request's value: the mean over its retrievals' scored values (an answer metric is scored
    on one of them: its value)."""
    values = [o.value for o in outcomes if o.status == "scored" and o.value is not None]
    if not values:
        return "n/c"
    mean = sum(values) / len(values)
    return str(int(mean)) if measure.binary and mean in (0, 1) else f"{mean:.3f}"


def with_cutoffs(measures: Sequence[Measure], attr: str) -> list[str]:
    """Each measure's ``label`` or ``mean_label``; where the measures have different cut-offs,
    a label that does not show its cut-off gets it (``RR`` -> ``RR@5`` beside ``nDCG@10``), so a
    column is never read at the cut-off of the ranks shown."""
    labels = [str(getattr(m, attr)) for m in measures]
    if len({m.k for m in measures if m.spec.accepts_k}) < 2:
        return labels
    return [label + f"@{m.k}" if m.k is not None and f"@{m.k}" not in label else label
            for m, label in zip(measures, labels)]


def _join(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def mean_line(result: EvaluationResult, pad: int = 5) -> str:
    parts = []
    mixed = len({m.view for m in result.measures}) > 1
    for m, mean_label in zip(result.measures, with_cutoffs(result.measures, "mean_label")):
        s = result.summary(m)
        label = f"{mean_label} [{m.view}]" if mixed else mean_label
        parts.append(f"{label} {'n/c' if s.mean is None else f'{s.mean:.3f}'}" + coverage_note(m.name, s.scored,
                                                                                             s.reasons))
    return "mean".ljust(pad) + "  " + " | ".join(parts)


def coverage_note(name: str, scored: int, reasons: Mapping[str, int]) -> str:
    """Beside the action pass rate, Agent Assurance's verification coverage: cases that reached
    a verdict / cases where a criterion applies; empty for any other metric."""
    if name != "action_pass_rate":
        return ""
    from ragmeter.metrics.beyond.actions import verification_coverage  # an action run only

    verified, applicable = verification_coverage(scored, reasons)
    share = f"{verified / applicable:.3f}" if applicable else "n/c"
    return f" (verification coverage {share}: {verified} of {applicable} cases reached a verdict)"


def coverage_lines(result: EvaluationResult) -> list[str]:
    """Per measure: scored / not computed / failed with the reasons, and for a judged measure
    whose judge's agreement with hand labels is known, that agreement (see
    :mod:`ragmeter.trust.judge_uncertainty`)."""
    lines = []
    for m in result.measures:
        s = result.summary(m)
        line = f"{m}: {s.scored} scored, {s.not_computed} not computed, {s.failed} failed"
        if s.reasons:
            line += " (" + "; ".join(f"{terminal_safe(reason)}: {n}" for reason, n in s.reasons.items()) + ")"
        outcomes = result.outcomes[m]
        provenance = outcomes.provenance if isinstance(outcomes, ScoreColumn) else \
            outcomes[0].provenance if outcomes else None
        measured = None
        if provenance is not None and provenance.judge:  # a judged metric (a label-only run loads no analysis code)
            from ragmeter.trust.judge_uncertainty import judge_agreement

            measured = judge_agreement(provenance.as_dict())
        if measured is not None:
            line += f"; {measured.text()}"
        lines.append(line)
    return lines


def offline_judge(judge: Mapping[str, Any] | None) -> bool:
    """Whether a judge identity (a score's ``provenance.judge``) is the offline judge's
    (``--judge local``: its model reads ``offline evidence ...``)."""
    return judge is not None and judge.get("backend") == "local" and \
        str(judge.get("model", "")).startswith("offline evidence")


def offline_means(judge: Mapping[str, Any] | None) -> str:
    """How the offline judge decided: its evidence alone, or with its model stage (``--judge
    local:model``, ``stages`` naming ``model``)."""
    if judge is not None and "model" in (judge.get("stages") or []):
        return "offline evidence + the model asked about uncertain claims"
    return "offline evidence, no model call"


def _run_judge(result: EvaluationResult) -> Mapping[str, Any] | None:
    """The judge identity of the run's first judged measure."""
    for outcomes in result.outcomes.values():
        provenance = outcomes.provenance if isinstance(outcomes, ScoreColumn) else \
            outcomes[0].provenance if outcomes else None
        if provenance is not None and provenance.judge:
            return provenance.judge
    return None


def judge_line(spec: str | None, result: EvaluationResult, price_in: float | None = None,
               price_out: float | None = None) -> str:
    """The judge's calls, re-asks, ledger hits, failures and tokens, and their cost in US
    dollars when both prices (per million tokens) are given. The offline judge, where it spent
    no token, says so: judgments, and whether its model stage ran (:func:`offline_means`)."""
    st = result.judge_stats or {}
    judge = _run_judge(result)
    if not st.get("input_tokens") and not st.get("output_tokens") and offline_judge(judge):
        return (f"judge {spec}: {st['calls']} judgment{'' if st['calls'] == 1 else 's'} "
                f"({result.calls_per_sample:.1f} per sample; {offline_means(judge)}), "
                f"{st['cached']} from the ledger, {st['failed']} failed")
    line = (f"judge {spec}: {st['calls']} calls ({result.calls_per_sample:.1f} per sample), {st['reasks']} re-asks, "
            f"{st['cached']} from the ledger, {st['failed']} failed"
            f"{f' ({u} unreachable, not stored)' if (u := st.get('unreachable')) else ''}"
            f"{f' ({t} too long for the judge)' if (t := st.get('too_long')) else ''}, "
            f"{st['input_tokens']} input + "
            f"{st['output_tokens']} output tokens")
    if st.get("retries"):
        line += f", {st['requests']} HTTP requests ({st['retries']} retried after a timeout, 5xx or 429)"
    if st.get("shared"):
        line += f", {st['shared']} identical requests asked once"
    if price_in is not None and price_out is not None:
        from ragmeter.judges.cost import usd  # a label-only run loads no judge code

        line += f", about ${usd(st['input_tokens'], st['output_tokens'], price_in, price_out):.4f}"
    return line


def streamed_lines(measures: Sequence[Measure], summary: Mapping[str, Mapping[str, Any]], samples: int,
                   block: int) -> list[str]:
    """A streamed run's summary: the sample count, the mean line and each measure's coverage."""
    parts = [f"{label} {'n/c' if summary[str(m)]['mean'] is None else format(summary[str(m)]['mean'], '.3f')}"
             + coverage_note(m.name, summary[str(m)]["scored"], summary[str(m)].get("reasons") or {})
             for m, label in zip(measures, with_cutoffs(measures, "mean_label"))]
    lines = [f"{samples} samples, streamed in blocks of {block}", "mean   " + " | ".join(parts)]
    for m in measures:
        s = summary[str(m)]
        lines.append(f"{m}: {s['scored']} scored, {s['not_computed']} not computed, {s['failed']} failed")
    return lines


def nothing_retrieved_note(result: Any) -> str | None:
    """The library's :class:`NothingRetrievedWarning` text, printed once under the table (the
    warning itself is left out, as the coverage one is)."""
    from ragmeter.engine.coverage import nothing_retrieved_message

    message = nothing_retrieved_message(result)
    return f"note: {message}" if message else None
