"""The cheap evidence of the offline judge: how a claim lines up with one passage, no model call.

For a claim c and a passage p (``signals``):

- ``words``: the share of c's content words found in p (the per-claim form of K-Precision,
  Adlakha et al. 2023): lower-cased words of any script, a Chinese or Japanese run as its
  character bigrams, stop words out, up to two common endings cut (:func:`stem`);
- ``tokens``: BERTScore precision (Zhang et al. 2020, eq. 2, no idf) of c's contextual token
  vectors against p's (p read in windows the embedder can take), over c's content tokens:
  mean_i max_j x_i . y_j;
- ``sentence``: the cosine of c's sentence vector with p's closest sentence, the *aligned*
  sentence; ``aligned_words``: the share of c's content words found in that sentence;
- ``quantities``: c's amounts (digits or number words, with their unit: ``3-year`` = ``three
  years`` = 36 months, ``$1,299``, ``5 business days``, ``40%``; ``records.quantities``
  reads them) found in p (``found``), and those p contradicts (``conflict``: the aligned
  sentence states an amount of the same kind, none equal; for a bare number, a year or a count,
  only where that sentence holds half of the claim's words and the other number shares a word
  around it); a number after a capitalised word is part of a name (``Apollo 11``), in conflict
  only where the aligned sentence (holding half of c's words) names the same thing with another
  number and c's is not in p (``Windows 10`` / ``Windows 11``), as a letter-digit code is
  (``R1`` / ``R2``);
- ``names``: c's distinctive names (capitalised words not opening a sentence, letter-digit
  codes) missing from p;
- ``negation_flip``: a sentence or clause of p matches a clause of c closely apart from the
  negation words (not, no, never, n't, ...; 80% of its words are the clause's, and it holds half
  of the clause's) but with the opposite polarity, and none matches it closely with its own.

Passages are prepared once (:class:`Passage`) and reused for every claim and request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from ragmeter.judges.sentences import split_sentences
from ragmeter.records.quantities import read_quantity

WINDOW_WORDS = 120  # words per window of a passage's token vectors (the embedder reads 256 word pieces)
STOP = frozenset(
    "a an the this that these those it its is are was were be been being to of in on at by for with and or if then "
    "than from as up out per each every any all can may must will would should your you their they he she his her we "
    "our after before into over under about i me my do does did has have had so such which who whom what when where "
    "why how there here also other some more most only very just but".split())
NEGATIONS = frozenset("not no never none nothing nobody neither nor cannot without n't".split())
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and Han: written without spaces
_WORD = re.compile(rf"[{_CJK}]+|(?:(?![{_CJK}])[^\W_])+(?:'(?:(?![{_CJK}])[^\W_])+)?")
_LETTER = rf"(?:(?![{_CJK}])[^\W\d_])"
_NAME = re.compile(rf"{_LETTER}(?:(?![{_CJK}])[\w'\-])*|\d+{_LETTER}(?:(?![{_CJK}])\w)*")
_AMOUNT = re.compile(
    r"(?:[$€£¥₹]\s?)?(?<![\w.])\d+(?:[.,]\d+)*(?:\s?(?:%|percent|per cent))?"
    r"(?:[\s\-]+(?:business\s+days?|working\s+days?|calendar\s+days?|[A-Za-z]+))?", re.I)
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred")
_SPELLED = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS.split()) + r")(?:[\s\-]+(?:" + "|".join(_NUMBER_WORDS.split())
                      + r"))*(?:[\s\-]+(?:business\s+days?|working\s+days?|[A-Za-z]+))?", re.I)
_SUFFIXES = ("ing", "ed", "es", "en", "er", "e", "s", "n")  # endings of English and its neighbours, cut twice at most
# a capitalised word before a bare number makes it part of a name ("Apollo 11", "Windows 11"), unless it is
# a word that opens a sentence or a date before an amount
_NOT_NAMES = STOP | frozenset(
    "since until till around within nearly almost approximately roughly exactly about circa only up over under "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split())


def words(text: str) -> list[str]:
    """The text's words, lower-cased: letter and digit runs of any script (``é``, ``ü``, ``ñ``
    within a word), and a run of Chinese or Japanese characters as its character bigrams (those
    scripts put no space between words; a one-character run is itself)."""
    out = []
    for w in _WORD.findall(text.lower().replace("\u2019", "'")):
        if re.match(rf"[{_CJK}]", w):
            out.extend([w] if len(w) == 1 else [w[i:i + 2] for i in range(len(w) - 1)])
        else:
            out.append(w)
    return out


def stem(word: str) -> str:
    """A light, language-agnostic stem: up to two common endings cut while more than four letters
    stay (``surges``/``surge`` -> ``surg``, ``Monaten``/``Monate`` -> ``monat``, ``tokens`` -> ``tok``)."""
    for _ in range(2):
        for suffix in _SUFFIXES:
            if len(word) - len(suffix) >= 3 and len(word) > 4 and word.endswith(suffix):
                word = word[: -len(suffix)]
                break
        else:
            break
    return word


def content_words(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOP}


def names(text: str) -> set[str]:
    """Capitalised words not opening a sentence, and codes mixing letters and digits (lower-cased)."""
    out = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", text):
        for i, w in enumerate(_NAME.findall(sentence)):
            if (any(ch.isdigit() for ch in w) or (i > 0 and w[0].isupper())) and w.lower() not in STOP:
                out.add(w.lower())
    return out


def _code_stem(name: str) -> str:
    """A letter-digit code's letters (``r2`` -> ``r``, ``x200`` -> ``x``); empty for a name without
    digits or without letters."""
    letters = "".join(ch for ch in name if not ch.isdigit())
    return letters if letters != name and letters.strip("-") else ""


Amount = tuple[Decimal, str]  # (amount in the base unit, unit group: "" for a bare number)
KNOWN_UNITS = frozenset({"second", "month", "business_day", "percent", "currency"})  # and "name:<word>"
BARE_ALIGNED = 0.5  # share of the claim's words its aligned sentence needs for a bare number to conflict


NEGATION_UNIT, NEGATION_CLAIM = 0.8, 0.5  # a negation flip's closeness (see negation_flip): 0 flips on the MTRAG half
_CLAUSE = re.compile(r"[,;:()\u2013\u2014]|\s-\s|\b(?:but|however|although|though|whereas|while|except|unless|yet)\b",
                     re.I)
_NOT_NEGATION = re.compile(r"\b(?:not\s+(?:only|just|merely)|or\s+not|if\s+not)\b", re.I)  # "not only X but Y"


def amounts(text: str) -> dict[Amount, frozenset[str]]:
    """The amounts a text states, each in its unit group's base unit, with the words around it
    (two before, one after: what a bare number is the amount *of*); a unit word the
    reader does not know leaves a bare number (``12 claims`` -> (12, "")). A number right after
    a capitalised word is part of a name (``Apollo 11``, ``HTTP 503``): its kind is that name
    (``name:apollo``), found or not but in conflict with nothing (even ``Ibuprofen 200 mg``: on the
    MTRAG half, reading it as an amount too added false conflicts). A function word or a month
    before a number is no name (``In 1995``, ``May 2020``)."""
    out: dict[Amount, frozenset[str]] = {}

    def add(amount: Amount, around: frozenset[str]) -> None:
        out[amount] = out.get(amount, frozenset()) | around

    for m in [*_AMOUNT.finditer(text), *_SPELLED.finditer(text)]:
        span = m.group(0).replace("-", " ")
        q = read_quantity(span)
        if q is None and " " in span:  # the word after the number is no unit: "40% off", "5 of them"
            q = read_quantity(span.rsplit(" ", 1)[0])
        if q is None:
            continue
        unit = q.unit if q.unit in KNOWN_UNITS else ""
        around = frozenset([*words(text[:m.start()])[-2:], *words(text[m.start():])[1:2]])
        prev = re.search(r"(\S+)\s+$", text[:m.start()])
        if (not unit and m.group(0)[:1].isdigit() and prev is not None and prev.group(1)[-1:].isalnum()
                and any(ch.isupper() for ch in prev.group(1)) and prev.group(1).lower() not in _NOT_NAMES):
            add((q.amount, "name:" + prev.group(1).lower()), around)
            continue
        add((q.amount, unit), around)
    return out


def quantities(text: str) -> set[Amount]:
    """The amounts of :func:`amounts`, without their words."""
    return set(amounts(text))


def negated(text: str) -> bool:
    """A negation word (not, no, never, n't, ...) other than in "not only", "or not", "if not"."""
    return any(w in NEGATIONS or w.endswith("n't") for w in words(_NOT_NEGATION.sub(" ", text)))


def polar_words(text: str) -> frozenset[str]:
    """The content words (stemmed) apart from the negation cues: what a negation flip compares."""
    return frozenset(stem(w) for w in words(text)
                     if w not in STOP and w not in NEGATIONS and not w.endswith("n't"))


def polar_units(sentence: str, *, whole: bool = True) -> list[tuple[frozenset[str], bool]]:
    """A sentence's clauses (cut at , ; : ( ) dashes and but, however, unless, ...), and the
    sentence itself where ``whole`` or where it has one clause: the words of each (negation
    words out) with whether it is negated."""
    parts = _CLAUSE.split(sentence) if _CLAUSE.search(sentence) else []
    if whole or not parts:
        parts = [sentence, *parts]
    return [(polar_words(p), negated(p)) for p in parts if p.strip()]


def negation_flip(claim_units: Sequence[tuple[frozenset[str], bool]],
                  units: Sequence[tuple[frozenset[str], bool]]) -> bool:
    """For some clause of the claim (of two words or more): a sentence or clause of the passage
    matches it closely apart from the negation words (holds ``NEGATION_CLAIM`` of the clause's
    words, and ``NEGATION_UNIT`` of its own words are the clause's) with the opposite polarity,
    and none matches it closely with its own."""
    for words_c, negated_c in claim_units:
        if len(words_c) < 2:
            continue
        close = {neg for w, neg in units if w and len(words_c & w) >= max(NEGATION_UNIT * len(w),
                                                                          NEGATION_CLAIM * len(words_c))}
        if (not negated_c) in close and negated_c not in close:
            return True
    return False


@dataclass
class Passage:
    """A passage prepared once: its sentences with their vectors, words, names, amounts, and
    token vectors (filled by :func:`prepare`)."""

    id: str
    text: str
    sentences: list[str]
    sentence_vectors: np.ndarray
    token_vectors: np.ndarray
    words: set[str]
    names: set[str]
    amounts: set[Amount]
    sentence_words: list[set[str]]
    sentence_amounts: list[dict[Amount, frozenset[str]]]
    sentence_names: list[set[str]]
    polar: list[tuple[frozenset[str], bool]]  # each sentence and clause: its words apart from negation, negated


def windows(text: str, size: int = WINDOW_WORDS) -> list[str]:
    words = text.split()
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)] or [""]


