"""Acceptance criteria over what a run did, read from JSON/YAML or from each case.

A criterion is an object with one kind key, an optional ``id``, ``description`` and ``when``:

| kind | passes when |
|---|---|
| ``must_call: TOOL`` | some call to TOOL (whose arguments meet ``arguments``, if given) was made |
| ``must_not_call: TOOL`` | no call to TOOL (meeting ``arguments``, if given) was made |
| ``check_arguments: TOOL`` + ``arguments`` | every call to TOOL meets ``arguments`` (no call: not applicable) |
| ``order: [A, B, ...]`` | every call to B comes after a call to A (and so on down the list) |
| ``max_calls: N`` (+ ``tool``) | at most N calls (to ``tool``, or in all) |
| ``record: {entity, attribute, equals}`` | the system of record holds it (the order exists with the right product) |
| ``never_claim: [statements]`` | the answer's claims make none of the statements (checked by a judge) |

``arguments`` maps a JSON Pointer (or a top-level name) into the call's arguments to a
value (equality) or to ``{equals | one_of | matches | not_matches | min | max | exists}``.
``when`` makes the criterion apply only to some cases: ``question_matches``,
``answer_matches``, ``claims_match`` (regular expressions, case-insensitive, on the question,
the answer, or any answer claim; like every user pattern, searched with a time limit:
:mod:`ragmeter.core.patterns`) and ``claims_state`` (a statement the answer's claims make,
checked by the judge); several keys must all hold. ``record`` takes values written out or
read from a call: ``{from_call: TOOL, result: /order_id}`` or ``{from_call: TOOL, argument:
/product}`` (the last call to TOOL).

A file holds ``{"version": 1, "suite": [...], "cases": {"<case id>": [...]}}`` (a bare list
is a suite); a case may also carry ``"criteria": [...]``.
"""

from __future__ import annotations

import difflib
import json
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.core import patterns
from ragmeter.core.errors import InvalidInputError, InvalidParameterError, RagmeterWarning
from ragmeter.core.finite import non_finite
from ragmeter.core.yaml_file import check_size, has_yaml, load_yaml
from ragmeter.records.pointer import MISSING, resolve

KINDS = ("must_call", "must_not_call", "check_arguments", "order", "max_calls", "record", "never_claim")
_COMMON = ("id", "description", "when")
_ALLOWED = {
    "must_call": ("arguments",), "must_not_call": ("arguments",), "check_arguments": ("arguments",),
    "order": (), "max_calls": ("tool",), "record": (), "never_claim": (),
}
_OPS = ("equals", "one_of", "matches", "not_matches", "min", "max", "exists")
_WHEN = ("question_matches", "answer_matches", "claims_match", "claims_state")
INSTALL_YAML = "pip install 'ragmeter[records]' (or pyyaml)"
_BAD_ESCAPE = re.compile(r"~(?![01])")  # RFC 6901: '~' is always '~0' or '~1'


@dataclass(frozen=True)
class Constraint:
    """One condition on a call's arguments: the value at ``pointer`` and an operator."""

    pointer: str
    op: str
    value: Any

    def holds(self, arguments: Mapping[str, Any]) -> bool:
        found = resolve(arguments, self.pointer)
        if self.op == "exists":
            return (found is not MISSING) == bool(self.value)
        if found is MISSING:
            return False
        if self.op == "equals":
            return _same(found, self.value)
        if self.op == "one_of":
            return any(_same(found, v) for v in self.value)
        if self.op in ("matches", "not_matches"):  # time-bounded: PatternTimeout leaves it unverified
            hit = patterns.search(self.value, found if isinstance(found, str) else json.dumps(found), ignore_case=True)
            return hit == (self.op == "matches")
        if isinstance(found, bool) or not isinstance(found, (int, float)):
            return False
        return found >= self.value if self.op == "min" else found <= self.value

    def describe(self) -> str:
        return f"{self.pointer} {self.op} {json.dumps(self.value, default=str)}"


def _same(a: Any, b: Any) -> bool:
    """Equal, with strings compared without regard to case and spacing, and True != 1."""
    if isinstance(a, str) and isinstance(b, str):
        return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


@dataclass(frozen=True)
class Condition:
    """When a criterion applies (every given key must hold)."""

    question_matches: str | None = None
    answer_matches: str | None = None
    claims_match: str | None = None
    claims_state: str | None = None

    def describe(self) -> str:
        return ", ".join(f"{k} {v!r}" for k, v in self.__dict__.items() if v is not None)


