"""The one sentence splitter: how texts are cut into the numbered sentences a judge is shown
(context relevance), the claims the offline judge checks (``claims='sentences'``), and the
sentences citation markers are read from.

The cutting is sentencex's (Wikimedia's rule-based segmenter for about 300 languages, MIT:
abbreviations, decimal numbers and ordinals per language; no model, no download); a segment
with no letter or digit (a blank line, a lone bullet) is dropped and each sentence is
stripped. ``language`` is an ISO 639 code; sentencex falls back along its language chain (and
to English rules) for a code it has no rules of its own for.

>>> split_sentences("To claim, open a case. Approved claims ship within 5 business days.")
['To claim, open a case.', 'Approved claims ship within 5 business days.']
>>> split_sentences("Version 2.1 is out, e.g. on the R2. It works.")
['Version 2.1 is out, e.g. on the R2.', 'It works.']
>>> split_sentences("Steps:\\n\\n1. **Register** the unit. 2. Open a case.")
['Steps:', '1. **Register** the unit.', '2. Open a case.']
>>> split_sentences("Das ist z.B. ein Test. Am 3. Mai kam er.", language="de")
['Das ist z.B. ein Test.', 'Am 3. Mai kam er.']
"""

from __future__ import annotations

import re

from sentencex import segment

SPLITTER = "sentencex 1.0"  # named in the provenance of what is cut with it
_WORDLIKE = re.compile(r"\w")
_MARKER = re.compile(r"\s*(?:\d{1,3}|[A-Za-z])[.)]\s*")  # a list item's number cut off alone: "1."
_QUESTION = re.compile(r"^[\W_]*¿|[?？\u037e][\W_]*$")  # ¿...: Spanish; ？: full-width; ; (U+037E): Greek


def split_sentences(text: str, language: str = "en") -> list[str]:
    """The sentences of ``text``, stripped, in order (an empty list for a text with no words).
    A list item's marker cut off alone (``"1."``) stays with the item it numbers."""
    if not text or not text.strip():
        return []
    out: list[str] = []
    marker = ""
    for part in segment(language, text):
        if _MARKER.fullmatch(part):
            marker += part.strip() + " "
        elif _WORDLIKE.search(part):
            out.append(marker + part.strip())
            marker = ""
    return out + ([marker.strip()] if marker else [])


def is_question(sentence: str) -> bool:
    """Does the sentence ask (it ends in a question mark, citation markers and closing
    quotes or brackets aside, or opens with ¿)? A question states nothing to check.

    >>> is_question("Is there anything else I can help you with?"), is_question("¿Necesita ayuda con algo más?")
    (True, True)
    >>> is_question("Does it ship? [1]"), is_question("It ships in 5 days."), is_question("您还有其他问题吗？")
    (True, False, True)
    """
    return _QUESTION.search(re.sub(r"\s*\[[^\[\]]*\]", "", sentence).strip()) is not None
