"""What trec_eval 10.0 refuses to evaluate, with its exit status and ragmeter's message (shared
by the vectorised path and the small-file path, which must refuse alike)."""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.core.errors import InvalidParameterError
from ragmeter.trec.errors import EXIT_NO_TOPIC, EXIT_TOPIC, TrecInputError


def check_options(max_docs: int | None, iprec_rule: str, memory_limit_mb: float | None) -> None:
    if iprec_rule not in ("v9", "v10"):
        raise InvalidParameterError("iprec_rule must be 'v9' or 'v10'")
    if max_docs is not None and max_docs < 0:
        raise InvalidParameterError("max_docs (-M) must be >= 0 (trec_eval crashes on a negative -M)")
    if memory_limit_mb is not None and not memory_limit_mb > 0:
        raise InvalidParameterError("memory_limit_mb must be a number of megabytes above 0")


def refuse_missing(missing: Sequence[str], source: str) -> None:
    if missing:
        shown = ", ".join(repr(t) for t in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise TrecInputError(f"{len(missing)} qrels topic(s) have no results in the run: {shown}; trec_eval 10.0 "
                             "stops here (exit 4)", file=source, exit_code=EXIT_TOPIC,
                             fix="-c (complete) to score them as trec_eval does, or --skip-missing "
                                 "(skip_missing=True) to leave them out of the averages as trec_eval 9 did")


def refuse_unscorable_topics(names: Sequence[str], best: Sequence[float], source: str) -> None:
    """trec_eval 10.0 cannot evaluate a topic whose judgments are all negative: its per-topic
    count buffer (``form_res_rels.c``) is allocated at the first topic with a grade >= 0, so
    such a topic before any other exits 4, and one with every grade <= -2 after one crashes.
    A topic whose grades are all -1 after one is evaluated with R = 0 (as here). ``names``:
    the evaluated topics in byte order, ``best``: each one's highest grade."""
    first_judged = next((i for i, b in enumerate(best) if b >= 0), len(best))
    bad = [i for i, b in enumerate(best) if b < 0 and (i < first_judged or b <= -2)]
    if bad:
        i = bad[0]
        why = ("no topic before it (in trec_eval's byte order) has a grade >= 0" if i < first_judged
               else "its grades are all below -1")
        raise TrecInputError(f"topic {names[i]!r} has no judgment >= 0 and {why}: trec_eval 10.0 cannot "
                             f"evaluate it ({'exit 4' if i < first_judged else 'it crashes'})",
                             file=source, exit_code=EXIT_TOPIC,
                             fix="judge one of its documents (0 or more) or remove the topic from the qrels")


def no_topic(source: str | None = None) -> TrecInputError:
    return TrecInputError("no topic has both results and judgments (trec_eval: exit 7)", file=source,
                          exit_code=EXIT_NO_TOPIC, fix="check that both files use the same topic ids")


def judged_twice(docno: str, topic: str, source: str) -> TrecInputError:
    return TrecInputError(f"document {docno!r} is judged twice for topic {topic!r}", file=source,
                          exit_code=EXIT_TOPIC, fix="keep one judgment per (topic, document); trec_eval refuses it too")


def listed_twice(docno: str, topic: str, run_name: str) -> TrecInputError:
    return TrecInputError(f"document {docno!r} appears twice for topic {topic!r}", file=run_name,
                          exit_code=EXIT_TOPIC,
                          fix="give each document one line per topic (trec_eval refuses duplicates too)")