@dataclass(frozen=True)
class ValueRef:
    """A value written out (``literal``) or read from the last call to ``from_call``."""

    literal: Any = None
    from_call: str | None = None
    argument: str | None = None  # a pointer into the call's arguments
    result: str | None = None  # a pointer into the call's result

    def describe(self) -> str:
        if self.from_call is None:
            return json.dumps(self.literal, default=str)
        part = f"argument {self.argument}" if self.argument is not None else f"result {self.result}"
        return f"{part} of the last {self.from_call} call"


@dataclass(frozen=True)
class ActionCriterion:
    id: str
    kind: str
    tool: str | None = None
    tools: tuple[str, ...] = ()
    limit: int | None = None
    constraints: tuple[Constraint, ...] = ()
    when: Condition | None = None
    entity: ValueRef | None = None
    attribute: str | None = None
    expected: ValueRef | None = None
    statements: tuple[str, ...] = ()
    description: str | None = None

    def describe(self) -> str:
        if self.description:
            return self.description
        args = f" with {'; '.join(c.describe() for c in self.constraints)}" if self.constraints else ""
        text = {
            "must_call": f"must call {self.tool}{args}",
            "must_not_call": f"must never call {self.tool}{args}",
            "check_arguments": f"every {self.tool} call has{args}",
            "order": "calls in the order " + " -> ".join(self.tools),
            "max_calls": f"at most {self.limit} call(s)" + (f" to {self.tool}" if self.tool else ""),
            "record": f"the record of {self.entity.describe() if self.entity else '?'} has {self.attribute}"
                      + (f" = {self.expected.describe()}" if self.expected else ""),
            "never_claim": "the answer never claims: " + "; ".join(self.statements),
        }.get(self.kind, self.kind)
        return text + (f" (when {self.when.describe()})" if self.when else "")


@dataclass(frozen=True)
class CriteriaSet:
    """Criteria for every case (``suite``) and for named cases (``cases``)."""

    suite: tuple[ActionCriterion, ...] = ()
    cases: Mapping[str, tuple[ActionCriterion, ...]] = field(default_factory=dict)

    def for_case(self, case_id: str, own: Sequence[ActionCriterion] = ()) -> tuple[ActionCriterion, ...]:
        """The suite's criteria, then the file's for this case, then the case's own."""
        return (*self.suite, *self.cases.get(case_id, ()), *own)


def _problem(where: str, index: int, message: str, fix: str | None = None) -> InvalidInputError:
    return InvalidInputError(message, file=where, field=f"criterion {index}", fix=fix)


def _constraints(value: Any, where: str, index: int) -> tuple[Constraint, ...]:
    if not isinstance(value, Mapping):
        raise _problem(where, index, "arguments must map argument names (or JSON Pointers) to constraints",
                       fix='arguments: {"/product": "R2", "/quantity": {"max": 1}}')
    out = []
    for key, spec in value.items():
        pointer = key if str(key).startswith("/") else "/" + str(key).replace("~", "~0").replace("/", "~1")
        if isinstance(spec, Mapping):
            for op, v in spec.items():
                if op not in _OPS:
                    raise _problem(where, index, f"unknown constraint {op!r} on {key!r}; use one of {', '.join(_OPS)}")
                if op in ("matches", "not_matches") and (why := patterns.check(v)) is not None:
                    raise _problem(where, index, f"{key!r}: {op} needs a regular expression (it {why})")
                if op in ("min", "max") and (isinstance(v, bool) or not isinstance(v, (int, float)) or non_finite(v)):
                    raise _problem(where, index, f"{key!r}: {op} needs a finite number")
                if op == "one_of" and not isinstance(v, list):
                    raise _problem(where, index, f"{key!r}: one_of needs a list")
                out.append(Constraint(pointer, op, v))
        else:
            out.append(Constraint(pointer, "equals", spec))
    return tuple(out)


