"""``LabelColumns``: a label-only dataset held as arrays, so label metrics never build a
``Sample`` (nor a Python object per chunk id) per record.

A dataset whose every record is a plain label record (an id, a question, the retrieved ids and
the relevance labels, nothing judged) is held as:

- ``ids``: each sample's id, in dataset order;
- ``vocabulary``: every distinct chunk id of the file once; a chunk id is held as its index
  there (its code, int32), so equal ids are equal codes and a grade is found by comparing
  integers;
- ``ranked`` / ``ranked_starts``: every sample's retrieved codes in rank order, end to end
  (sample i's are ``ranked[ranked_starts[i]:ranked_starts[i + 1]]``);
- ``labels`` / ``grades`` / ``label_starts``: every sample's labeled codes and their grades
  (float64) in the order the record gives them, the same way.

``retrieved[i]`` and ``relevance[i]`` give sample i's ranked ids and id -> grade labels (built
when read): exactly what ``Sample.ranked_ids("retrieved")`` and ``Sample.relevance`` give for
the sample built from the same record, so a kernel fed from either scores the same numbers.

>>> c = LabelColumns.from_lists(["q1", "q2"], [["a", "b"], ["b"]], [{"b": 2.0}, {}])
>>> c.retrieved[0], c.relevance[0], len(c), c.ranked.tolist(), list(c.vocabulary)
(('a', 'b'), {'b': 2.0}, 2, [0, 1, 1], ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ragmeter.core.codes import CODE, IdCodes

if TYPE_CHECKING:
    from ragmeter.core.sample import Sample


def starts_of(lengths: Sequence[int] | np.ndarray) -> np.ndarray:
    """``[0, l0, l0 + l1, ...]``: where each of the pieces of these lengths starts, end to end."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


class LabelColumns:
    """Per-sample ids, ranked chunk codes and labels, in dataset order (see the module)."""

    __slots__ = ("ids", "vocabulary", "ranked", "ranked_starts", "labels", "grades", "label_starts")

    def __init__(self, ids: Sequence[str], vocabulary: Sequence[str], ranked: np.ndarray, ranked_starts: np.ndarray,
                 labels: np.ndarray, grades: np.ndarray, label_starts: np.ndarray) -> None:
        self.ids, self.vocabulary = ids, vocabulary
        self.ranked, self.ranked_starts = ranked, ranked_starts
        self.labels, self.grades, self.label_starts = labels, grades, label_starts

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"<LabelColumns: {len(self)} samples, {len(self.vocabulary)} distinct chunk ids>"

    def __eq__(self, other: object) -> bool:
        """Equal when they hold the same samples (ids, ranked ids and labels), however coded."""
        if not isinstance(other, LabelColumns):
            return NotImplemented
        return (list(self.ids) == list(other.ids) and list(self.retrieved) == list(other.retrieved)
                and [list(r.items()) for r in self.relevance] == [list(r.items()) for r in other.relevance])

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (LabelColumns, (list(self.ids), list(self.vocabulary), self.ranked, self.ranked_starts, self.labels,
                               self.grades, self.label_starts))

    @property
    def retrieved(self) -> RankedIds:
        """Each sample's ranked chunk ids (a tuple per sample, built when read)."""
        return RankedIds(self)

    @property
    def relevance(self) -> Labels:
        """Each sample's chunk id -> grade labels (a dict per sample, built when read)."""
        return Labels(self)

    def ranked_lengths(self) -> np.ndarray:
        return np.diff(self.ranked_starts)

    def label_counts(self) -> np.ndarray:
        return np.diff(self.label_starts)

    def ranked_ids(self, i: int) -> tuple[str, ...]:
        vocabulary = self.vocabulary
        return tuple([vocabulary[c] for c in self.ranked[self.ranked_starts[i]:self.ranked_starts[i + 1]].tolist()])

    def labels_of(self, i: int) -> dict[str, float]:
        vocabulary, a, b = self.vocabulary, self.label_starts[i], self.label_starts[i + 1]
        return dict(zip([vocabulary[c] for c in self.labels[a:b].tolist()], self.grades[a:b].tolist()))

    def cut(self, start: int, stop: int) -> LabelColumns:
        """Samples ``start:stop`` (the arrays sliced, the vocabulary shared)."""
        r0, r1 = int(self.ranked_starts[start]), int(self.ranked_starts[stop])
        l0, l1 = int(self.label_starts[start]), int(self.label_starts[stop])
        return LabelColumns(self.ids[start:stop], self.vocabulary, self.ranked[r0:r1],
                            self.ranked_starts[start:stop + 1] - r0, self.labels[l0:l1], self.grades[l0:l1],
                            self.label_starts[start:stop + 1] - l0)

    @classmethod
    def joined(cls, parts: Sequence[LabelColumns]) -> LabelColumns:
        """The samples of several columns end to end (one vocabulary: a part coded against
        another vocabulary is coded again)."""
        if len(parts) == 1:
            return parts[0]
        vocabulary = parts[0].vocabulary
        if all(p.vocabulary is vocabulary for p in parts):
            ranked = [p.ranked for p in parts]
            labels = [p.labels for p in parts]
        else:  # each part's codes through its vocabulary's codes in one table
            vocabulary, moved = coded(*[list(p.vocabulary) for p in parts])
            ranked = [to[p.ranked] for to, p in zip(moved, parts)]
            labels = [to[p.labels] for to, p in zip(moved, parts)]
        return cls(list(chain.from_iterable(p.ids for p in parts)), vocabulary,
                   np.concatenate(ranked).astype(CODE, copy=False),
                   starts_of(np.concatenate([p.ranked_lengths() for p in parts])),
                   np.concatenate(labels).astype(CODE, copy=False), np.concatenate([p.grades for p in parts]),
                   starts_of(np.concatenate([p.label_counts() for p in parts])))

    @classmethod
    def from_lists(cls, ids: Sequence[str], retrieved: Sequence[Sequence[str]],
                   relevance: Sequence[Mapping[str, float]]) -> LabelColumns:
        """The columns of ranked id lists and id -> grade maps (one of each per sample)."""
        vocabulary, (ranked, labels) = coded(list(chain.from_iterable(retrieved)), list(chain.from_iterable(relevance)))
        grades = np.array(list(chain.from_iterable(map(dict.values, map(dict, relevance)))), dtype=np.float64)
        return cls(list(ids), vocabulary, ranked, starts_of(list(map(len, retrieved))), labels, grades,
                   starts_of(list(map(len, relevance))))

    @classmethod
    def from_samples(cls, samples: Sequence[Sample]) -> LabelColumns:
        """The columns of samples already built (tests, and data given as samples)."""
        return cls.from_lists([s.id for s in samples], [s.ranked_ids("retrieved") for s in samples],
                              [s.relevance for s in samples])


