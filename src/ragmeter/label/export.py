"""From the labels file to labels a dataset can use: the dataset's ``relevant`` field, TREC qrels.

The final grade of a (question, chunk) pair is, in this order:

1. the adjudicated grade (the adjudication view), whoever set it last;
2. the grade every labeler who graded the pair gave (one labeler's grade included);
3. otherwise the disagreement is resolved by the rule ``resolve``: ``median`` (the lower
   median of the grades, so a tie between 1 and 2 gives 1), ``min``, ``max``, or
   ``adjudicated``, which refuses to export while any disagreement is open. The number of
   pairs a rule decided is reported, never hidden.

Grade-0 labels are written too (a judged non-relevant chunk; metrics treat it as not
relevant, and qrels keep the judgment). Samples nobody labeled keep their original labels.

The export merges: a labeled sample keeps every label it already had for a chunk the page did
not grade (a chunk the page never showed, such as a relevant chunk that was not retrieved),
and the page's grade replaces or adds the others. Every label changed, added or kept that way
is reported (:class:`LabelChange`), so no label disappears silently.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.label.agreement import unanswerable_flags
from ragmeter.label.store import LabelState
from ragmeter.label.tasks import Task

RULES = ("median", "min", "max", "adjudicated")


@dataclass
class FinalLabels:
    grades: dict[str, dict[str, int]] = field(default_factory=dict)  # sample -> chunk -> grade
    how: dict[str, int] = field(default_factory=dict)  # adjudicated / agreed / <rule> -> pairs
    unanswerable: dict[str, dict[str, bool]] = field(default_factory=dict)  # sample -> labeler -> flag
    notes: dict[str, dict[str, str]] = field(default_factory=dict)  # sample -> labeler -> note
    labelers: list[str] = field(default_factory=list)


def final_labels(tasks: Sequence[Task], state: LabelState, *, labelers: Sequence[str] | None = None,
                 resolve: str = "median") -> FinalLabels:
    """Final grades per sample; ``labelers`` restricts to some names (adjudications still apply)."""
    if resolve not in RULES:
        raise InvalidInputError(f"unknown rule {resolve!r}", field="resolve", fix=f"use one of {', '.join(RULES)}")
    names = list(labelers) if labelers else state.labelers
    unknown = [n for n in names if n not in state.labelers]
    if unknown:
        raise InvalidInputError(f"no labels by {', '.join(map(repr, unknown))}", field="labeler",
                                fix=f"labelers in this file: {', '.join(state.labelers) or '(none)'}")
    out = FinalLabels(labelers=names)
    open_pairs = []
    for t in tasks:
        order = {c.id: i for i, c in enumerate(t.candidates)}
        chunks: set[str] = set(state.finals.get(t.id, {}))
        for n in names:
            chunks |= set(state.grades.get(n, {}).get(t.id, {}))
        per: dict[str, int] = {}
        for cid in sorted(chunks, key=lambda c: (order.get(c, len(order)), c)):
            final = state.finals.get(t.id, {}).get(cid)
            given = [state.grades[n][t.id][cid] for n in names if cid in state.grades.get(n, {}).get(t.id, {})]
            if final is not None:
                per[cid], how = final[0], "adjudicated"
            elif len(set(given)) == 1:
                per[cid], how = given[0], "agreed"
            elif resolve == "adjudicated":
                open_pairs.append(f"{t.id}/{cid}")
                continue
            else:
                per[cid], how = _rule(given, resolve), resolve
            out.how[how] = out.how.get(how, 0) + 1
        if per:
            out.grades[t.id] = per
        flags = unanswerable_flags(t, state, names)
        if flags:
            out.unanswerable[t.id] = flags
        notes = {n: state.notes[n][t.id] for n in names if state.notes.get(n, {}).get(t.id)}
        if notes:
            out.notes[t.id] = notes
    if open_pairs:
        raise InvalidInputError(f"{len(open_pairs)} disagreement(s) not adjudicated, e.g. {open_pairs[0]}",
                                fix="adjudicate them on the page (Adjudicate tab), or choose --resolve median|min|max")
    return out


def _rule(grades: list[int], rule: str) -> int:
    g = sorted(grades)
    if rule == "min":
        return g[0]
    if rule == "max":
        return g[-1]
    return g[(len(g) - 1) // 2]  # the lower median


@dataclass(frozen=True)
class LabelChange:
    """What the export did to one labeled sample's labels."""

    sample: str
    changed: tuple[tuple[str, float, float], ...] = ()  # (chunk, grade before, grade now)
    added: tuple[tuple[str, float], ...] = ()  # (chunk, grade): labeled on the page only
    kept: tuple[tuple[str, float], ...] = ()  # (chunk, grade): in the dataset, not graded on the page

    def text(self) -> str:
        """``q1: warranty-r2 1 -> 2; added returns-30d 0; kept exclusions 1 (not graded on the page)``"""
        parts = [", ".join(f"{c} {a:g} -> {b:g}" for c, a, b in self.changed)] if self.changed else []
        if self.added:
            parts.append("added " + ", ".join(f"{c} {g:g}" for c, g in self.added))
        if self.kept:
            parts.append("kept " + ", ".join(f"{c} {g:g}" for c, g in self.kept) + " (not graded on the page)")
        return f"{self.sample}: " + "; ".join(parts)