def _ref(value: Any, where: str, index: int, name: str) -> ValueRef:
    if isinstance(value, Mapping) and "from_call" in value:
        extra = set(value) - {"from_call", "argument", "result"}
        picks = [k for k in ("argument", "result") if k in value]
        if extra or len(picks) != 1 or not isinstance(value["from_call"], str):
            raise _problem(where, index, f"{name}: write {{from_call: TOOL, argument: /pointer}} or "
                                         f"{{from_call: TOOL, result: /pointer}}")
        pointer = value[picks[0]]
        if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")) or _BAD_ESCAPE.search(pointer):
            bare = isinstance(pointer, str) and not pointer.startswith("/") and not _BAD_ESCAPE.search(pointer)
            raise _problem(where, index, f"{name}: {picks[0]} {pointer!r} is not a JSON Pointer (RFC 6901: empty, "
                                         f"or '/' then names, '~0' for '~' and '~1' for '/')",
                           fix=f"write {picks[0]}: /{pointer}" if bare else f"write {picks[0]}: /order_id")
        return ValueRef(None, value["from_call"], pointer if picks[0] == "argument" else None,
                        pointer if picks[0] == "result" else None)
    if isinstance(value, (Mapping, list)):
        raise _problem(where, index, f"{name} must be a value or {{from_call: TOOL, argument|result: /pointer}}")
    return ValueRef(value)


def _condition(value: Any, where: str, index: int) -> Condition:
    if not isinstance(value, Mapping) or not value or set(value) - set(_WHEN):
        raise _problem(where, index, f"when takes {', '.join(_WHEN)}")
    for key in ("question_matches", "answer_matches", "claims_match"):
        if key in value and (why := patterns.check(value[key])) is not None:
            raise _problem(where, index, f"when.{key} needs a regular expression (it {why})")
    return Condition(**{k: str(v) for k, v in value.items()})


def parse_criterion(item: Any, *, where: str = "criteria", index: int = 1) -> ActionCriterion:
    """One criterion object (see the module docstring)."""
    if not isinstance(item, Mapping):
        raise _problem(where, index, "a criterion must be an object")
    kinds = [k for k in KINDS if k in item]
    if len(kinds) != 1:
        known = {*KINDS, *_COMMON, *(k for allowed in _ALLOWED.values() for k in allowed)}
        unknown = [str(k) for k in item if k not in known]
        hints = [f"{k!r} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(k, KINDS, n=1)) else repr(k)
                 for k in unknown]
        said = f"; unknown key {', '.join(hints)}" if hints else ""
        raise _problem(where, index, f"a criterion needs exactly one of {', '.join(KINDS)} (found "
                                     f"{', '.join(kinds) or 'none'}{said})")
    kind = kinds[0]
    extra = set(item) - {kind, *_COMMON, *_ALLOWED[kind]}
    if extra:
        raise _problem(where, index, f"{kind} does not take {', '.join(sorted(extra))}")
    value = item[kind]
    when = _condition(item["when"], where, index) if "when" in item else None
    constraints = _constraints(item["arguments"], where, index) if "arguments" in item else ()
    fields: dict[str, Any] = {"kind": kind, "when": when, "constraints": constraints,
                              "description": item.get("description")}
    if kind in ("must_call", "must_not_call", "check_arguments"):
        if not isinstance(value, str) or not value:
            raise _problem(where, index, f"{kind} names one tool")
        if kind == "check_arguments" and not constraints:
            raise _problem(where, index, "check_arguments needs arguments: {...}")
        fields["tool"] = value
    elif kind == "order":
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(t, str) for t in value):
            raise _problem(where, index, "order lists two or more tools, first to last")
        fields["tools"] = tuple(value)
    elif kind == "max_calls":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _problem(where, index, "max_calls is a whole number >= 0")
        fields["limit"], fields["tool"] = value, item.get("tool")
    elif kind == "record":
        if not isinstance(value, Mapping) or "entity" not in value or not isinstance(value.get("attribute"), str) \
                or set(value) - {"entity", "attribute", "equals"}:
            raise _problem(where, index, "record takes entity, attribute and optionally equals",
                           fix="record: {entity: {from_call: create_order, result: /order_id}, attribute: product, "
                               "equals: {from_call: create_order, argument: /product}}")
        fields["entity"] = _ref(value["entity"], where, index, "entity")
        fields["attribute"] = value["attribute"]
        fields["expected"] = _ref(value["equals"], where, index, "equals") if "equals" in value else None
    else:  # never_claim
        statements = [value] if isinstance(value, str) else value
        if not isinstance(statements, list) or not statements or not all(isinstance(s, str) and s.strip()
                                                                          for s in statements):
            raise _problem(where, index, "never_claim lists one or more statements")
        fields["statements"] = tuple(s.strip() for s in statements)
    default_id = kind + (f":{fields.get('tool')}" if fields.get("tool") else "")
    cid = item.get("id", default_id)
    if not isinstance(cid, str) or not cid:
        raise _problem(where, index, "id must be a non-empty string")
    return ActionCriterion(id=cid, **fields)