def token_rows(texts: Sequence[str], embedder: Any) -> list[tuple[np.ndarray, list[str] | None]]:
    """Each text's unit token vectors and the word of each token (None where the embedder
    does not say), in one batched pass where the embedder offers it."""
    if hasattr(embedder, "tokens"):
        return list(embedder.tokens(texts))
    return [(embedder.token_vectors(t), None) for t in texts]


def prepare(passages: Sequence[tuple[str, str]], embedder: Any) -> list[Passage]:
    """Passages prepared together: one batched pass for all their sentences, one for all their
    token windows."""
    cut = [split_sentences(text) or [text] for _, text in passages]
    flat = [s for sentences in cut for s in sentences]
    vectors = embedder.encode(flat) if flat else np.zeros((0, 384))
    spans = [windows(text) for _, text in passages]
    tokens = token_rows([w for ws in spans for w in ws], embedder)
    out, at, wt = [], 0, 0
    for (pid, text), sentences, ws in zip(passages, cut, spans):
        mine = [t for t, _ in tokens[wt:wt + len(ws)] if len(t)]
        sv = vectors[at:at + len(sentences)]
        out.append(Passage(pid, text, sentences, sv, np.vstack(mine) if mine else np.zeros((0, sv.shape[1])),
                           content_words(text), names(text), quantities(text), [content_words(s) for s in sentences],
                           [amounts(s) for s in sentences], [names(s) for s in sentences],
                           [u for s in sentences for u in polar_units(s)]))
        at, wt = at + len(sentences), wt + len(ws)
    return out


