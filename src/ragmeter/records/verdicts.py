"""Pass / Fail / Cannot verify, and the two numbers every such run reports.

- rate = Pass / (Pass + Fail): the share of verified items that passed;
- coverage = (Pass + Fail) / (items that apply): the share that could be verified.

An item that could not be verified (no record, a lookup that timed out, no calls recorded)
counts neither for nor against: it is outside the rate and lowers only the coverage. An
item that does not apply (a criterion whose condition does not hold) is outside both.
With nothing verified the rate is undefined (``None``), never 0 or 1.

>>> c = count(["pass", "pass", "fail", "cannot_verify"])
>>> c.rate, c.coverage
(0.6666666666666666, 0.75)
>>> count(["cannot_verify"]).rate is None
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

PASS, FAIL = "pass", "fail"
# The wording of the article "RAG Evaluation Metrics: Formulas and a Worked Example":
CANNOT_VERIFY = "cannot_verify"  # a fact (its Data Validation's)
UNABLE_TO_VERIFY = "unable_to_verify"  # a criterion (its Agent Assurance's)
NOT_APPLICABLE = "not_applicable"  # a criterion whose condition does not hold for the case
Verdict = Literal["pass", "fail", "cannot_verify", "unable_to_verify", "not_applicable"]
UNVERIFIED = (CANNOT_VERIFY, UNABLE_TO_VERIFY)


@dataclass(frozen=True)
class VerdictCounts:
    passed: int = 0
    failed: int = 0
    unverified: int = 0
    not_applicable: int = 0

    @property
    def verified(self) -> int:
        return self.passed + self.failed

    @property
    def applicable(self) -> int:
        return self.passed + self.failed + self.unverified

    @property
    def rate(self) -> float | None:
        """Pass / (Pass + Fail); None when nothing was verified."""
        return self.passed / self.verified if self.verified else None

    @property
    def coverage(self) -> float | None:
        """(Pass + Fail) / items that apply; None when nothing applies."""
        return self.verified / self.applicable if self.applicable else None

    def __add__(self, other: VerdictCounts) -> VerdictCounts:
        return VerdictCounts(self.passed + other.passed, self.failed + other.failed,
                             self.unverified + other.unverified, self.not_applicable + other.not_applicable)

    def as_dict(self) -> dict[str, float | int | None]:
        return {"pass": self.passed, "fail": self.failed, "unverified": self.unverified,
                "not_applicable": self.not_applicable, "rate": self.rate, "coverage": self.coverage}


def count(verdicts: Iterable[str]) -> VerdictCounts:
    """Counts of a list of verdict strings (``ValueError`` on an unknown one)."""
    p = f = u = n = 0
    for v in verdicts:
        if v == PASS:
            p += 1
        elif v == FAIL:
            f += 1
        elif v in UNVERIFIED:
            u += 1
        elif v == NOT_APPLICABLE:
            n += 1
        else:
            raise ValueError(f"unknown verdict {v!r}")
    return VerdictCounts(p, f, u, n)
