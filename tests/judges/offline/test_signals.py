"""``ragmeter.judges.offline.signals``: the offline judge's cheap evidence per (claim, passage)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from ragmeter.judges.offline.signals import content_words, names, negated, prepare, prepare_claims, quantities, signals


class Letters:
    """A fake embedder: a text's vector counts its letters a-z; a token is a word (unit vectors)."""

    identity = {"model": "letters"}

    def encode(self, texts):
        out = np.array([[t.lower().count(ch) for ch in "abcdefghijklmnopqrstuvwxyz"] for t in texts], dtype=float)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def token_vectors(self, text):
        return self.encode(text.split()) if text.split() else np.zeros((0, 26))


def test_amounts_read_with_their_units_whatever_the_spelling():
    assert quantities("a 3-year warranty") == quantities("covered for three years") == {(Decimal(36), "month")}
    assert quantities("ships in 5 business days for $1,299.50") == {(Decimal(5), "business_day"),
                                                                   (Decimal("1299.50"), "currency")}
    assert quantities("In 1995 it rained") == {(Decimal(1995), "")}  # an unknown word after it: a bare number
    assert quantities("The R2 and the X10") == set()  # codes are names, not amounts


def test_words_names_and_negation():
    assert content_words("The batteries were charged") == {"batteri", "charg"}  # stop words out, suffixes cut
    assert names("The R2 is sold by Nimbus in Sao Paulo.") == {"r2", "nimbus", "sao", "paulo"}
    assert negated("It does not ship") and negated("It isn't free") and not negated("It ships")


def test_a_row_of_evidence():
    embedder = Letters()
    (passage,) = prepare([("p1", "The battery is covered for one year. Filters are not covered.")], embedder)
    claim, changed, negative = prepare_claims(["The battery is covered for one year.",
                                               "The battery is covered for two years.",
                                               "Filters are covered."], embedder)
    row = signals(claim, passage)
    assert row["passage"] == "p1" and row["words"] == 1.0 and row["amounts"] == 1 == row["amounts_found"]
    assert row["sentence"] == pytest.approx(1.0) and row["aligned"] == 0 and not row["amounts_conflict"]
    other = signals(changed, passage)  # 24 months where the aligned sentence says 12: a conflict
    assert other["amounts_conflict"] == 1 and other["amounts_found"] == 0
    flipped = signals(negative, passage)  # aligned with "Filters are not covered."
    assert flipped["aligned"] == 1 and flipped["negation_flip"] and flipped["aligned_words"] == 1.0