def merge_labels(sample: str, before: Mapping[str, float], page: Mapping[str, int]
                 ) -> tuple[dict[str, float], LabelChange]:
    """The sample's labels with the page's grades merged in, and what changed.

    >>> merged, change = merge_labels("q1", {"a": 1.0, "x": 1.0}, {"a": 2, "b": 0})
    >>> merged
    {'a': 2.0, 'x': 1.0, 'b': 0.0}
    >>> change.text()
    'q1: a 1 -> 2; added b 0; kept x 1 (not graded on the page)'
    """
    merged = {c: float(g) for c, g in before.items()}
    changed, added = [], []
    for c, g in page.items():
        if c not in merged:
            added.append((c, float(g)))
        elif merged[c] != float(g):
            changed.append((c, merged[c], float(g)))
        merged[c] = float(g)
    kept = tuple((c, float(g)) for c, g in before.items() if c not in page)
    return merged, LabelChange(sample, tuple(changed), tuple(added), kept)


def export_dataset(data_path: str | Path, out_path: str | Path, final: FinalLabels, *, labeled_only: bool = False,
                   mark_unanswerable: bool = False) -> dict[str, Any]:
    """Write a new dataset whose ``relevant`` fields are the final labels merged into the labels
    each sample had (the input is not touched). Returns the counts (``samples``, ``labeled``,
    ``marked_unanswerable``) and ``changes``: a :class:`LabelChange` per labeled sample whose
    labels the export changed, added to or kept."""
    from ragmeter.io.dataset import load_dataset
    from ragmeter.io.writer import sample_to_row, write_jsonl, writing

    if Path(out_path).resolve() == Path(data_path).resolve():
        raise InvalidInputError("the export would overwrite the dataset it reads", file=str(out_path),
                                fix="write the labeled dataset to a new file")
    data = load_dataset(data_path)
    rows, labeled, unanswerable = [], 0, 0
    changes_made: list[LabelChange] = []
    for s in data.samples:
        if s.id in final.grades or any(final.unanswerable.get(s.id, {}).values()):
            labeled += 1
            meta = dict(s.metadata)
            meta["labeling"] = {"labelers": final.labelers, "unanswerable": final.unanswerable.get(s.id, {}),
                                "notes": final.notes.get(s.id, {})}
            grades = final.grades.get(s.id, {})
            merged, change = merge_labels(s.id, s.relevance, grades)
            if change.changed or change.added or change.kept:
                changes_made.append(change)
            changes: dict = {"relevance": MappingProxyType(merged), "metadata": MappingProxyType(meta)}
            flags = final.unanswerable.get(s.id, {})
            if mark_unanswerable and flags and all(flags.values()) and not any(g >= 1 for g in merged.values()):
                changes["answerable"] = False
                unanswerable += 1
            s = dataclasses.replace(s, **changes)
        elif labeled_only:
            continue
        rows.append(sample_to_row(s))
    with writing(out_path, what="labeled dataset", option="--export"):
        write_jsonl(Path(out_path), rows)
    return {"samples": len(rows), "labeled": labeled, "marked_unanswerable": unanswerable, "changes": changes_made}


_SPACE = re.compile(r"\s")


def qrels_lines(final: FinalLabels) -> list[str]:
    """``qid 0 docno grade`` for every labeled pair (TREC qrels; ids must not contain whitespace)."""
    lines = []
    for sid, grades in final.grades.items():
        for cid, g in grades.items():
            for what, value in (("sample id", sid), ("chunk id", cid)):
                if _SPACE.search(value) or not value:
                    raise InvalidInputError(f"{what} {value!r} contains whitespace: TREC qrels cannot hold it",
                                            record=sid, fix="export to the dataset's relevant field instead")
            lines.append(f"{sid} 0 {cid} {g}")
    return lines


def export_qrels(out_path: str | Path, final: FinalLabels) -> int:
    from ragmeter.io.writer import write_text_atomic, writing

    lines = qrels_lines(final)
    with writing(out_path, what="qrels", option="--qrels"):
        write_text_atomic(Path(out_path), "".join(line + "\n" for line in lines))
    return len(lines)
