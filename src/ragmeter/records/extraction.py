"""The judge call that turns answer claims into checkable facts (prompt ``facts.extract``).

One call per answered sample, after the claims are extracted (the facts point at the
claim matrix's claim numbers). The caller builds the request from these parts::

    JudgeRequest(load_prompt(PROMPT_ID), fact_inputs(question, claims, attributes=...),
                 FACTS_SCHEMA, SCHEMA_NAME)

and reads the validated reply with :func:`parse_facts`. ``attributes`` is the vocabulary the
records hold (``TableSource.attributes``, an HTTP source's pointer names, or the user's
list); ``entities`` names the identifiers the sample is about (``{"ORD-1042": "the
customer's order"}``) so that "your order" resolves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ragmeter.records.facts import Fact
from ragmeter.records.table_source import attribute_key

PROMPT_ID = "facts.extract"
SCHEMA_NAME = "facts"
NONE_GIVEN = "(none given)"

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {
        "type": "object",
        "properties": {"claim_id": {"type": "integer"}, "entity": {"type": "string"},
                       "attribute": {"type": "string"}, "value": {"type": "string"},
                       "unit": {"type": ["string", "null"]}},
        "required": ["claim_id", "entity", "attribute", "value", "unit"], "additionalProperties": False}}},
    "required": ["facts"],
    "additionalProperties": False,
}


class ClaimLike(Protocol):
    """What a claim needs to be listed: the claim matrix's ``Claim`` has both."""

    @property
    def id(self) -> int: ...

    @property
    def text(self) -> str: ...


ClaimInput = ClaimLike | tuple[int, str]


def _pair(claim: ClaimInput) -> tuple[int, str]:
    if isinstance(claim, tuple):
        return int(claim[0]), str(claim[1])
    return int(claim.id), str(claim.text)


def fact_inputs(question: str | None, claims: Sequence[ClaimInput], *, attributes: Sequence[str] | None = None,
                entities: Mapping[str, str] | Sequence[str] | None = None) -> dict[str, str]:
    """The prompt's inputs: the claims numbered as in the claim matrix."""
    listing = "\n".join(f"{i}. {t}" for i, t in map(_pair, claims))
    if isinstance(entities, Mapping):
        named = "\n".join(f"{k}: {v}" for k, v in entities.items())
    else:
        named = "\n".join(str(e) for e in entities or ())
    return {"question": question or "(none)", "claims": listing or "(none)",
            "attributes": ", ".join(attributes) if attributes else NONE_GIVEN + ": use the attribute name the claim "
                                                                               "implies, in snake_case",
            "entities": named or NONE_GIVEN}


def parse_facts(value: Mapping[str, Any], *, claim_ids: Sequence[int] | None = None,
                attributes: Sequence[str] | None = None) -> tuple[list[Fact], list[str]]:
    """Facts from a validated reply, and the problems with the items left out (a claim number
    that does not exist, an empty entity). Attributes are respelled as the records list them."""
    known = {attribute_key(a): a for a in attributes or ()}
    facts: list[Fact] = []
    problems: list[str] = []
    for i, item in enumerate(value.get("facts") or [], start=1):
        claim_id = item.get("claim_id")
        if claim_ids is not None and claim_id not in claim_ids:
            problems.append(f"fact {i} points at claim {claim_id}, which does not exist")
            continue
        entity, attribute = str(item.get("entity") or "").strip(), str(item.get("attribute") or "").strip()
        if not entity or not attribute:
            problems.append(f"fact {i} names no entity or no attribute")
            continue
        unit = item.get("unit")
        facts.append(Fact(entity, known.get(attribute_key(attribute), attribute), item.get("value"),
                          unit.strip() or None if isinstance(unit, str) else None, claim_id))
    return facts, problems
