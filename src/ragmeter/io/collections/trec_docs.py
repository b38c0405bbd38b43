"""TREC SGML documents, streamed: ``<DOC> <DOCNO> id </DOCNO> ... <TEXT> ... </TEXT> </DOC>``.

The file is read in 1 MB pieces and scanned for the tags that matter (``DOC``, ``DOCNO``,
``TEXT``, ``HEADLINE``, ``TITLE``, any case); only the document being read is in memory, and
its text is cleaned as it streams, in segments of about :data:`SEGMENT` characters cut at
white space outside a tag (which no entity or tag holds across), so no list of its words or
of its regular-expression pieces is ever made (a 100 MB ``<DOC>`` cost 1.8 GB that way).
A document's text is its ``TEXT``, ``HEADLINE`` and ``TITLE`` parts in file order, each
with inner tags removed, entities unescaped and white space collapsed, joined by one space
(what the regular-expression reader gave on well-formed files).

Malformed structure is a located error, never a silently shorter corpus: a ``<DOC>`` not
closed before the next ``<DOC>`` or the end of the file (the line it opened on is named), a
part or a ``<DOCNO>`` not closed before ``</DOC>``, a ``<DOC>`` without ``<DOCNO>``, and a
file with no ``<DOC>`` at all.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Iterator
from pathlib import Path

from ragmeter.core.errors import InvalidInputError

CHUNK = 1 << 20
SEGMENT = 1 << 18
_TAG = re.compile(r"<(/?)(DOCNO|DOC|TEXT|HEADLINE|TITLE)\s*>", re.IGNORECASE)
_INNER_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_PARTS = ("TEXT", "HEADLINE", "TITLE")


def _clean(raw: str) -> str:
    """Inner tags removed, entities unescaped, white space collapsed (no list of words made)."""
    return _SPACE.sub(" ", html.unescape(_INNER_TAG.sub(" ", raw))).strip()


def _safe_cut(text: str) -> int:
    """Just past the last white space of ``text`` that is outside a tag (0: none yet)."""
    end = len(text)
    while end > 0:
        space = max(text.rfind(c, 0, end) for c in " \n\t\r")
        if space < 0:
            return 0
        opened = text.rfind("<", 0, space)
        if opened > text.rfind(">", 0, space):  # inside a tag's attributes: cut before the tag
            end = opened
            continue
        return space + 1
    return 0


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path
        self.line = 1  # of the scanning position
        self.doc_line: int | None = None  # where the open <DOC> started
        self.field: str | None = None  # DOCNO or a part, while one is open
        self.field_line = 0
        self.raw: list[str] = []  # the open field's text, as read (not yet cleaned)
        self.raw_len = 0
        self.cleaned: list[str] = []  # the open part's cleaned segments
        self.docno: str | None = None
        self.parts: list[str] = []

    def error(self, message: str, line: int | None = None) -> InvalidInputError:
        return InvalidInputError(message, file=self.path, line=line or self.line,
                                 fix="close every <DOC>, <DOCNO> and <TEXT> (TREC SGML documents)")

    def content(self, text: str) -> None:
        if self.field is None or not text:
            return
        self.raw.append(text)
        self.raw_len += len(text)
        if self.field != "DOCNO" and self.raw_len > SEGMENT:
            self._clean_segment()

    def _clean_segment(self, final: bool = False) -> None:
        """Clean the part's text read so far up to its last white space outside a tag."""
        text = "".join(self.raw)
        cut = len(text) if final else _safe_cut(text)
        if cut <= 0:
            self.raw, self.raw_len = [text], len(text)
            return
        cleaned = _clean(text[:cut])
        if cleaned:
            self.cleaned.append(cleaned)
        rest = text[cut:]
        self.raw, self.raw_len = ([rest] if rest else []), len(rest)

    def tag(self, closing: bool, name: str) -> tuple[str, str, int] | None:
        """Handle one tag; a finished document is returned."""
        name = name.upper()
        if name == "DOC":
            if closing:
                return self._end_doc()
            if self.doc_line is not None:
                raise self.error(f"the <DOC> opened on line {self.doc_line} is not closed before this <DOC>")
            self.doc_line, self.docno, self.parts = self.line, None, []
            return None
        if self.doc_line is None:
            return None  # outside a document: not part of the corpus
        if self.field is None:
            if not closing:
                self.field, self.field_line, self.raw, self.raw_len, self.cleaned = name, self.line, [], 0, []
            return None
        if closing and (name == self.field or (self.field in _PARTS and name in _PARTS)):
            if self.field == "DOCNO":
                self.docno = "".join(self.raw).strip()
            else:
                self._clean_segment(final=True)
                self.parts.append(" ".join(self.cleaned))
            self.raw, self.raw_len, self.cleaned = [], 0, []
            self.field = None
        else:
            self.content(f"<{'/' if closing else ''}{name}>")  # another tag inside a part: removed as text
        return None

    def _end_doc(self) -> tuple[str, str, int] | None:
        if self.doc_line is None:
            return None  # a stray </DOC>
        if self.field is not None:
            raise self.error(f"<{self.field}> opened on line {self.field_line} is not closed before </DOC>")
        if not self.docno:
            raise self.error(f"the <DOC> opened on line {self.doc_line} has no <DOCNO>", self.doc_line)
        done = (self.docno, " ".join(p for p in self.parts if p), self.doc_line)
        self.doc_line, self.docno, self.parts = None, None, []
        return done


