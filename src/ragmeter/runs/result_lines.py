"""A run's ``results.jsonl`` lines written from a result's outcome columns, and its
``samples.jsonl`` lines written from a template for plain label samples.

Each line is ``json.dumps(row, ensure_ascii=False)`` of the row ``EvaluationResult.to_dict()``
gives for a sample (``{"id": ..., "metrics": {name: {"status": ..., "value": ...}}}``), with
every string redacted as :func:`ragmeter.core.secrets.redacted_json_lines` redacts it. A
measure held as a :class:`~ragmeter.core.score_column.ScoreColumn` scored on every sample with
finite values is written from a template around ``float.__repr__`` of each value (what json
writes); any other measure's cells through ``json.dumps``; results with evidence as
``to_dict`` rows.

``samples.jsonl``: ``json.dumps(sample_to_row(s), ensure_ascii=False)``, redacted; a sample of
the plain label shape (chunks by id alone, float grades, no context, metadata or claims) is
written from a template, any other through ``sample_to_row``.

>>> from ragmeter.core.results import Provenance
>>> from ragmeter.core.score_column import ScoreColumn
>>> from ragmeter.core.sample import Sample
>>> from ragmeter.metrics import parse_measure
>>> import numpy as np
>>> m = parse_measure("mrr@5")
>>> prov = Provenance("reciprocal_rank@5", "reciprocal_rank", 1, {}, 5, "retrieved", "0")
>>> r = EvaluationResult((Sample("q1"),), (m,), {m: ScoreColumn(np.array([0.5]), prov)}, "fp")
>>> list(result_lines(r)) == [json.dumps(row, ensure_ascii=False) for row in r.to_dict()["samples"]]
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from itertools import repeat
from json.encoder import encode_basestring  # what json.dumps(..., ensure_ascii=False) escapes with
from typing import Any

from ragmeter.core.evaluation import EvaluationResult, outcome_cell, outcome_cells
from ragmeter.core.history import LineLedger, written
from ragmeter.core.sample import Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.core.secrets import json_line_redactor, redacted_json_lines
from ragmeter.io.label_file import LazySamples
from ragmeter.io.writer import sample_to_row


def result_lines(result: EvaluationResult) -> Iterator[str]:
    """``results.jsonl``'s lines (without their newlines), redacted."""
    ids = result.sample_ids
    if result.evidence is not None or not all(type(i) is str for i in ids):
        yield from redacted_json_lines(result.to_dict()["samples"])
        return
    names = [str(m) for m in result.measures]
    slots, texts = [], []
    for name, m in zip(names, result.measures):
        key, outcomes = encode_basestring(name), result.outcomes[m]
        values = outcomes.values.tolist() if isinstance(outcomes, ScoreColumn) and outcomes.all_scored else None
        if values is not None and all(map(math.isfinite, values)):
            slots.append(f'{key}: {{"status": "scored", "value": '.replace("%", "%%") + "%s}")
            texts.append(list(map(float.__repr__, values)))
        else:
            slots.append("%s")
            texts.append([f"{key}: {json.dumps(cell, ensure_ascii=False)}" for cell in outcome_cells(outcomes)])
    template = '{"id": %s, "metrics": {' + ", ".join(slots) + "}}"
    redacted = json_line_redactor()
    for i, cells in enumerate(zip(map(encode_basestring, ids), *texts)):
        yield redacted(template % cells, partial(_row, result, names, ids[i], i))


def _row(result: EvaluationResult, names: list[str], sample_id: str, i: int) -> dict[str, Any]:
    """Sample ``i``'s row as ``to_dict`` gives it (made only for a line that needs redacting)."""
    return {"id": sample_id, "metrics": {name: outcome_cell(result.outcomes[m][i])
                                         for name, m in zip(names, result.measures)}}


