"""``judges/local/preselect.py``: which passages the local judge checks a claim against: the most
similar ones, and those sharing an exact number or a distinctive name with it."""

from __future__ import annotations

import numpy as np

from ragmeter.judges.local.preselect import names, numbers, preselect


def test_numbers_and_names_for_preselection():
    assert numbers("1,470 metres, 0.5 litres and three times") == {"1470", "0.5", "3"}
    assert names("The Nimbus X2 has error E5. Warranty covers it.") == {"nimbus", "x2", "e5"}


class Words:
    """A bag-of-words embedder: enough to rank passages by shared words."""

    def encode(self, texts):
        vocab = sorted({w.lower() for t in texts for w in t.split()})
        m = np.array([[t.lower().split().count(w) for w in vocab] for t in texts], dtype=float)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_preselection_keeps_the_most_similar_passages_and_exact_overlaps():
    passages = ["the battery lasts ten hours", "the motor is covered for 3 years", "filters are consumables",
                "register within 30 days online"]
    claims = ["the motor is covered for three years", "the battery lasts 30 days"]
    sel = preselect(claims, passages, top_k=1, embedder=Words())
    assert sel[0].keep == (1,)  # most similar; "three" = 3 is in the same passage
    assert sel[1].keep == (0, 3)  # most similar (battery) + the exact number 30
    assert [j for j, _ in sel[1].skipped] == [1, 2]
    assert preselect(claims, passages, top_k=0, embedder=None)[0].keep == (0, 1, 2, 3)  # 0: all, no embedder


def test_preselection_with_the_bundled_embedder_finds_the_warranty_passages_of_the_seed():
    """The seed's q1: cosine alone ranks the dead-on-arrival passage first for the 14-month claim;
    with the content-word share the two warranty passages come first."""
    from ragmeter.embeddings.minilm import bundled

    passages = ["The R1 router carries a 12-month limited hardware warranty from the date of purchase.",
                "The R2 router carries a 24-month limited hardware warranty from the date of purchase.",
                "Unopened products can be returned within 30 days of purchase for a full refund.",
                "To claim, open a case with the device serial number and proof of purchase. Approved claims ship a "
                "replacement within 5 business days.",
                "A device that fails within 30 days of purchase is exchanged immediately as dead on arrival."]
    claim = "A failure at 14 months falls inside the warranty period."
    assert preselect([claim], passages, top_k=2, embedder=bundled())[0].keep == (0, 1)
