"""Rubric criteria: what a rubric score judges, on which scale, with which examples (a source of the
rubric evidence, as the judge is).

Built-in criteria, and criteria files (JSON, or YAML with PyYAML installed)::

    {"criteria": [{"name": "tone", "description": "Is the answer polite and calm?",
                   "scale": [1, 5], "examples": [{"answer": "...", "score": 2}]}]}

>>> RubricCriterion("tone", "Polite?", 1, 5).prompt_inputs()["high"]
5
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.documents import read_document


@dataclass(frozen=True)
class RubricCriterion:
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
    RubricCriterion("relevance",
                    "Does the answer address the question that was asked, without drifting to other topics?"),
    RubricCriterion("completeness", "Does the answer cover every aspect of the question that the context can answer?"),
    RubricCriterion("accuracy",
                    "Is every statement of the answer correct according to the context (not outside knowledge)?"),
    RubricCriterion("citation_quality", "Are the answer's claims attributed to the passages that support them, with no "
                                        "citation to a passage that does not?"),
]}


def with_builtin(criteria: Mapping[str, RubricCriterion] | None) -> dict[str, RubricCriterion]:
    """The built-in criteria, then the given ones (a given name replaces a built-in one)."""
    return {**BUILTIN, **(criteria or {})}


def load_rubric_criteria(path: str | Path) -> dict[str, RubricCriterion]:
    """Read criteria from JSON or YAML; every problem names the file and the criterion."""
    path = Path(path)
    doc = read_document(path, "criteria")  # bounded: size, YAML aliases and their expansion
    items = doc.get("criteria") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise InvalidInputError('expected {"criteria": [...]}', file=str(path))
    out: dict[str, RubricCriterion] = {}
    for i, item in enumerate(items, start=1):
        file, record = str(path), str(item.get("name", f"criterion {i}")) if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                or not isinstance(item.get("description"), str):
            raise InvalidInputError("each criterion needs a string name and description", file=file, record=record)
        scale = item.get("scale", [1, 5])
        if (not isinstance(scale, list) or len(scale) != 2 or not all(isinstance(x, int) for x in scale)
                or scale[0] >= scale[1]):
            raise InvalidInputError("scale must be two integers [low, high] with low < high", field="scale", file=file,
                                    record=record)
        examples = item.get("examples", [])
        if not isinstance(examples, list):
            raise InvalidInputError("examples must be a list", field="examples", file=file, record=record)
        if item["name"] in out:
            raise InvalidInputError("two criteria have this name", field="name", file=file, record=record,
                                    fix="give each criterion its own name")
        for ex in examples:
            if not isinstance(ex, dict) or "answer" not in ex or not isinstance(ex.get("score"), int):
                raise InvalidInputError('each example needs "answer" and an integer "score"', field="examples",
                                        file=file, record=record)
        out[item["name"]] = RubricCriterion(item["name"], item["description"], scale[0], scale[1], tuple(examples))
    return out
