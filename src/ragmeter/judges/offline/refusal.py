"""Does an answer decline to answer? The offline judge's rule, no model.

An answer declines when its *first* sentence is a refusal: the writer says they cannot know,
find or answer ("I don't know", "I couldn't find ...", "I'm not able to ..."), that there is no
information ("no details on ...", "... was not included"), or that the documents do not say
("the context does not mention ...", "the documents only cover ..." is not enough). A
negative answer ("No, surges are not covered.") gives the fact and does not decline; nor does
an answer whose refusal comes after the fact. English only.

Measured on ``agreement/declines.jsonl`` (40 hand-labeled answers): 40/40; the pattern was
written while reading that set, so it is not a held-out figure.

>>> declines("I'm sorry, but I couldn't find any information about power surges in the documents.")
True
>>> declines("No, damage from power surges is not covered by the warranty.")
False
>>> declines("That is not true; toolchain is available in Sao Paulo.")
False
"""

from __future__ import annotations

import re

from ragmeter.judges.sentences import split_sentences

PATTERN = re.compile(r"""(
 \b(i|we|i'm|i\s+am)\s+(do\s*n[o']t|don't|cannot|can't|could\s*n[o']t|couldn't|am\s+(not\s+able|unable)|not\s+able
   |unable|have\s+no|was\s+unable|were\s+unable)\b.{0,40}\b(know|find|answer|say|information|details?|data|help
   |provide|determine|tell|give|access|record)
 |\b(no|not\s+(any|enough))\s+(specific\s+|relevant\s+|further\s+|more\s+|such\s+)?(information|details?|data
   |mention|record)s?\b
 |\b(documents?|context|passages?|sources?|texts?|information|materials?)\s+(provided\s+)?(do(es)?\s*n[o']t|don't
   |doesn't|did\s*n[o']t)\s+(contain|mention|say|provide|include|specify|cover|state|discuss|address|give|have)
 |\b(is|are|was|were)\s+not\s+(mentioned|provided|available|specified|stated|given|included)\b
 |\b(do|does)\s+not\s+(say|mention|specify|state)\b
 |\bunable\s+to\s+(find|answer|provide|determine|locate)
 |\bsorry\b)""", re.I | re.X)


def is_refusal(sentence: str) -> bool:
    return PATTERN.search(sentence) is not None


def declines(answer: str) -> bool:
    """The answer's first sentence is a refusal."""
    sentences = split_sentences(answer)
    return bool(sentences) and is_refusal(sentences[0])
