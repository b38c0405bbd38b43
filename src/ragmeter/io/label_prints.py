"""Both fingerprints of plain label records, written from columns: the text
:class:`ragmeter.io.dataset.Fingerprints` hashes, one line per record, built without a
``Sample``.

A record's canonical JSON (see ``canonical_texts`` in :mod:`ragmeter.io.dataset`) is fixed but
for its id, question, answer, reference, labels and ranked ids, so a batch of records is one
list of pieces, the fixed text between them, joined once: each field's column is written into
every 12th slot of the list (a slice assignment, in C), and the batch's bytes are fed to both
hashes in one pass. ``clean``: no string holds a character JSON escapes (``"``, ``\\``, a
control character), which the caller knows when the file has no backslash (a JSON string can
hold none of them unescaped); each string's JSON is then the string in quotes.

Every piece is bytes (UTF-8, as the hash takes it): each column is written as one text and
encoded once, so no record's text is decoded or encoded on its own.
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

# the canonical record, around its six varying fields (answer, id, question, reference, labels, ranked ids)
_FULL = (b'{"answer":', b',"answer_claims":null,"answerable":true,"context":null,"id":', b',"metadata":{},"question":',
         b',"reference":', b',"reference_claims":null,"relevance":', b',"retrieved":', b"}\n")
_TEST = (b'{"answerable": true, "id": ', b', "question": ', b', "reference": ',
         b', "reference_claims": null, "relevance": ', b"}\n")


def update_digests(full: Any, test: Any, ids: Sequence[str], questions: Sequence[str | None],
                   ranked: Sequence[bytes], relevance: Sequence[Mapping[str, float]],
                   answers: Sequence[str | None] | None, references: Sequence[str | None] | None, *,
                   clean: bool, grades: set[float] | None = None, keys: str | None = None) -> None:
    """Feed ``full`` and ``test`` (``hashlib.sha256`` objects) what ``Fingerprints.add`` feeds
    them for the samples these columns make; ``ranked``: each record's ranked ids as the
    canonical JSON writes them (:func:`ranked_texts`). ``grades`` and ``keys``: every grade and
    every label id (joined) of these records, where the caller has them."""
    for start in range(0, len(ids), BATCH):
        part = slice(start, start + BATCH)
        texts = record_texts(ids[part], questions[part], ranked[part], relevance[part],
                             None if answers is None else answers[part],
                             None if references is None else references[part], clean=clean, grades=grades,
                             keys=keys)
        full.update(texts[0])
        test.update(texts[1])


def ranked_texts(retrieved: Sequence[Sequence[str]], *, clean: bool) -> list[bytes]:
    """Each record's ranked ids as the canonical JSON writes them: ``[["id",null,null],...]``."""
    return _lines(list(map(_ranked_clean if clean else _ranked_escaped, retrieved)))


def _lines(texts: list[str]) -> list[bytes]:
    """Each text's UTF-8 bytes, encoded at once: joined with newlines (JSON texts hold none) and
    split after encoding."""
    if not texts:
        return []
    return "\n".join(texts).encode().split(b"\n")


def record_texts(ids: Sequence[str], questions: Sequence[str | None], ranked: Sequence[bytes],
                 relevance: Sequence[Mapping[str, float]], answers: Sequence[str | None] | None,
                 references: Sequence[str | None] | None, *, clean: bool, grades: set[float] | None = None,
                 keys: str | None = None) -> tuple[bytes, bytes]:
    """The dataset and test-set fingerprint texts (each record's canonical JSON and ``\\n``),
    for string ids and texts and finite float grades."""
    n = len(ids)
    if not n:
        return b"", b""
    sids = _texts(ids, clean)
    qs = _texts(questions, clean)
    none = [b"null"] * n
    ans = none if answers is None else _texts(answers, clean)
    refs = none if references is None else _texts(references, clean)
    rel_full, rel_test = _relevance_columns(relevance, grades, keys)
    return (_interleaved(_FULL, (ans, sids, qs, refs, rel_full, list(ranked)), n),
            _interleaved(_TEST, (sids, qs, refs, rel_test), n))


def _interleaved(fixed: Sequence[bytes], columns: Sequence[list[bytes]], n: int) -> bytes:
    """``fixed[0] + col0[i] + fixed[1] + col1[i] + ... + fixed[-1]`` for every record i, joined:
    one list of pieces, each column written into its slots by a slice assignment."""
    width = 2 * len(columns)
    pieces: list[bytes] = [b""] * (width * n)
    for j, column in enumerate(columns):
        pieces[2 * j::width] = [fixed[j]] * n if j else [fixed[-1] + fixed[0]] * n
        pieces[2 * j + 1::width] = column
    pieces[0] = fixed[0]
    return b"".join(pieces) + fixed[-1]


def _texts(values: Sequence[str | None], clean: bool) -> list[bytes]:
    """Each value's JSON (``null`` for None), as bytes. Clean strings hold no newline, so without
    a None they are quoted all at once: joined with ``"\\n"`` between, encoded, then split."""
    if clean and None not in values:
        return ('"' + '"\n"'.join(values) + '"').encode().split(b"\n")  # type: ignore[arg-type]
    return _lines(list(map(_quoted if clean else _escaped, values)))


def _quoted(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'


def _escaped(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _ranked_clean(ids: Sequence[str]) -> str:
    return '[["' + '",null,null],["'.join(ids) + '",null,null]]' if ids else "[]"


def _ranked_escaped(ids: Sequence[str]) -> str:
    return "[" + ",".join([f"[{encode_basestring(c)},null,null]" for c in ids]) + "]"


def _relevance_columns(relevance: Sequence[Mapping[str, float]], grades: set[float] | None = None,
                       keys: str | None = None) -> tuple[list[bytes], list[bytes]]:
    """Each record's labels as JSON, keys sorted: compact, and with json's default separators.

    msgspec writes them (keys sorted by code point, as ``sorted``; strings escaped as
    ``encode_basestring``), every record's at once, when it writes every grade as
    ``float.__repr__`` does (it writes ``1e16`` where repr writes ``1e+16``); the spaced form
    is the compact one with ``": "`` and ``", "`` when no key holds a quote, colon or comma
    (then ``":`` and ``,"`` are separators only).
    """
    if grades is None:
        grades = set(chain.from_iterable(map(dict.values, relevance)))  # type: ignore[arg-type]
    if all(_SORTED.encode(g) == float.__repr__(g).encode() for g in grades):
        compact = _SORTED.encode_lines(relevance)
        if keys is None:
            keys = "".join(chain.from_iterable(relevance))
        full = compact.split(b"\n")
        full.pop()  # after the last line's newline
        if '"' not in keys and ":" not in keys and "," not in keys:
            spaced = compact.replace(b'":', b'": ').replace(b',"', b', "').split(b"\n")
            spaced.pop()
            return full, spaced
        return full, _lines([_relevance_texts(r)[1] for r in relevance])
    pairs = list(map(_relevance_texts, relevance))
    return _lines([p[0] for p in pairs]), _lines([p[1] for p in pairs])


def _relevance_texts(labels: Mapping[str, float]) -> tuple[str, str]:
    if not labels:
        return "{}", "{}"
    keys = sorted(labels)
    grades = list(map(float.__repr__, map(labels.__getitem__, keys)))
    quoted = list(map(encode_basestring, keys))
    return ("{" + ",".join(map("{}:{}".format, quoted, grades)) + "}",
            "{" + ", ".join(map("{}: {}".format, quoted, grades)) + "}")