def parse_criteria(items: Any, *, where: str = "criteria") -> list[ActionCriterion]:
    if not isinstance(items, list):
        raise InvalidInputError("criteria must be a list of criterion objects", file=where)
    out = [parse_criterion(item, where=where, index=i) for i, item in enumerate(items, start=1)]
    ids = [c.id for c in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InvalidInputError(f"criterion ids must differ within a list; repeated: {', '.join(dup)}", file=where,
                                fix="give each criterion an id")
    return out


def criteria_from_dict(data: Any, *, where: str = "criteria") -> CriteriaSet:
    if isinstance(data, list):
        return CriteriaSet(tuple(parse_criteria(data, where=where)))
    if not isinstance(data, Mapping) or set(data) - {"version", "suite", "cases"}:
        raise InvalidInputError("a criteria file holds version, suite and cases", file=where,
                                fix='{"version": 1, "suite": [...], "cases": {"case-id": [...]}}')
    if data.get("version", 1) != 1:
        raise InvalidInputError(f"unknown criteria version {data.get('version')!r} (this ragmeter reads 1)",
                                file=where)
    cases = data.get("cases") or {}
    if not isinstance(cases, Mapping):
        raise InvalidInputError("cases maps case ids to lists of criteria", file=where)
    return CriteriaSet(tuple(parse_criteria(data.get("suite") or [], where=f"{where} (suite)")),
                       {str(k): tuple(parse_criteria(v, where=f"{where} (case {k})")) for k, v in cases.items()})


def _read_text(path: str | Path) -> str:
    """The file's text; a folder, an unreadable file or bytes that are not UTF-8 are located errors."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InvalidInputError("no such criteria file", file=str(path)) from None
    except IsADirectoryError:
        raise InvalidInputError("is a folder, not a criteria file", file=str(path),
                                fix="give the .yaml or .json file inside it") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read the criteria file ({exc.strerror or exc})", file=str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", file=str(path), line=line,
                                fix="save the file as UTF-8") from None


def load_action_criteria(path: str | Path) -> CriteriaSet:
    """A criteria file: ``.json``, or ``.yaml`` / ``.yml`` (needs pyyaml)."""
    p = Path(path)
    check_size(p, "criteria file")
    text = _read_text(path)
    if p.suffix.lower() in (".yaml", ".yml"):
        if not has_yaml():
            raise InvalidParameterError(f"{p.name}: YAML criteria need pyyaml: {INSTALL_YAML}")
        data = load_yaml(text, file=str(path), what="criteria file")  # bounded: size, aliases, expansion
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidInputError(f"not valid JSON ({exc})", file=str(path)) from None
        except RecursionError:
            raise InvalidInputError("not valid JSON (nested too deep to read)", file=str(path)) from None
    try:
        return criteria_from_dict(data, where=str(path))
    except RecursionError:  # a YAML alias cycle or a deep value inside a criterion
        raise InvalidInputError("nested too deep to read", file=str(path)) from None


class UnknownCaseWarning(RagmeterWarning):
    """A criteria file's ``cases`` names an id that no sample has: its criteria never apply."""


def unknown_cases(criteria: CriteriaSet, ids: Iterable[str]) -> list[str]:
    """One message per case id in ``criteria.cases`` that is not in ``ids``, naming the nearest
    id (difflib), so that a typo is not a set of criteria that silently never applies."""
    known = [str(i) for i in ids]
    present = set(known)
    out = []
    for case in criteria.cases:
        if case in present:
            continue
        close = difflib.get_close_matches(case, known, n=1, cutoff=0.0)
        hint = f" (the nearest id is {close[0]!r})" if close else ""
        out.append(f"action criteria: cases names {case!r}, and no sample has that id{hint}; its criteria never "
                   f"apply")
    return out


def warn_unknown_cases(criteria: CriteriaSet, ids: Iterable[str], notify: Callable[[str], None] | None = None,
                       *, stacklevel: int = 3) -> None:
    """Say each of :func:`unknown_cases`' messages: to ``notify`` (the command line), else as an
    :class:`UnknownCaseWarning`. ``ids`` is read only where the file names cases."""
    if not criteria.cases:
        return
    for message in unknown_cases(criteria, ids):
        if notify is not None:
            notify(f"warning: {message}")
        else:
            warnings.warn(message, UnknownCaseWarning, stacklevel=stacklevel)
