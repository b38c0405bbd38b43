"""Which passages can bear on a claim: the local judge verifies a claim only against those.

For each claim, a passage is kept when it is among the ``top_k`` best by cosine of the bundled
MiniLM sentence embeddings plus the share of the claim's content words (lower-cased, crudely
stemmed, stop words dropped) found in the passage: on the warranty sample, cosine alone ranks
"a device that fails within 30 days ..." first for "a failure at 14 months falls inside the
warranty period", the word share puts the warranty passages first. A passage is also kept
when it shares with the claim an exact
number (``14``, ``1,470``, ``0.5``; number words up to twenty count as their digits) or a
distinctive name (a capitalised word or a letter-digit code such as ``E5`` or ``LX318`` that
occurs in at most half of the passages, so a product name in every passage keeps nothing by
itself). Every other passage is skipped, and the skip is recorded with its cosine, so the
ledger shows what the verdict was not based on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+[A-Za-z][A-Za-z0-9]*")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_STOP = frozenset("a an the this that these those it its is are was were be been to of in on at by for with and or "
                  "not no if then than from as up out per each every any all can may must will would should your "
                  "you their they he she his her we our after before into over under about".split())
_COMMON = frozenset("a an the this that these those it its is are was were be to of in on at by for with and or "
                    "not no if then than from as up out per each every any all".split())


@dataclass(frozen=True)
class Selection:
    keep: tuple[int, ...]  # passage indices checked, in passage order
    skipped: tuple[tuple[int, float], ...]  # (passage index, cosine) of the passages not checked


def numbers(text: str) -> set[str]:
    """Exact numbers of a text, thousands separators dropped ("1,470" -> "1470")."""
    out = {n.replace(",", "") for n in _NUMBER.findall(text)}
    out |= {_NUMBER_WORDS[w.lower()] for w in _WORD.findall(text) if w.lower() in _NUMBER_WORDS}
    return out


def names(text: str) -> set[str]:
    """Capitalised words not opening a sentence, and codes mixing letters and digits (lower-cased)."""
    out = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for i, w in enumerate(_WORD.findall(sentence)):
            has_digit = any(ch.isdigit() for ch in w)
            if (has_digit or (i > 0 and w[0].isupper())) and w.lower() not in _COMMON:
                out.add(w.lower())
    return out


def content_words(text: str) -> set[str]:
    """Lower-cased words and numbers, stop words dropped, -s/-es/-ed/-ing cut from longer words."""
    out = set()
    for w in re.findall(r"[A-Za-z0-9]+", text.lower()):
        if w in _STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(w) > 4 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


def preselect(claims: Sequence[str], passages: Sequence[str], *, top_k: int, embedder: Any,
              overlap: bool = True) -> list[Selection]:
    """For each claim, the passages to check (``top_k`` <= 0 or >= len(passages): all of them)."""
    if top_k <= 0 or top_k >= len(passages):
        return [Selection(tuple(range(len(passages))), ()) for _ in claims]
    vectors = embedder.encode([*claims, *passages])
    cos = vectors[: len(claims)] @ vectors[len(claims):].T
    passage_words = [content_words(p) for p in passages]
    passage_numbers = [numbers(p) for p in passages]
    passage_names = [names(p) for p in passages]
    common = {n for n in set().union(*passage_names) if sum(n in s for s in passage_names) > len(passages) / 2}
    out = []
    for i, claim in enumerate(claims):
        words = content_words(claim)
        share = np.array([len(words & w) / max(1, len(words)) for w in passage_words])
        order = np.argsort(-(cos[i] + share), kind="stable")
        keep = set(order[:top_k].tolist())
        if overlap:
            nums, nams = numbers(claim), names(claim) - common
            keep |= {j for j in range(len(passages)) if nums & passage_numbers[j] or nams & passage_names[j]}
        out.append(Selection(tuple(sorted(keep)),
                             tuple((j, round(float(cos[i, j]), 4)) for j in range(len(passages)) if j not in keep)))
    return out