@dataclass
class Claim:
    """A claim prepared once: its words, names, amounts, negation, sentence and token vectors."""

    text: str
    words: set[str]
    names: set[str]
    amounts: dict[Amount, frozenset[str]]
    negated: bool
    polar: list[tuple[frozenset[str], bool]]  # its clauses: their words apart from negation, negated
    vector: np.ndarray
    tokens: np.ndarray  # unit token vectors of its content tokens (all tokens if none is content)


def prepare_claims(texts: Sequence[str], embedder: Any) -> list[Claim]:
    """Claims prepared together: one pass of the model for their sentence and token vectors
    where the embedder offers it (two otherwise)."""
    if not texts:
        return []
    if hasattr(embedder, "encode_tokens"):
        encoded = embedder.encode_tokens(list(texts))
    else:
        encoded = [(v, t, w) for v, (t, w) in zip(embedder.encode(list(texts)), token_rows(texts, embedder))]
    return [Claim(text, content_words(text), names(text), amounts(text), negated(text),
                  polar_units(text, whole=False), vector, _content(tokens, token_words))
            for text, (vector, tokens, token_words) in zip(texts, encoded)]


def _content(vectors: np.ndarray, token_words: list[str] | None) -> np.ndarray:
    """The token vectors of the words that are not stop words (all of them when none is, or
    when the embedder does not say which word a token belongs to)."""
    if token_words is None or len(vectors) == 0 or len(token_words) != len(vectors):
        return vectors
    keep = np.array([w not in STOP and bool(_WORD.fullmatch(w)) for w in token_words], dtype=bool)
    return vectors[keep] if keep.any() else vectors


