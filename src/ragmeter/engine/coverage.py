"""Coverage of a run, said to library users: a ``logging`` record per measure (logger
``ragmeter.engine.coverage``: INFO, WARNING below the bar) and a :class:`LowCoverageWarning`
(a ``warnings`` warning) when a measure scored less than ``min_coverage`` of the samples
(``Settings.min_coverage``, 0.5 by default), with the reasons the others were not scored.

A run that scored 40% of its samples is then never silent, though its mean is honest: the
command line prints the same counts under its table and leaves the warning out.
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence

from ragmeter.core import settings
from ragmeter.core.errors import LowCoverageWarning
from ragmeter.core.measure import Measure
from ragmeter.core.results import Failed, NotComputed, Outcome

log = logging.getLogger(__name__)


def coverage_message(measure: Measure, outcomes: Sequence[Outcome]) -> tuple[float, str]:
    """(the share scored, ``faithfulness: scored 1 of 6 samples (17%); not computed: ...``)."""
    scored = sum(o.status == "scored" for o in outcomes)
    share = scored / len(outcomes)
    why = Counter(o.reason if isinstance(o, NotComputed) else f"failed: {o.error}" if isinstance(o, Failed) else ""
                  for o in outcomes if o.status != "scored")
    reasons = "; ".join(f"{reason} ({n})" for reason, n in why.most_common(3))
    text = f"{measure}: scored {scored} of {len(outcomes)} samples ({share:.0%})"
    return share, f"{text}; not scored: {reasons}" if reasons else text


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
