"""Coverage of a run, said to library users: a ``logging`` record per measure (logger
``ragmeter.engine.coverage``: INFO, WARNING below the bar) and a :class:`LowCoverageWarning`
(a ``warnings`` warning) when a measure scored less than ``min_coverage`` of the samples
(``Settings.min_coverage``, 0.5 by default), with the reasons the others were not scored.

A run that scored 40% of its samples is then never silent, though its mean is honest: the
command line prints the same counts under its table and leaves the warning out.

Likewise a dataset with no retrieved list anywhere, scored with rank metrics, gives a
:class:`NothingRetrievedWarning` (the command line prints the same text once, as a note).
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence

from ragmeter.core import settings
from ragmeter.core.errors import LowCoverageWarning, NothingRetrievedWarning
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.results import Failed, NotComputed, Outcome
from ragmeter.core.score_column import ScoreColumn
from ragmeter.metrics.kinds import LabelSpec

log = logging.getLogger(__name__)


def coverage_message(measure: Measure, outcomes: Sequence[Outcome]) -> tuple[float, str]:
    """(the share scored, ``faithfulness: scored 1 of 6 samples (17%); not computed: ...``)."""
    if isinstance(outcomes, ScoreColumn):  # counted from its arrays, the reasons in sample order
        reasons = outcomes.not_scored_reasons()
        scored = len(outcomes) - len(reasons)
        why = Counter(reasons)
    else:
        scored = sum(o.status == "scored" for o in outcomes)
        why = Counter(o.reason if isinstance(o, NotComputed) else f"failed: {o.error}" if isinstance(o, Failed)
                      else "" for o in outcomes if o.status != "scored")
    share = scored / len(outcomes)
    listed = "; ".join(f"{reason} ({n})" for reason, n in why.most_common(3))
    text = f"{measure}: scored {scored} of {len(outcomes)} samples ({share:.0%})"
    return share, f"{text}; not scored: {listed}" if listed else text


def report_coverage(outcomes: Mapping[Measure, Sequence[Outcome]], min_coverage: float | None = None) -> None:
    """Log every measure's coverage and warn for each below ``min_coverage``."""
    bar = settings.DEFAULTS.min_coverage if min_coverage is None else min_coverage
    for measure, cells in outcomes.items():
        if not cells:
            continue
        share, message = coverage_message(measure, cells)
        if share < bar:
            log.warning("%s, under the %.0f%% coverage bar", message, 100 * bar)
            warnings.warn(f"{message}, under the {bar:.0%} coverage bar (Settings.min_coverage)",
                          LowCoverageWarning, stacklevel=3)
        else:
            log.info("%s", message)


def nothing_retrieved_message(result: EvaluationResult) -> str | None:
    """Why every rank metric of ``result`` is 0 and what to give, when no sample has a retrieved
    list (nor context ids) but some have relevance labels, and a label (rank) metric was asked;
    None otherwise (without labels the rank metrics are not computed, and say so themselves)."""
    if not any(isinstance(m.spec, LabelSpec) for m in result.measures):
        return None
    if not result.size:
        return None
    columns = result.columns
    if columns is not None:  # plain label records: the context is the retrieved list
        if len(columns.ranked) or not len(columns.labels):
            return None
    elif any(s.retrieved or s.context_ids for s in result.samples) or not any(s.relevance for s in result.samples):
        return None
    return ("no sample has a retrieved list, so the rank metrics are 0 (nothing retrieved). "
            'Fix: give each sample\'s ranked chunk ids in "retrieved" (from Ragas data: '
            '"retrieved_contexts" or "retrieved_context_ids"), or run your retriever over the '
            "questions (ragmeter.evaluate_retriever)")


def report_nothing_retrieved(result: EvaluationResult) -> None:
    """Warn (:class:`NothingRetrievedWarning`, pointing at the caller of ``evaluate``) when
    :func:`nothing_retrieved_message` has something to say."""
    message = nothing_retrieved_message(result)
    if message is not None:
        log.warning("%s", message)
        warnings.warn(message, NothingRetrievedWarning, stacklevel=3)
