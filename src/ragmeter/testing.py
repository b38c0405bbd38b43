"""Assertions for test suites: ``assert_metrics(dataset, {"recall@5": 0.7}, judge=...)`` for the
dataset's means, and one test per sample with :func:`sample_ids` and :func:`assert_sample`:

    BARS = {"recall@5": 0.5, "faithfulness": 0.7}

    @pytest.fixture(scope="session")
    def result():  # the dataset scored once, for every sample's test
        return ragmeter.evaluate(ragmeter.load_dataset("rag.jsonl"), list(BARS), judge="local")

    @pytest.mark.parametrize("sample_id", sample_ids("rag.jsonl"))
    def test_sample(result, sample_id):
        assert_sample(result, sample_id, BARS)

Both are also fixtures of ragmeter's pytest plugin (``assert_metrics``, ``assert_sample``). Each bar follows
its metric's direction: a floor for a higher-is-better metric (``recall@5 0.778 >= 0.700 ok``),
a ceiling for a lower-is-better one (``contradiction_rate 0.000 <= 0.100 ok``). A failure shows
a readable table: every bar with its verdict, each metric that missed its bar with its mean,
and the samples on the wrong side of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ragmeter.analysis.thresholds import Threshold
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import Failed, Score
from ragmeter.core.settings import DEFAULTS
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import Dataset, load_dataset


def threshold_problems(result: EvaluationResult, thresholds: Mapping[str, float], *,
                       max_rows: int = 10) -> tuple[list[str], list[str]]:
    """(one verdict line per bar, a paragraph per bar missed) for ``result``'s means."""
    lines, problems = [], []
    for name, bar in thresholds.items():
        key = result.measure(name)  # the name as written, resolved (aliases, default k)
        summary = result.summary(key)
        t = Threshold(name, float(bar), key.spec.higher_is_better)
        lines.append(t.line(summary.mean))
        if summary.mean is None:
            problems.append(f"{name}: nothing scored ({summary.not_computed} not computed, {summary.failed} failed: "
                            f"{'; '.join(summary.reasons) or 'no reason'})")
            continue
        if t.met(summary.mean):
            continue
        beyond = [(s.id, o.value) for s, o in zip(result.samples, result[key])
                  if o.value is not None and t.beyond(o.value)]
        beyond.sort(key=lambda row: row[1], reverse=not t.higher_is_better)
        rows = "\n".join(f"    {sid:<20} {value:.3f}" for sid, value in beyond[:max_rows])
        more = f"\n    ... and {len(beyond) - max_rows} more" if len(beyond) > max_rows else ""
        side, word = ("<", "below") if t.higher_is_better else (">", "above")
        problems.append(f"{name}: mean {summary.mean:.3f} {side} {bar} (a {t.kind}: "
                        f"{'higher' if t.higher_is_better else 'lower'} is better; {summary.scored} scored, "
                        f"{summary.not_computed} not computed, {summary.failed} failed); samples {word} the bar:\n"
                        f"{rows}{more}")
    return lines, problems


def assert_metrics(data: Any, thresholds: Mapping[str, float], *, judge: Any = None, corpus: Any = None,
                   k: int | None = DEFAULTS.k, max_rows: int = 10) -> EvaluationResult:
    """Evaluate ``data`` (or take an :class:`EvaluationResult` as it is) and assert each
    metric's mean meets its bar: ``mean >= bar`` when higher is better, ``mean <= bar`` when
    lower is better. Returns the result."""
    if isinstance(data, EvaluationResult):
        result = data
    else:
        dataset = data if isinstance(data, Dataset) else load_dataset(data, corpus=corpus) if isinstance(
            data, (str, bytes)) or hasattr(data, "__fspath__") else data
        result = evaluate(dataset, list(thresholds), k=k, judge=judge)
    lines, problems = threshold_problems(result, thresholds, max_rows=max_rows)
    if problems:
        raise AssertionError("ragmeter metrics missed their bar:\n" + "\n".join(f"  {line}" for line in lines)
                             + "\n" + "\n".join(problems))
    return result


def sample_ids(data: Any, *, corpus: Any = None) -> list[str]:
    """The ids of a dataset's samples, in order, for ``pytest.mark.parametrize("sample_id", ...)``:
    one test per sample (reading the file only: nothing is scored when tests are collected).

    >>> sample_ids("examples/warranty/dataset.jsonl")
    ['q1', 'q2', 'q3', 'q4', 'q5', 'q6']
    """
    dataset = data if isinstance(data, Dataset) else load_dataset(data, corpus=corpus)
    return [s.id for s in dataset.samples]


def assert_sample(result: EvaluationResult, sample_id: str, thresholds: Mapping[str, float], *,
                  not_computed: Literal["skip", "fail", "pass"] = "skip") -> None:
    """Assert one sample's value of each metric meets its bar (``value >= bar`` when higher is
    better, ``value <= bar`` when lower is better), naming every bar and the verdict. A metric
    that failed for the sample (a judgment that never validated) fails the test; one not computed
    for it (no labels, no answer) skips it under pytest (``not_computed="skip"``), or fails or
    passes it as asked.

    >>> import ragmeter
    >>> r = ragmeter.evaluate(ragmeter.load_dataset("examples/warranty/dataset.jsonl"), ["recall@5"])
    >>> assert_sample(r, "q1", {"recall@5": 0.6})
    >>> assert_sample(r, "q1", {"recall@5": 0.9})
    Traceback (most recent call last):
    ...
    AssertionError: sample 'q1' missed its bar: recall@5 0.667 >= 0.900 FAILED
    """
    lines, missed, unscored = [], False, []
    for name, bar in thresholds.items():
        key = result.measure(name)
        outcome = result.outcome(key, sample_id)
        t = Threshold(name, float(bar), key.spec.higher_is_better)
        if isinstance(outcome, Score):
            lines.append(t.line(outcome.value))
            missed = missed or not t.met(outcome.value)
        elif isinstance(outcome, Failed):
            lines.append(f"{name} failed: {outcome.error}")
            missed = True
        else:
            lines.append(f"{name} not computed: {outcome.reason}")
            unscored.append(name)
    if missed or (unscored and not_computed == "fail"):
        raise AssertionError(f"sample {sample_id!r} missed its bar: " + "; ".join(lines))
    if unscored and not_computed == "skip":
        import pytest  # only under pytest does a skip mean something

        pytest.skip(f"sample {sample_id!r}: " + "; ".join(lines))
