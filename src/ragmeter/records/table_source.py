"""A system of record kept in a file: JSONL or CSV, read once, looked up in memory.

Two layouts, told apart by the header (CSV) or the keys of each line (JSONL):

- long: one row per fact, ``entity, attribute, value[, unit]``;
- wide: one row per entity, ``entity`` plus one column per attribute (a JSONL value may be
  ``{"value": ..., "unit": ...}`` to carry a unit).

Entities and attributes match without regard to case or surrounding spaces (attributes
also treat ``-`` and spaces as ``_``). Two rows that give one (entity, attribute) different
values are an error naming both lines. The identity holds the file's content hash, so a
cached lookup is never reused after the file changes.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import json
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.records.types import CannotVerify, LookupOutcome, RecordValue

_LONG = ("entity", "attribute", "value")


def _missing_attribute(columns: list[str], file: str, line: int) -> InvalidInputError | None:
    """A row with ``entity`` and ``attribute`` but no ``value`` is a long row without its value
    (refused, where it would read as one row per entity with an attribute named "attribute").
    A row with ``entity`` and ``value`` but no ``attribute`` is a long row with a misnamed
    column (``attr``, ``Attribute``, ``field``): read as one row per entity it would hold an
    attribute named "value" and every lookup would be "no record". The error names the column
    nearest to ``attribute`` (difflib), if any. ``columns`` are the names as the reader matches
    them (a JSONL line's keys; a CSV header stripped and casefolded)."""
    if "entity" in columns and "attribute" in columns and "value" not in columns:
        others = [str(c) for c in columns if c not in ("entity", "attribute", "unit")]
        close = difflib.get_close_matches("value", [c.strip().casefold() for c in others], n=1, cutoff=0.5)
        named = f' (is "{others[[c.strip().casefold() for c in others].index(close[0])]}" it?)' if close else ""
        return InvalidInputError(f'"entity" and "attribute" but no "value" column{named}', file=file, line=line,
                                 field="value", fix='add "value" (rows are entity, attribute, value, unit)')
    if "entity" not in columns or "value" not in columns or "attribute" in columns:
        return None
    others = [str(c) for c in columns if c not in ("entity", "value", "unit")]
    folded = [c.strip().casefold() for c in others]
    close = difflib.get_close_matches("attribute", folded, n=1, cutoff=0.5)
    if close:
        column = others[folded.index(close[0])]
        return InvalidInputError(f'unknown column "{column}" beside "entity" and "value" (did you mean attribute?)',
                                 file=file, line=line, field=column,
                                 fix=f'rename "{column}" to "attribute" (rows are entity, attribute, value, unit)')
    return InvalidInputError('"entity" and "value" but no "attribute" column (did you mean attribute?)',
                             file=file, line=line, field="attribute",
                             fix='add "attribute" (rows are entity, attribute, value, unit), or for one row per '
                                 'entity name each column after its attribute (not "value")')


def entity_key(entity: str) -> str:
    return " ".join(str(entity).split()).casefold()


def attribute_key(attribute: str) -> str:
    return "_".join(str(attribute).replace("-", " ").split()).casefold()


class TableSource:
    """Records from a ``.jsonl`` or ``.csv`` file (see the module docstring for the layouts)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise InvalidInputError("no such records file", file=str(path),
                                    fix="give a .jsonl or .csv file of (entity, attribute, value, unit) rows") from None
        except OSError as exc:
            raise InvalidInputError(f"cannot read the records file ({exc.strerror})", file=str(path)) from None
        self._identity = f"table:{self.path.name}@{hashlib.sha256(data).hexdigest()[:16]}"
        self._rows: dict[tuple[str, str], tuple[RecordValue, int]] = {}
        self._entities: set[str] = set()
        text = data.decode("utf-8-sig", errors="strict") if data else ""
        if self.path.suffix.lower() == ".csv":
            self._read_csv(text)
        elif self.path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
            self._read_jsonl(text)
        else:
            raise InvalidInputError("records files are .jsonl or .csv", file=str(path),
                                    fix="rename the file or convert it")

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def attributes(self) -> tuple[str, ...]:
        """Every attribute the table holds (the vocabulary a fact extraction may use)."""
        return tuple(sorted({a for _, a in self._rows}))

    def __len__(self) -> int:
        return len(self._rows)

    async def lookup(self, entity: str, attribute: str) -> LookupOutcome:
        return self.lookup_now(entity, attribute)

    def lookup_now(self, entity: str, attribute: str) -> LookupOutcome:
        """The same answer as :meth:`lookup`, without an event loop (the table is in memory)."""
        e = entity_key(entity)
        found = self._rows.get((e, attribute_key(attribute)))
        if found is not None:
            return found[0]
        if e not in self._entities:
            return CannotVerify(f"{self.path.name} has no record of {entity!r}", "no_record")
        return CannotVerify(f"{self.path.name} has no {attribute!r} for {entity!r}", "no_record")

    async def aclose(self) -> None:
        return None

    # reading
    def _add(self, line: int, entity: Any, attribute: Any, value: Any, unit: Any) -> None:
        where: dict[str, Any] = {"file": str(self.path), "line": line}
        if not isinstance(entity, (str, int)) or isinstance(entity, bool) or str(entity).strip() == "":
            raise InvalidInputError("the entity must be a non-empty string", field="entity", **where)
        if not isinstance(attribute, str) or not attribute.strip():
            raise InvalidInputError("the attribute must be a non-empty string", field="attribute", **where)
        if isinstance(value, dict) and "value" in value and set(value) <= {"value", "unit"}:
            value, unit = value["value"], value.get("unit", unit)
        if value is None or value == "":
            self._entities.add(entity_key(str(entity)))
            return  # an empty cell holds nothing
        if not isinstance(value, (str, int, float, bool)):
            raise InvalidInputError("the value must be a string, number or boolean", field="value", **where,
                                    fix='write one value per row, or {"value": ..., "unit": ...}')
        if unit is not None and not isinstance(unit, str):
            raise InvalidInputError("the unit must be a string", field="unit", **where)
        key = (entity_key(str(entity)), attribute_key(attribute))
        record = RecordValue(value, unit.strip() or None if unit else None)
        self._entities.add(key[0])
        previous = self._rows.get(key)
        if previous is not None and previous[0] != record:
            raise InvalidInputError(f"{attribute!r} of {entity!r} is {previous[0].describe()!r} on line "
                                    f"{previous[1]} and {record.describe()!r} here", field="value", **where,
                                    fix="keep one value per (entity, attribute)")
        self._rows.setdefault(key, (record, line))

    def _read_jsonl(self, text: str) -> None:
        for n, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"not valid JSON ({exc.msg})", file=str(self.path), line=n) from None
            if not isinstance(row, dict) or "entity" not in row:
                raise InvalidInputError('each line must be an object with an "entity"', file=str(self.path), line=n,
                                        fix='{"entity": "ORD-1", "attribute": "status", "value": "shipped"}')
            misnamed = _missing_attribute(list(row), str(self.path), n)
            if misnamed is not None:
                raise misnamed
            if "attribute" in row:
                self._add(n, row["entity"], row["attribute"], row.get("value"), row.get("unit"))
            else:
                for attribute, value in row.items():
                    if attribute != "entity":
                        self._add(n, row["entity"], attribute, value, None)

    def _read_csv(self, text: str) -> None:
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header is None:
            return
        names = [h.strip().casefold() for h in header]
        if "entity" not in names:
            raise InvalidInputError('the header has no "entity" column', file=str(self.path), line=1,
                                    fix="name the columns entity,attribute,value,unit (or entity plus one column "
                                        "per attribute)")
        misnamed = _missing_attribute(names, str(self.path), 1)
        if misnamed is not None:
            raise misnamed
        long = all(c in names for c in _LONG)
        for n, cells in enumerate(reader, start=2):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(names):
                raise InvalidInputError(f"{len(cells)} cells where the header has {len(names)}", file=str(self.path),
                                        line=n)
            row = dict(zip(names, cells))
            if long:
                self._add(n, row["entity"], row["attribute"], row["value"], row.get("unit") or None)
            else:
                for attribute, value in row.items():
                    if attribute != "entity":
                        self._add(n, row["entity"], header[names.index(attribute)].strip(), value, None)
