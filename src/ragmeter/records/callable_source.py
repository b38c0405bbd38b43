"""Records from a Python function you write: ``fn(entity, attribute)``, sync or async.

The function returns the value (a string, number or boolean), ``(value, unit)``,
``{"value": ..., "unit": ...}``, a :class:`RecordValue`, ``None`` for "no such record", or a
:class:`CannotVerify` of its own. It runs where it can be abandoned
(:class:`ragmeter.core.abandonable.Abandonable`: a sync function in a daemon thread of its
own, an async one on a loop in a daemon thread), so one that blocks forever costs one
lookup its time limit (the lookup wrapper's), never the run; anything it raises,
``SystemExit`` and ``KeyboardInterrupt`` included, fails that lookup only (the user's
Ctrl-C, delivered to the main thread, still stops the run).

Read-only is up to the function: ragmeter calls it with the two strings and nothing else.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ragmeter.core.abandonable import Abandonable, Raised, TooManyAbandoned
from ragmeter.core.errors import InvalidParameterError
from ragmeter.records.types import CannotVerify, LookupOutcome, RecordValue


class CallableSource:
    """Records from ``fn(entity, attribute)``; ``identity`` defaults to the function's
    module and qualified name (give one when the function's answers depend on more)."""

    def __init__(self, fn: Callable[[str, str], Any], *, identity: str | None = None) -> None:
        if not callable(fn):
            raise InvalidParameterError(f"a callable record source needs a function, got {type(fn).__name__}")
        self.fn = fn
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self._identity = identity or f"python:{getattr(fn, '__module__', '?')}:{name}"
        self._runner = Abandonable(name="ragmeter-records")

    @classmethod
    def from_path(cls, target: str) -> CallableSource:
        """``module:function`` (dots allowed in both: ``pkg.mod:Class.method``)."""
        module_name, sep, attr = target.partition(":")
        if not sep or not module_name or not attr:
            raise InvalidParameterError(f"python:{target}: write python:<module>:<function>, e.g. "
                                        f"python:myrecords:lookup")
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise InvalidParameterError(f"python:{target}: cannot import {module_name!r} ({exc}); run from the "
                                        f"folder that holds it or add it to PYTHONPATH") from None
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise InvalidParameterError(f"python:{target}: {module_name!r} has no {attr!r}")
            obj = getattr(obj, part)
        return cls(obj, identity=f"python:{target}")

    @property
    def identity(self) -> str:
        return self._identity

    async def lookup(self, entity: str, attribute: str) -> LookupOutcome:
        try:
            answer = await self._runner.call(self.fn, entity, attribute)
        except TooManyAbandoned as exc:
            return CannotVerify(f"{self._identity}: not called for ({entity!r}, {attribute!r}): {exc} (the function "
                                f"blocks; give it a timeout of its own)", "error")
        if isinstance(answer, Raised):  # the type only: a message may hold a connection string
            return CannotVerify(f"{self._identity}: the lookup of ({entity!r}, {attribute!r}) raised "
                                f"{type(answer.error).__name__}", "error")
        return as_outcome(answer, entity=entity, attribute=attribute, where=self._identity)

    async def aclose(self) -> None:
        self._runner.close()


def as_outcome(answer: Any, *, entity: str, attribute: str, where: str) -> LookupOutcome:
    """What a user function returned, as a lookup outcome (anything else is an error)."""
    if isinstance(answer, (RecordValue, CannotVerify)):
        return answer
    if answer is None:
        return CannotVerify(f"{where} has no {attribute!r} for {entity!r}", "no_record")
    if isinstance(answer, (str, int, float, bool)):
        return RecordValue(answer)
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], (str, int, float, bool)) \
            and (answer[1] is None or isinstance(answer[1], str)):
        return RecordValue(answer[0], answer[1] or None)
    if isinstance(answer, dict) and "value" in answer and set(answer) <= {"value", "unit"}:
        inner = answer["value"]
        pair = None if inner is None else (inner, answer.get("unit"))
        return as_outcome(pair, entity=entity, attribute=attribute, where=where)
    return CannotVerify(f"{where} returned {type(answer).__name__} for ({entity!r}, {attribute!r}); return a value, "
                        f"(value, unit), {{'value', 'unit'}} or None", "error")
