"""``ragmeter.metrics.generation.kprecision``: K-Precision (Adlakha et al. 2023), words and token forms."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.metrics.generation.kprecision import squad_tokens, windows, words_k_precision


def _sample(answer: str, *passages: str, sid: str = "s") -> Sample:
    return Sample(id=sid, question="q", answer=answer,
                  retrieved=tuple(Chunk(f"p{i}", text=t) for i, t in enumerate(passages)))


def test_the_multiset_overlap_formula():
    """'warranty' twice in the answer, once in the context: it counts once (instruct-qa's Counter &)."""
    answer, context = "Warranty, warranty: the R2 is covered.", "The R2 warranty."
    # tokens: warranty warranty r2 is covered (5); in the context: r2, warranty (once)
    assert words_k_precision(answer, [context]) == 2 / 5


def test_passages_are_joined():
    assert words_k_precision("R2 warranty", ["R2 ships", "warranty"]) == 2 / 2


def test_stop_words_dropped_on_both_sides():
    assert words_k_precision("It is the R2 and it is covered", ["R2 covered"], drop_stop_words=True) == 2 / 2


def test_no_tokens_is_undefined():
    assert words_k_precision("...", ["R2"]) is None


@given(st.lists(st.sampled_from("r2 warranty covered ships case open 24 months".split()), min_size=1, max_size=12),
       st.lists(st.sampled_from("r2 warranty covered ships case open 24 months".split()), max_size=12))
def test_matches_the_counter_definition(said, known):
    expected = sum((Counter(said) & Counter(known)).values()) / len(said)
    assert words_k_precision(" ".join(said), [" ".join(known)]) == pytest.approx(expected)
    assert 0.0 <= expected <= 1.0


def test_windows_cover_every_word():
    text = " ".join(f"w{i}" for i in range(250))
    assert [len(w.split()) for w in windows(text, 120)] == [120, 120, 10]
    assert " ".join(windows(text, 120)) == text


def test_the_metric_through_evaluate():
    s = _sample("The R2 has a 24-month warranty.", "R2 warranty: 24-month.")
    r = ragmeter.evaluate([s, _sample("An answer.", sid="s2")], ["k_precision", "k_precision(stop_words='drop')"])
    assert r.outcome("k_precision", "s").value == 3 / 4  # r2 has 24month warranty: 'has' is not in the context
    assert r.outcome("k_precision(stop_words='drop')", "s").value == 1.0
    none = r.outcome("k_precision", "s2")
    assert none.status == "not_computed" and "context is empty" in none.reason
    assert squad_tokens("A  Test!") == ["test"]


def test_the_token_form_scores_a_copy_highest():
    context = "The R2 carries a 24-month limited warranty. Shipping takes five business days."
    r = ragmeter.evaluate([_sample("The R2 carries a 24-month limited warranty.", context),
                           Sample(id="t", question="q", answer="Bananas are rich in potassium.",
                                  retrieved=(Chunk("p0", text=context),))], ["k_precision(form='tokens')"])
    copy, other = r.values("k_precision(form='tokens')")
    assert copy > 0.8 > other and r.outcome("k_precision(form='tokens')", "s").provenance.as_dict()["embedder"]


def test_the_words_form_needs_no_embedder(without_onnxruntime):
    r = ragmeter.evaluate([_sample("R2 warranty", "R2 warranty")], ["k_precision", "k_precision(form='tokens')"])
    assert r.outcome("k_precision", "s").value == 1.0
    assert r.outcome("k_precision", "s").provenance.as_dict().get("embedder") is None
    tokens = r.outcome("k_precision(form='tokens')", "s")
    assert tokens.status == "not_computed" and "pip install onnxruntime" in tokens.reason
