"""Pairs of answers that people judged, shown to the pairwise judge as calibration examples.

The metric reference's calibration rule for judges: "always include human-labeled examples
(with known correct answers) in your judge's few-shot prompt", against length preference,
verbosity and position bias. Rubric criteria take them in their criteria file; pairwise judging
takes them in an examples file (JSON, or YAML with PyYAML installed)::

    {"examples": [{"question": "...", "answer_1": "...", "answer_2": "...", "winner": "1",
                   "reason": "answer 2 gives a shipping time the context does not state"}]}

``winner`` is ``"1"``, ``"2"`` or ``"tie"`` (the judge's own vocabulary); ``question`` and
``reason`` are optional. Every problem names the file, the example and the field.

>>> print(examples_text([PairExample("Covered?", "Yes, 24 months.", "Yes.", "1", "more complete")]))
EXAMPLES WITH HUMAN VERDICTS (people compared these answers):
- question: Covered? | answer 1: Yes, 24 months. | answer 2: Yes. | winner: 1 (more complete)
<BLANKLINE>
<BLANKLINE>
>>> examples_text([])
''
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.documents import read_document

WINNERS = ("1", "2", "tie")
FORMAT = '{"examples": [{"question": "...", "answer_1": "...", "answer_2": "...", "winner": "1", "reason": "..."}]}'


@dataclass(frozen=True)
class PairExample:
    question: str
    answer_1: str
    answer_2: str
    winner: str  # "1", "2" or "tie"
    reason: str = ""

    def line(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return (f"- question: {self.question} | answer 1: {self.answer_1} | answer 2: {self.answer_2} | "
                f"winner: {self.winner}{why}")


def examples_text(examples: Sequence[PairExample]) -> str:
    """The block the prompt's ``{{examples}}`` takes: empty without examples, so that the prompt
    then reads exactly as it did before examples existed."""
    if not examples:
        return ""
    return ("EXAMPLES WITH HUMAN VERDICTS (people compared these answers):\n"
            + "\n".join(e.line() for e in examples) + "\n\n")


def load_pair_examples(path: str | Path) -> list[PairExample]:
    """Read an examples file (see the module docstring)."""
    file = str(path)
    doc = read_document(path, "examples")
    items = doc.get("examples") if isinstance(doc, dict) else doc
    if not isinstance(items, list) or not items:
        raise InvalidInputError("expected a non-empty list of examples", file=file, fix=f"write {FORMAT}")
    out = []
    for i, item in enumerate(items, start=1):
        row = i  # the example's place in the list, 1-based
        if not isinstance(item, dict):
            raise InvalidInputError("each example must be an object", file=file, row=row, fix=f"write {FORMAT}")
        unknown = sorted(set(item) - {"question", "answer_1", "answer_2", "winner", "reason"})
        if unknown:
            raise InvalidInputError(f"unknown field {unknown[0]!r}", file=file, row=row, field=unknown[0],
                                    fix="use question, answer_1, answer_2, winner and reason")
        for name in ("answer_1", "answer_2"):
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise InvalidInputError("must be the text of an answer", file=file, row=row, field=name)
        for name in ("question", "reason"):
            if not isinstance(item.get(name, ""), str):
                raise InvalidInputError("must be a string", file=file, row=row, field=name)
        winner = str(item.get("winner", "")).strip().lower() if isinstance(item.get("winner"), (str, int)) else None
        if winner not in WINNERS:
            raise InvalidInputError(f"winner {item.get('winner')!r} is not one of \"1\", \"2\", \"tie\"", file=file,
                                    row=row, field="winner", fix='write "1" when answer 1 is better, "2" '
                                                                       'when answer 2 is, "tie" when neither')
        out.append(PairExample(item.get("question", ""), item["answer_1"], item["answer_2"], winner,
                               item.get("reason", "")))
    return out

