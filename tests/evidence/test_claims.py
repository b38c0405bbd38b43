"""``evidence/claims.py``: the answer's claims extracted, then verified against each source the
needs name: the article's q1, worked by hand, through a judge that answers as the article does."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.evidence.claims import passages_for
from ragmeter.evidence.matrix import Unavailable
from tests import seed_judge
from tests.evidence.gathering import gather
from tests.records.test_lookup import WARRANTY_RECORDS

WARRANTY = WARRANTY_RECORDS.parent


def test_the_articles_q1_claims_and_verdicts():
    q1 = ragmeter.load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl").samples[0]
    (ev,), seen = gather([q1], {"answer@context"}, seed_judge.scripted)
    assert [c.text for c in ev.answer_claims] == seed_judge.ANSWER_CLAIMS
    verdicts = ev.verdicts["answer@context"]
    assert [(v.verdict, list(v.sources)) for v in verdicts] == seed_judge.VERDICTS[("answer", "context")]
    assert [prompt for prompt, _ in seen] == ["claims.extract", "claims.verify"]  # one call per stage


def test_a_source_without_text_is_unavailable_and_no_call_is_made_for_it():
    sample = Sample(id="s", question="q", answer="24 months.")
    assert passages_for(sample, "context") == Unavailable("the context is empty")
    (ev,), seen = gather([sample], {"answer@reference"}, seed_judge.scripted)
    assert ev.verdicts["answer@reference"] == Unavailable("the sample has no reference answer") and len(seen) == 1


def test_a_chunk_without_text_stops_the_run_before_any_call():
    sample = Sample(id="s", question="q", answer="a", retrieved=(Chunk("c7"),))
    with pytest.raises(InvalidInputError, match="c7"):
        gather([sample], {"answer@context"}, seed_judge.scripted)