def iter_sgml_docs(path: str | Path) -> Iterator[tuple[str, str, int]]:
    """``(docno, text, line of its <DOC>)`` for every document, streamed (see the module docstring)."""
    name = str(path)
    reader = _Reader(name)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    carry, read_lines, found, first = "", 1, 0, True
    try:
        f = open(path, "rb")  # noqa: SIM115  (closed below; a generator)
    except FileNotFoundError:
        raise InvalidInputError("file not found", file=name, fix="check the path") from None
    except IsADirectoryError:
        raise InvalidInputError("is a directory, not a file", file=name) from None
    with f:
        while True:
            chunk = f.read(CHUNK)
            final = not chunk
            try:
                text = carry + decoder.decode(chunk, final=final)
            except UnicodeDecodeError as exc:
                line = read_lines + chunk[:max(exc.start, 0)].count(b"\n")
                raise InvalidInputError(f"not valid UTF-8 (byte 0x{chunk[exc.start]:02x})" if exc.start < len(chunk)
                                        else "not valid UTF-8 (the file ends inside a character)", file=name,
                                        line=line, fix="save the file as UTF-8") from None
            read_lines += chunk.count(b"\n")
            if first:
                text, first = text.removeprefix("\ufeff"), False
            limit = len(text)
            if not final:  # a tag cut at the end of this piece is scanned with the next one
                cut = text.rfind("<", max(0, limit - 16))
                if cut != -1 and ">" not in text[cut:]:
                    limit = cut
            position = 0
            for m in _TAG.finditer(text, 0, limit):
                reader.content(text[position:m.start()])
                reader.line += text.count("\n", position, m.start())
                position = m.end()
                done = reader.tag(bool(m.group(1)), m.group(2))
                if done is not None:
                    found += 1
                    yield done
            reader.content(text[position:limit])
            reader.line += text.count("\n", position, limit)
            carry = text[limit:]
            if final:
                break
    if reader.doc_line is not None:
        raise reader.error(f"the <DOC> opened on line {reader.doc_line} is not closed: the file ends first",
                           reader.doc_line)
    if not found:
        raise InvalidInputError("no <DOC> found", file=name,
                                fix="give TREC SGML documents (<DOC><DOCNO>id</DOCNO><TEXT>...</TEXT></DOC>), "
                                    "or a {id, text} .jsonl / .csv corpus")
