"""What a record lookup returns, and the one protocol every record source follows.

A lookup asks the user's system of record for one attribute of one entity
(``lookup("ORD-1042", "status")``) and gets either the stored value or a reason it could
not: ``RecordValue | CannotVerify``. A source never raises for a failed lookup; the
wrapper in :mod:`ragmeter.records.lookup` turns anything a source still raises, and any
lookup past its time limit, into ``CannotVerify`` too.

Sources are read-only by construction: the table reads a file, the HTTP source can only
send GET, the MCP source can only call the tools the user allow-listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

JsonScalar = str | int | float | bool | None

# Why a lookup gave no value. "no_record" is the system of record's own answer (there is no
# such entity or attribute) and may be cached; the others are failures and never are.
CannotVerifyKind = Literal["no_record", "timeout", "error", "refused"]


@dataclass(frozen=True, slots=True)
class RecordValue:
    """The value the system of record holds for (entity, attribute), with its unit if any."""

    value: JsonScalar
    unit: str | None = None

    def describe(self) -> str:
        text = "null" if self.value is None else str(self.value)
        return f"{text} {self.unit}" if self.unit else text


@dataclass(frozen=True, slots=True)
class CannotVerify:
    """No value: ``kind`` says why (``no_record``, ``timeout``, ``error``, ``refused``) and
    ``reason`` says it in words, naming the source and what to fix where there is a fix."""

    reason: str
    kind: CannotVerifyKind = "error"

    @property
    def final(self) -> bool:
        """True when asking again would give the same answer (only "no record" is)."""
        return self.kind == "no_record"


LookupOutcome = RecordValue | CannotVerify


@runtime_checkable
class RecordSource(Protocol):
    """A read-only system of record.

    ``identity`` names the source for cache keys and provenance: stable across runs,
    changed whenever the source's answers could change (a table's content hash, an
    HTTP template, an MCP command and tool), and free of credentials.
    """

    @property
    def identity(self) -> str: ...

    async def lookup(self, entity: str, attribute: str) -> LookupOutcome: ...

    async def aclose(self) -> None: ...