def signals(claim: Claim, passage: Passage) -> dict[str, Any]:
    """One (claim, passage) row of evidence (see the module docstring); floats rounded to 4 places."""
    scos = passage.sentence_vectors @ claim.vector if len(passage.sentences) else np.zeros(1)
    j = int(np.argmax(scos))
    tokens = (float(np.max(claim.tokens @ passage.token_vectors.T, axis=1).mean())
              if len(claim.tokens) and len(passage.token_vectors) else 0.0)
    n = max(1, len(claim.words))
    found = {a for a in claim.amounts if a in passage.amounts}
    aligned = passage.sentence_amounts[j]
    j_words = len(claim.words & passage.sentence_words[j]) / n
    # another amount of the claim's kind in the aligned sentence; for bare numbers (no unit: years,
    # counts) only where that sentence shares half of the claim's words and the other number a word
    # around it ("in 1969" / "in 1970", "12 claims" / "15 claims"), so it speaks of the same thing
    # (a name's number conflicts with nothing: a sentence listing "CA 92703" beside "CA 92501" says both)
    conflict = {a for a in claim.amounts.keys() - found if not a[1].startswith("name:")
                and any(b[1] == a[1] and (a[1] or (j_words >= BARE_ALIGNED and claim.amounts[a] & ctx))
                        for b, ctx in aligned.items())}
    # a name whose number differs ("R1" for "R2", "Windows 10" for "Windows 11"): the claim's is not in
    # the passage, and the aligned sentence, which holds half of the claim's words, names the same
    # thing with another number
    if j_words >= BARE_ALIGNED:
        conflict |= {a for a in claim.amounts.keys() - found if a[1].startswith("name:")
                     and any(b[1] == a[1] for b in aligned)}
        conflict |= {(Decimal(0), "code:" + c) for c in claim.names - passage.names
                     if _code_stem(c) and any(_code_stem(d) == _code_stem(c) for d in passage.sentence_names[j])}
    return {"passage": passage.id, "words": round(len(claim.words & passage.words) / n, 4),
            "tokens": round(tokens, 4), "sentence": round(float(scos[j]), 4),
            "aligned_words": round(j_words, 4),
            "amounts": len(claim.amounts), "amounts_found": len(found), "amounts_conflict": len(conflict),
            "names": len(claim.names), "names_missing": len(claim.names - passage.names),
            "negation_flip": negation_flip(claim.polar, passage.polar), "aligned": j}
