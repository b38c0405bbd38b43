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
# an offer of more help or a wish, not a fact (English): "Let me know if ...", "Hope this helps!"
_COURTESY = re.compile(
    r"^(?:please\s+)?(?:let\s+me\s+know\b|feel\s+free\s+to\b|don'?t\s+hesitate\s+to\b|do\s+not\s+hesitate\s+to\b|"
    r"(?:i\s+)?hope\s+(?:this|that|it)\s+helps\b|(?:i'?m|i\s+am)\s+(?:happy|glad)\s+to\s+help\b|happy\s+to\s+help\b|"
    r"if\s+you\s+have\s+any\s+(?:other|more|further|additional)\s+questions\b|"
    r"if\s+you\s+have\s+any\s+questions\s*,?\s*(?:please\s+)?(?:feel\s+free|let\s+me\s+know|(?:don'?t|do\s+not)\s+hesitate)\b|"
    r"good\s+luck\b|thanks?\s+for\s+asking\b)",
    re.I)


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


def is_courtesy(sentence: str) -> bool:
    """Is the sentence an offer of more help or a wish ("Let me know if you need anything
    else!", "I hope this helps.", "If you have any other questions, feel free to ask.")?
    Like a question, it states nothing to check. English phrasings only; a sentence with a
    number ("Feel free to call 555-0100.") is checked.

    >>> is_courtesy("Let me know if you need anything else!"), is_courtesy("Hope this helps.")
    (True, True)
    >>> is_courtesy("Let me explain: the warranty lasts 24 months."), is_courtesy("Help is free.")
    (False, False)
    """
    text = re.sub(r"[*_\s]+", " ", sentence).strip()
    return _COURTESY.search(text) is not None and not any(ch.isdigit() for ch in text)
