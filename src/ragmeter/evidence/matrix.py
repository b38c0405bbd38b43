"""The claim matrix: one sample's claims and their verdicts against each source (data only),
and the names of its parts that metrics declare as their evidence.

``Unavailable`` marks evidence a sample lacks (no answer, no reference, an empty context:
the metric is NotComputed) or a judgment that never validated (``failed=True``: Failed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the sources' own types, named only: a run without records or actions loads neither
    from ragmeter.actions.grade import CaseGrade
    from ragmeter.records.facts import FactCheck

# What a metric can need (its evidence). "a@b" is claim list a verified against source b. A need
# may carry one argument after a colon: "rubric:<criterion>", "answer_questions:<how many>".
ANSWER_CLAIMS, REFERENCE_CLAIMS = "answer_claims", "reference_claims"
PAIRS = ("answer@context", "answer@reference", "reference@context", "reference@answer")
# The answer claims that cite passages, each verified against only the passages it cites.
CITED = "answer@cited"
SENTENCES, QUESTIONS = "context_sentences", "answer_questions"
RUBRIC = "rubric"
# Every "rubric_joint:<criterion>" of a sample scored in one call (all dimensions in one JSON reply).
RUBRIC_JOINT = "rubric_joint"
STANDALONE = "turn_standalone"
# Two ratings (0, 1 or 2) of how well the context grounds the whole answer (Ragas's Response Groundedness).
GROUNDEDNESS = "groundedness_ratings"
# Beyond the context: facts stated in the answer checked against the user's records (the answer's
# claims turned into facts by one more call), and the run's tool calls graded against criteria.
FACTS, ACTIONS = "facts", "actions"
#: Needs that can be met without a judge (facts given in the data, criteria on tool calls);
#: what a judge would add is then missing with the reason.
JUDGE_OPTIONAL = frozenset({FACTS, ACTIONS})
# The prompts that fill each part are their providers' to say (ragmeter.evidence.provider).


def need_kind(need: str) -> str:
    """``"rubric:tone"`` -> ``"rubric"``; a need without an argument is its own kind."""
    return need.partition(":")[0]


def need_argument(need: str) -> str:
    """``"rubric:tone"`` -> ``"tone"`` (empty when the need has none)."""
    return need.partition(":")[2]


def with_argument(kind: str, argument: object) -> str:
    """``with_argument(RUBRIC, "tone")`` -> ``"rubric:tone"``."""
    return f"{kind}:{argument}"


@dataclass(frozen=True)
class Unavailable:
    reason: str
    failed: bool = False


@dataclass(frozen=True)
class Claim:
    id: int
    text: str
    addresses_question: bool | None = None
    cites: tuple[str, ...] = ()  # citation markers of the sentence the claim comes from


@dataclass(frozen=True)
class Verdict:
    claim: int
    verdict: str  # supported | contradicted | not_found
    sources: tuple[str, ...]
    combined: bool
    quote: str
    support: float | None = None  # the credit faithfulness gives the claim, where the judge weighs it (offline)
    model: float | None = None  # the offline judge's model stage: log P(supported) - log P(contradicted), if asked


@dataclass
class Evidence:
    """One sample's claims and verdict matrix (claims x sources)."""

    answer_claims: tuple[Claim, ...] | Unavailable | None = None
    declines: bool | Unavailable | None = None
    reference_claims: tuple[Claim, ...] | Unavailable | None = None
    verdicts: dict[str, tuple[Verdict, ...] | Unavailable] = field(default_factory=dict)
    sentences: tuple[str, ...] = ()
    needed_sentences: tuple[int, ...] | Unavailable | None = None
    questions: tuple[str, ...] | Unavailable | None = None
    noncommittal: bool | None = None
    rubric: dict[str, Any] = field(default_factory=dict)  # criterion -> {score, weighted, reason} | Unavailable
    rubric_joint: dict[str, Any] = field(default_factory=dict)  # the same, from the one-call rubric
    standalone: bool | Unavailable | None = None
    groundedness: dict[str, Any] = field(default_factory=dict)  # rating prompt id -> 0, 1, 2 | Unavailable
    facts: tuple[FactCheck, ...] | Unavailable | None = None  # the answer's facts against the records
    actions: CaseGrade | Unavailable | None = None  # the case's tool calls graded against its criteria
    calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        def plain(x):
            if isinstance(x, Unavailable):
                return {"unavailable": x.reason, "failed": x.failed}
            if isinstance(x, tuple):
                return [plain(i) for i in x]
            if isinstance(x, (Claim, Verdict)):
                return {k: (list(v) if isinstance(v, tuple) else v) for k, v in x.__dict__.items()
                        if not (k in ("support", "model") and v is None)}
            if hasattr(x, "as_dict"):  # a FactCheck, a CaseGrade
                return x.as_dict()
            return x
        return {"answer_claims": plain(self.answer_claims), "declines": plain(self.declines),
                "reference_claims": plain(self.reference_claims),
                "verdicts": {k: plain(v) for k, v in self.verdicts.items()},
                "needed_sentences": plain(self.needed_sentences), "sentences": list(self.sentences),
                "questions": plain(self.questions), "noncommittal": self.noncommittal,
                "rubric": {k: plain(v) for k, v in self.rubric.items()}, "standalone": plain(self.standalone),
                **({"rubric_joint": {k: plain(v) for k, v in self.rubric_joint.items()}} if self.rubric_joint else {}),
                **({"groundedness": {k: plain(v) for k, v in self.groundedness.items()}}
                   if self.groundedness else {}),
                **({"facts": plain(self.facts)} if self.facts is not None else {}),
                **({"actions": plain(self.actions)} if self.actions is not None else {}),
                "calls": self.calls}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Evidence:
        """The evidence :meth:`as_dict` wrote (a run's ``results.jsonl``): its inverse for every part
        but a graded case's ``actions``, which ``as_dict`` writes without its criteria: it is read
        back only when unavailable (else None; ``analysis/diagnosis.py`` reads the grade's
        verdicts from the dict).

        >>> ev = Evidence(answer_claims=(Claim(1, "a"),), verdicts={"answer@context": Unavailable("no context")})
        >>> Evidence.from_dict(ev.as_dict()) == ev
        True
        >>> ev = Evidence(groundedness={"groundedness.judge1": 2, "groundedness.judge2": Unavailable("x", True)},
        ...               rubric_joint={"tone": {"score": 4, "reason": "", "weighted": None}})
        >>> Evidence.from_dict(ev.as_dict()) == ev
        True
        """
        def claims(x: Any) -> tuple[Claim, ...] | Unavailable | None:
            return _unavailable(x) if isinstance(x, Mapping) else None if x is None else tuple(
                Claim(c["id"], c["text"], c.get("addresses_question"), tuple(c.get("cites") or ())) for c in x)

        def verdicts(x: Any) -> tuple[Verdict, ...] | Unavailable:
            return _unavailable(x) if isinstance(x, Mapping) else tuple(
                Verdict(v["claim"], v["verdict"], tuple(v["sources"]), v["combined"], v["quote"], v.get("support"),
                        v.get("model"))
                for v in x)

        def part(x: Any, read: Any = lambda x: x) -> Any:
            return _unavailable(x) if isinstance(x, Mapping) and "unavailable" in x else None if x is None \
                else read(x)

        facts = d.get("facts")
        if isinstance(facts, list):
            from ragmeter.records.facts import FactCheck

            facts = tuple(FactCheck.from_dict(f) for f in facts)
        actions = d.get("actions")
        return cls(answer_claims=claims(d.get("answer_claims")), declines=part(d.get("declines")),
                   reference_claims=claims(d.get("reference_claims")),
                   verdicts={k: verdicts(v) for k, v in (d.get("verdicts") or {}).items()},
                   sentences=tuple(d.get("sentences") or ()), needed_sentences=part(d.get("needed_sentences"), tuple),
                   questions=part(d.get("questions"), tuple), noncommittal=d.get("noncommittal"),
                   rubric={k: part(v) for k, v in (d.get("rubric") or {}).items()},
                   rubric_joint={k: part(v) for k, v in (d.get("rubric_joint") or {}).items()},
                   groundedness={k: part(v) for k, v in (d.get("groundedness") or {}).items()},
                   standalone=part(d.get("standalone")), facts=part(facts),
                   actions=_unavailable(actions) if isinstance(actions, Mapping) and "unavailable" in actions
                   else None, calls=int(d.get("calls") or 0))


def _unavailable(x: Mapping[str, Any]) -> Unavailable:
    return Unavailable(x["unavailable"], bool(x.get("failed", False)))