def sample_lines(samples: Iterable[Sample], lines: LineLedger | None = None) -> Iterator[str]:
    """``samples.jsonl``'s lines (without their newlines), redacted. Samples read by the
    columnar reader are written from its columns, none built (but for a line to redact). A
    conversation turn's history is written as the lines of its conversation no earlier line
    wrote (:func:`ragmeter.core.history.written`; ``lines``: what the file holds already, for a
    file written in blocks), so a conversation's history is in the file once, not once per turn."""
    if isinstance(samples, LazySamples):
        yield from _column_sample_lines(samples)
        return
    redacted = json_line_redactor()
    ledger = lines if lines is not None else LineLedger()
    for s in samples:
        text = _plain_sample_line(s)
        if text is not None:
            yield redacted(text, partial(sample_to_row, s))
            continue
        row = sample_to_row(s, history=partial(written, ledger))  # the ledger moves on: built once
        yield redacted(json.dumps(row, ensure_ascii=False), partial(_same, row))


def _column_sample_lines(samples: LazySamples) -> Iterator[str]:
    """:func:`sample_lines` from the columns: each line what :func:`_plain_sample_line` writes
    for the sample :class:`LazySamples` builds from the same row (a chunk by id alone, float
    grades, ``answerable`` true), ``sample_to_row``'s JSON where a grade is not finite."""
    file, redacted = samples.label_file, json_line_redactor()
    cols, enc = file.columns, encode_basestring
    questions = file.questions
    answers = file.answers or repeat(None)
    references = file.references or repeat(None)
    for i, (sid, question, ranked, grades, answer, reference) in enumerate(
            zip(cols.ids, questions, cols.retrieved, cols.relevance, answers, references)):
        if not all(map(math.isfinite, grades.values())):
            text = json.dumps(sample_to_row(samples[i]), ensure_ascii=False)
        else:
            text = "".join((
                '{"id": ', enc(sid),
                "" if question is None else ', "question": ' + enc(question),
                ', "retrieved": [', '{"id": ' + '}, {"id": '.join(map(enc, ranked)) + "}" if ranked else "",
                '], "relevant": {', ", ".join([f"{enc(k)}: {float.__repr__(v)}" for k, v in grades.items()]),
                "}", "" if answer is None else ', "answer": ' + enc(answer),
                "" if reference is None else ', "reference": ' + enc(reference),
                ', "answerable": true}'))
        yield redacted(text, partial(_sample_row, samples, i))


def _same(row: dict[str, Any]) -> dict[str, Any]:
    return row


def _sample_row(samples: Sequence[Sample], i: int) -> dict[str, Any]:
    """Sample ``i``'s ``sample_to_row`` (built only for a line that needs redacting)."""
    return sample_to_row(samples[i])


def _plain_sample_line(s: Sample) -> str | None:
    """``json.dumps(sample_to_row(s), ensure_ascii=False)`` for a plain label sample, else None."""
    if s.context is not None or s.metadata or s.reference_claims is not None or s.answer_claims is not None \
            or type(s.id) is not str:
        return None
    parts = [f'{{"id": {encode_basestring(s.id)}']
    for name, value in (("question", s.question),):
        if value is not None:
            if type(value) is not str:
                return None
            parts.append(f'"{name}": {encode_basestring(value)}')
    chunks = []
    for c in s.retrieved:
        if c.score is not None or c.text is not None or type(c.id) is not str:
            return None
        chunks.append(f'{{"id": {encode_basestring(c.id)}}}')
    parts.append(f'"retrieved": [{", ".join(chunks)}]')
    grades = []
    for cid, grade in s.relevance.items():
        if type(cid) is not str or type(grade) is not float or not math.isfinite(grade):
            return None
        grades.append(f"{encode_basestring(cid)}: {float.__repr__(grade)}")
    parts.append(f'"relevant": {{{", ".join(grades)}}}')
    for name, value in (("answer", s.answer), ("reference", s.reference)):
        if value is not None:
            if type(value) is not str:
                return None
            parts.append(f'"{name}": {encode_basestring(value)}')
    if type(s.answerable) is not bool:
        return None
    parts.append(f'"answerable": {"true" if s.answerable else "false"}')
    return ", ".join(parts) + "}"
