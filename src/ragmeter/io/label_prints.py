"""Both fingerprints of plain label records, written from columns: the text
:class:`ragmeter.io.dataset.Fingerprints` hashes, one line per record, built without a
``Sample``.

A record's canonical JSON (see ``canonical_texts`` in :mod:`ragmeter.io.dataset`) is fixed but
for its id, question, answer, reference, labels and ranked ids, so it is one format string
per record. ``clean``: no string holds a character JSON escapes (``"``, ``\\``, a control
character), which the caller knows when the file has no backslash (a JSON string can hold
none of them unescaped); each string's JSON is then the string in quotes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from json.encoder import encode_basestring
from typing import Any

import msgspec

_SORTED = msgspec.json.Encoder(order="sorted")

#: Records written and hashed at a time: the text of one batch is held, never the whole file's.
BATCH = 8192


def update_digests(full: Any, test: Any, ids: Sequence[str], questions: Sequence[str | None],
                   retrieved: Sequence[Sequence[str]], relevance: Sequence[dict[str, float]],
                   answers: Sequence[str | None] | None, references: Sequence[str | None] | None, *,
                   clean: bool) -> None:
    """Feed ``full`` and ``test`` (``hashlib.sha256`` objects) what ``Fingerprints.add`` feeds
    them for the samples these columns make."""
    for start in range(0, len(ids), BATCH):
        part = slice(start, start + BATCH)
        texts = record_texts(ids[part], questions[part], retrieved[part], relevance[part],
                             None if answers is None else answers[part],
                             None if references is None else references[part], clean=clean)
        full.update(texts[0].encode())
        test.update(texts[1].encode())


def record_texts(ids: Sequence[str], questions: Sequence[str | None], retrieved: Sequence[Sequence[str]],
                 relevance: Sequence[dict[str, float]], answers: Sequence[str | None] | None,
                 references: Sequence[str | None] | None, *, clean: bool) -> tuple[str, str]:
    """The dataset and test-set fingerprint texts (each record's canonical JSON and ``\\n``),
    for string ids, texts and ranked ids and finite float grades."""
    text = _quoted if clean else _escaped
    sids = list(map(text, ids))
    qs = list(map(text, questions))
    none = ["null"] * len(sids)
    ans = none if answers is None else list(map(text, answers))
    refs = none if references is None else list(map(text, references))
    rel_full, rel_test = _relevance_columns(relevance)
    rets = list(map(_ranked_clean if clean else _ranked_escaped, retrieved))
    full = "".join(map(_full_line, ans, sids, qs, refs, rel_full, rets))
    test = "".join(map(_test_line, sids, qs, refs, rel_test))
    return full, test


def _full_line(a: str, i: str, q: str, r: str, rel: str, ret: str) -> str:
    return (f'{{"answer":{a},"answer_claims":null,"answerable":true,"context":null,"id":{i},"metadata":{{}},'
            f'"question":{q},"reference":{r},"reference_claims":null,"relevance":{rel},"retrieved":{ret}}}\n')


def _test_line(i: str, q: str, r: str, rel: str) -> str:
    return (f'{{"answerable": true, "id": {i}, "question": {q}, "reference": {r}, "reference_claims": null, '
            f'"relevance": {rel}}}\n')


def _quoted(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'


def _escaped(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _ranked_clean(ids: Sequence[str]) -> str:
    return '[["' + '",null,null],["'.join(ids) + '",null,null]]' if ids else "[]"


def _ranked_escaped(ids: Sequence[str]) -> str:
    return "[" + ",".join([f"[{encode_basestring(c)},null,null]" for c in ids]) + "]"


def _relevance_columns(relevance: Sequence[dict[str, float]]) -> tuple[list[str], list[str]]:
    """Each record's labels as JSON, keys sorted: compact, and with json's default separators.

    msgspec writes them (keys sorted by code point, as ``sorted``; strings escaped as
    ``encode_basestring``) when it writes every grade as ``float.__repr__`` does (it writes
    ``1e16`` where repr writes ``1e+16``); the spaced form is the compact one with ``": "`` and
    ``", "`` when no key holds a quote, colon or comma (then ``":`` and ``,"`` are separators only).
    """
    grades = set(chain.from_iterable(map(dict.values, relevance)))
    if all(_SORTED.encode(g) == float.__repr__(g).encode() for g in grades):
        full = list(map(bytes.decode, map(_SORTED.encode, relevance)))
        keys = "".join(chain.from_iterable(relevance))
        if '"' not in keys and ":" not in keys and "," not in keys:
            return full, list(map(_spaced, full))
        return full, [_relevance_texts(r)[1] for r in relevance]
    pairs = list(map(_relevance_texts, relevance))
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _spaced(compact: str) -> str:
    return compact.replace('":', '": ').replace(',"', ', "')


def _relevance_texts(labels: Mapping[str, float]) -> tuple[str, str]:
    if not labels:
        return "{}", "{}"
    keys = sorted(labels)
    grades = list(map(float.__repr__, map(labels.__getitem__, keys)))
    quoted = list(map(encode_basestring, keys))
    return ("{" + ",".join(map("{}:{}".format, quoted, grades)) + "}",
            "{" + ", ".join(map("{}: {}".format, quoted, grades)) + "}")