def coded(*lists: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """(vocabulary, the codes of each list) in one table; where two ids share a key (a 64-bit
    collision, never seen) by a dict instead."""
    table = IdCodes()
    out = []
    for ids in lists:
        codes = table.code_strings(ids)
        if codes is None:
            index: dict[str, int] = {}
            for cid in chain.from_iterable(lists):
                index.setdefault(cid, len(index))
            return list(index), [np.array([index[c] for c in ids], dtype=CODE) for ids in lists]
        out.append(codes)
    return table.vocabulary, out


class _PerSample(Sequence[Any]):
    """A read-only sequence of one value per sample, each built from the columns when read."""

    __slots__ = ("_columns",)

    def __init__(self, columns: LabelColumns) -> None:
        self._columns = columns

    def __len__(self) -> int:
        return len(self._columns)

    def _at(self, i: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        n = len(self)
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(n))]
        i = index.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("sample index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[Any]:
        return map(self._at, range(len(self)))


class RankedIds(_PerSample):
    """``columns.retrieved``: sample i's ranked chunk ids, a tuple."""

    __slots__ = ()

    def _at(self, i: int) -> tuple[str, ...]:
        return self._columns.ranked_ids(i)

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        c = self._columns
        vocabulary, starts = c.vocabulary, c.ranked_starts.tolist()
        names = [vocabulary[code] for code in c.ranked.tolist()]
        return (tuple(names[a:b]) for a, b in zip(starts, starts[1:]))


class Labels(_PerSample):
    """``columns.relevance``: sample i's chunk id -> grade labels, a dict."""

    __slots__ = ()

    def _at(self, i: int) -> dict[str, float]:
        return self._columns.labels_of(i)

    def __iter__(self) -> Iterator[dict[str, float]]:
        c = self._columns
        vocabulary, starts = c.vocabulary, c.label_starts.tolist()
        names, grades = [vocabulary[code] for code in c.labels.tolist()], c.grades.tolist()
        return (dict(zip(names[a:b], grades[a:b])) for a, b in zip(starts, starts[1:]))
