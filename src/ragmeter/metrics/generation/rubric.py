"""Rubric scores (G-Eval style) on user-defined or built-in criteria.

One judge call per (sample, criterion) returns an integer score on the criterion's scale and
a reason. Where the backend exposes token log-probabilities (OpenAI-compatible servers),
the score is the probability-weighted mean over the scale, sum(s * p(s)) / sum(p(s))
(Liu et al. 2023, G-Eval); otherwise the plain score. The provenance says which.
``scale='unit'`` (default) maps the score to [0, 1] as (s - low) / (high - low); ``'raw'``
keeps the criterion's scale.

Criteria files (JSON, or YAML with PyYAML installed)::

    {"criteria": [{"name": "tone", "description": "Is the answer polite and calm?",
                   "scale": [1, 5], "examples": [{"answer": "...", "score": 2}]}]}

>>> c = Criterion("tone", "Polite?", 1, 5)
>>> (4 - c.low) / (c.high - c.low)
0.75
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.core.errors import InvalidInputError, InvalidParameterError
from ragmeter.metrics.judged import need
from ragmeter.metrics.spec import Measure, MetricSpec, Param, register


@dataclass(frozen=True)
class Criterion:
    name: str
    description: str
    low: int = 1
    high: int = 5
    examples: tuple = field(default_factory=tuple)  # ({"question"?, "answer", "score"}, ...)

    def prompt_inputs(self) -> dict:
        shots = ""
        if self.examples:
            shots = "EXAMPLES WITH HUMAN SCORES:\n" + "\n".join(
                f"- question: {e.get('question', '')!s} | answer: {e['answer']!s} | score: {e['score']}"
                for e in self.examples) + "\n"
        return {"criterion": self.name, "description": self.description, "low": self.low, "high": self.high,
                "examples": shots}


BUILTIN = {c.name: c for c in [
    Criterion("relevance", "Does the answer address the question that was asked, without drifting to other topics?"),
    Criterion("completeness", "Does the answer cover every aspect of the question that the context can answer?"),
    Criterion("accuracy", "Is every statement of the answer correct according to the context (not outside knowledge)?"),
    Criterion("citation_quality", "Are the answer's claims attributed to the passages that support them, with no "
                                  "citation to a passage that does not?"),
]}


def load_criteria(path: str | Path) -> dict[str, Criterion]:
    """Read criteria from JSON or YAML; every problem names the file and the criterion."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise InvalidInputError("reading YAML criteria needs PyYAML", file=str(path),
                                    fix="pip install pyyaml, or write the criteria as JSON") from None
        doc = yaml.safe_load(text)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"not valid JSON ({exc.msg})", file=str(path), line=exc.lineno) from None
    items = doc.get("criteria") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise InvalidInputError('expected {"criteria": [...]}', file=str(path))
    out = {}
    for i, item in enumerate(items, start=1):
        where = dict(file=str(path), record=str(item.get("name", f"criterion {i}")) if isinstance(item, dict) else None)
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("description"), str):
            raise InvalidInputError("each criterion needs a string name and description", **where)
        scale = item.get("scale", [1, 5])
        if (not isinstance(scale, list) or len(scale) != 2 or not all(isinstance(x, int) for x in scale)
                or scale[0] >= scale[1]):
            raise InvalidInputError("scale must be two integers [low, high] with low < high", field="scale", **where)
        examples = item.get("examples", [])
        for ex in examples:
            if not isinstance(ex, dict) or "answer" not in ex or not isinstance(ex.get("score"), int):
                raise InvalidInputError('each example needs "answer" and an integer "score"', field="examples", **where)
        out[item["name"]] = Criterion(item["name"], item["description"], scale[0], scale[1], tuple(examples))
    return out


def rubric(ev, sample, measure: Measure, env=None) -> float:
    name = measure.params["criterion"]
    got = need(ev.rubric.get(name), "no rubric judgment")
    crit = env.criteria[name]
    score = got["weighted"] if got["weighted"] is not None else got["score"]
    return (score - crit.low) / (crit.high - crit.low) if measure.params["scale"] == "unit" else float(score)


def _needs(measure: Measure) -> frozenset:
    return frozenset({f"rubric:{measure.params['criterion']}"})


def check_criteria(measures, criteria: dict) -> None:
    for m in measures:
        if m.name == "rubric" and m.params["criterion"] not in criteria:
            raise InvalidParameterError(f"rubric: no criterion named {m.params['criterion']!r}; known: "
                                        f"{', '.join(sorted(criteria))} (add yours with --criteria FILE)")


register(MetricSpec(
    name="rubric", version=1, family="generation", accepts_k=False, rank_aware=False, needs_fn=_needs,
    needs=frozenset({"rubric:*"}), label="rubric", mean_label="rubric",
    definition="the judge's score on a criterion's scale: probability-weighted where log-probabilities exist",
    source="Liu et al. 2023, G-Eval (EMNLP)", aliases=("g_eval", "geval"),
    params={"criterion": Param(str, "relevance", doc="a built-in or --criteria name"),
            "scale": Param(str, "unit", choices=("unit", "raw"), doc="map to [0, 1] or keep the criterion's scale")},
    undefined="the sample has no answer", compute=rubric))
