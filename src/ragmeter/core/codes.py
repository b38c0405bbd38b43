"""Chunk ids -> integer codes by array operations on their UTF-8 bytes, one code per distinct id.

A Python dict costs a hash and a few memory reads per id (a microsecond on a busy machine,
where a million ids are 50,000 samples' lists); here the ids of a whole batch are coded at once:

- an id of at most :data:`MAX_PACKED` bytes is packed into 64-bit words: the first holds its
  length (top byte) and first 7 bytes, the next ones 8 bytes each, zero padded; the packed words
  are the id, exactly;
- its key is ``sum(word_j * K_j) mod 2**64`` (odd constants): for an id of up to 7 bytes (one
  word) a one-to-one map, so such ids are equal exactly when their keys are; longer ids are
  checked word for word wherever their keys match;
- the batch's distinct keys are looked up in the table's sorted keys (a binary search each,
  in C); ids not in the table get the next codes, and their text joins
  :attr:`IdCodes.vocabulary` (code -> id);
- a longer id goes through a dict.

Two different ids with one key (a 64-bit hash collision between ids of 8 bytes or more) are
reported as ``None``, before the table changes: the caller then codes its input another way.

>>> t = IdCodes()
>>> t.code_strings(["b", "a", "b", "x" * 70]).tolist(), t.code_strings(["a", "c"]).tolist()
([1, 0, 1, 2], [0, 3])
>>> t.vocabulary == ["a", "b", "x" * 70, "c"], t.blank.tolist()
(True, [False, False, False, False])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CODE = np.int32
MAX_PACKED = 64  # bytes: a longer id is coded through a dict
_K = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
               0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9,
               0x2545F4914F6CDD1D], dtype=np.uint64)
_LOW = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [2**64 - 1], dtype=np.uint64)  # the low i bytes


def pack(buf: bytes, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """The packed words of the ids ``buf[starts[i]:starts[i] + lengths[i]]`` ((n, width) uint64;
    ``buf`` ends with at least ``8 * width`` bytes past every id)."""
    at = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))  # the 8 bytes at each offset
    words = np.empty((len(starts), width), dtype=np.uint64)
    words[:, 0] = (at[starts] & _LOW[np.minimum(lengths, 7)]) | (lengths.astype(np.uint64) << np.uint64(56))
    for j in range(1, width):
        offset = 7 + 8 * (j - 1)
        words[:, j] = at[starts + offset] & _LOW[np.clip(lengths - offset, 0, 8)]
    return words


class IdCodes:
    """A growing table of distinct ids: ``vocabulary[code]`` is the id, ``blank[code]`` whether
    it is empty or whitespace only (``not id.strip()``)."""

    __slots__ = ("vocabulary", "blank", "_slots", "_words", "_long")

    def __init__(self) -> None:
        self.vocabulary: list[str] = []
        self.blank = np.zeros(0, dtype=bool)
        self._slots = _Slots()  # key -> code
        self._words = np.zeros((0, 1), dtype=np.uint64)  # by code (a long id's row unused)
        self._long: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.vocabulary)

    def code_strings(self, ids: Sequence[str]) -> np.ndarray | None:
        """The codes of these ids (any strings, lone surrogates too)."""
        if not ids:
            return np.zeros(0, dtype=CODE)
        joined = "".join(ids)
        if joined.isascii():
            data = joined.encode()
            lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        else:
            encoded = [s.encode("utf-8", "surrogatepass") for s in ids]
            data = b"".join(encoded)
            lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(ids))
        return self.code_spans(data, np.cumsum(lengths) - lengths, lengths)

    def code_spans(self, buf: bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        """The codes of the ids whose UTF-8 bytes are ``buf[starts[i]:starts[i] + lengths[i]]``."""
        codes = np.empty(len(starts), dtype=CODE)
        if not len(starts):
            return codes
        long = lengths > MAX_PACKED
        short = np.flatnonzero(~long) if long.any() else None
        s, n = (starts, lengths) if short is None else (starts[short], lengths[short])
        if len(s):
            got = self._code_packed(buf, s, n)
            if got is None:
                return None
            if short is None:
                return got
            codes[short] = got
        for i in np.flatnonzero(long).tolist():
            codes[i] = self._code_long(bytes(buf[starts[i]:starts[i] + lengths[i]]))
        return codes

    def _code_long(self, data: bytes) -> int:
        code = self._long.get(data)
        if code is None:
            code = self._long[data] = len(self.vocabulary)
            self._add([data.decode("utf-8", "surrogatepass")], np.zeros((1, self._words.shape[1]), np.uint64))
        return code

    def _code_packed(self, buf: bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        longest = int(lengths.max())
        width = max(1 + longest // 8, self._words.shape[1])  # 7 bytes in the first word, then 8 a word
        padded = buf + bytes(8 * width)
        words = pack(padded, starts, lengths, width)
        keys = (words * _K[:width]).sum(axis=1, dtype=np.uint64)
        if width > self._words.shape[1]:  # longer ids than before: zero words (no key changes)
            self._words = np.pad(self._words, ((0, 0), (0, width - self._words.shape[1])))
        codes = self._slots.find(keys)
        known = np.flatnonzero(codes >= 0)
        if width > 1 and len(known) and not np.array_equal(self._words[codes[known]], words[known]):
            return None  # a key shared by two different ids
        missing = np.flatnonzero(codes < 0)
        if not len(missing):
            return codes
        # the new ids: their distinct keys (sorted), one member of each, and each one's group
        new_keys = keys[missing]
        order = np.argsort(new_keys)
        ordered = new_keys[order]
        first = np.empty(len(ordered), dtype=bool)
        first[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        unique, rep = ordered[first], missing[order[first]]
        group = np.empty(len(ordered), dtype=np.int64)
        group[order] = np.cumsum(first) - 1
        if longest > 7 and not np.array_equal(words[missing], words[rep][group]):
            return None
        base = len(self.vocabulary)
        fresh = np.arange(base, base + len(unique), dtype=CODE)
        codes[missing] = fresh[group]
        self._add(_texts(padded, starts[rep], lengths[rep]), words[rep])
        self._slots.add(unique, fresh)
        return codes

    def _add(self, texts: list[str], words: np.ndarray) -> None:
        self.vocabulary.extend(texts)
        self.blank = np.concatenate([self.blank, _blank(texts)])
        self._words = np.concatenate([self._words, words])


def _blank(texts: list[str]) -> np.ndarray:
    """Whether each text is empty or whitespace only (``not t.strip()``: ``isspace`` is true for
    exactly the non-empty strings ``strip`` empties)."""
    if all(texts) and not any(map(str.isspace, texts)):
        return np.zeros(len(texts), dtype=bool)
    return np.fromiter((not t.strip() for t in texts), bool, len(texts))


def _texts(buf: bytes, starts: np.ndarray, lengths: np.ndarray) -> list[str]:
    """The ids ``buf[starts[i]:starts[i] + lengths[i]]`` as text: their bytes gathered with a
    newline between them and decoded at once (an id holding a newline one at a time)."""
    data = np.frombuffer(buf, dtype=np.uint8)
    total = int(lengths.sum())
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    content = data[np.repeat(starts, lengths) + within]
    if (content == 0x0A).any():
        return [buf[a:a + m].decode("utf-8", "surrogatepass") for a, m in zip(starts.tolist(), lengths.tolist())]
    joined = np.full(total + len(lengths) - 1, 0x0A, dtype=np.uint8)
    joined[np.arange(total) + np.repeat(np.arange(len(lengths)), lengths)] = content
    return joined.tobytes().decode("utf-8", "surrogatepass").split("\n")


class _Slots:
    """key -> code in an open-addressing table (linear probing, at most half full), looked up
    and filled a whole array of keys at a time: each round reads one slot per key left."""

    __slots__ = ("keys", "codes", "size", "_shift")

    def __init__(self, bits: int = 12) -> None:
        self.keys = np.zeros(1 << bits, dtype=np.uint64)
        self.codes = np.full(1 << bits, -1, dtype=CODE)
        self.size = 0
        self._shift = np.uint64(64 - bits)

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return ((keys * np.uint64(0x9E3779B97F4A7C15)) >> self._shift).astype(np.intp)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Each key's code, -1 where the table does not hold it."""
        out = np.full(len(keys), -1, dtype=CODE)
        todo, at = np.arange(len(keys)), self._home(keys)
        mask = len(self.codes) - 1
        while len(todo):
            code = self.codes[at]
            taken = code >= 0
            hit = taken & (self.keys[at] == keys[todo])
            out[todo[hit]] = code[hit]
            on = taken & ~hit  # a slot held by another key: the next one
            todo, at = todo[on], (at[on] + 1) & mask
        return out

    def add(self, keys: np.ndarray, codes: np.ndarray) -> None:
        """Put in these keys (distinct, none held yet) with their codes."""
        if 2 * (self.size + len(keys)) > len(self.codes):
            held = self.codes >= 0
            old_keys, old_codes = self.keys[held], self.codes[held]
            bits = max(12, (2 * (self.size + len(keys))).bit_length())
            self.__init__(bits)  # type: ignore[misc]
            self.add(old_keys, old_codes)
        todo, at = np.arange(len(keys)), self._home(keys)
        mask = len(self.codes) - 1
        while len(todo):
            free = np.flatnonzero(self.codes[at] < 0)
            slots, first = np.unique(at[free], return_index=True)  # one key per free slot this round
            won = free[first]
            self.keys[slots] = keys[todo[won]]
            self.codes[slots] = codes[todo[won]]
            left = np.ones(len(todo), dtype=bool)
            left[won] = False
            todo, at = todo[left], (at[left] + 1) & mask
        self.size += len(keys)
