"""``ragmeter.judges.offline.signals``: the offline judge's cheap evidence per (claim, passage)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from ragmeter.judges.offline.signals import (
    amounts,
    content_words,
    names,
    negated,
    negation_flip,
    prepare,
    prepare_claims,
    quantities,
    signals,
    words,
)


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


def test_words_of_any_script_and_a_chinese_run_as_its_bigrams():
    assert content_words("Die Garantie gilt 24 Monate") == content_words("Die Garantie gilt 24 Monaten")
    assert content_words("Zürich, São Paulo, mañana") == {"zürich", "são", "paulo", "mañana"}
    assert words("保修期为24个月") == ["保修", "修期", "期为", "24", "个月"]
    assert content_words("保修期为24个月") <= content_words("产品保修期为24个月，自购买之日起计算。")
    assert content_words("damage from a power surge") == content_words("damages from power surges")
    assert names("Ich wohne in Zürich.") == {"zürich"}


def test_a_number_in_a_name_is_the_names_not_a_bare_amount():
    assert quantities("during Apollo 11, on Windows 11.") == {(Decimal(11), "name:apollo"),
                                                              (Decimal(11), "name:windows")}
    assert quantities("In 1995 it rained; in May 2020 too") == {(Decimal(1995), ""), (Decimal(2020), "")}


def test_a_bare_number_conflicts_only_with_a_number_of_the_same_thing():
    embedder = Letters()
    (passage,) = prepare([("p", "Neil Armstrong was the first person to walk on the Moon, in 1969.")], embedder)
    first = "Neil Armstrong was the first person to walk on the Moon, in "
    apollo, year = prepare_claims([first + "1969, during Apollo 11.", first + "1970."], embedder)
    assert signals(apollo, passage)["amounts_conflict"] == 0 and signals(apollo, passage)["amounts_found"] == 1
    assert signals(year, passage)["amounts_conflict"] == 1
    assert amounts("12 claims, in 1969")[(Decimal(12), "")] >= {"claims"}
    (listing,) = prepare([("p", "Library A: 515 Flower Street, CA 92703. Library B: 3989 Lemon Street, CA 92501")],
                         embedder)
    (other,) = prepare_claims(["Library B: 3989 Lemon Street, CA 92703."], embedder)
    assert signals(other, listing)["amounts_conflict"] == 0  # a name's number conflicts with nothing


def test_a_name_with_another_number_conflicts_where_the_sentence_names_it():
    """The new-user trial: "R1" for "R2" and "Windows 10" for "Windows 11" passed as supported once
    names' numbers conflicted with nothing. The claim's name is not in the passage, and the aligned
    sentence (half of the claim's words) names the same thing with another number."""
    embedder = Letters()
    (r2,) = prepare([("p", "The R2 router carries a 24-month limited hardware warranty.")], embedder)
    r1, same = prepare_claims(["The R1 router carries a 24-month limited hardware warranty.",
                               "The R2 router carries a 24-month limited hardware warranty."], embedder)
    assert signals(r1, r2)["amounts_conflict"] == 1 and signals(same, r2)["amounts_conflict"] == 0
    (win,) = prepare([("p", "The app runs on Windows 11 and later.")], embedder)
    (ten,) = prepare_claims(["The app runs on Windows 10 and later."], embedder)
    assert signals(ten, win)["amounts_conflict"] == 1
    (both,) = prepare([("p", "The R1 and the R2 router carry a 24-month limited hardware warranty.")], embedder)
    assert signals(r1, both)["amounts_conflict"] == 0  # the passage names R1 too
    (elsewhere,) = prepare([("p", "Our offices are in Paris. The R2 ships in May.")], embedder)
    assert signals(r1, elsewhere)["amounts_conflict"] == 0  # no sentence says the claim's thing of R2


def test_a_negation_flips_only_what_the_passage_says_closely():
    embedder = Letters()
    (surges, partial, loose) = prepare([
        ("p1", "The warranty does not cover damage from power surges."),
        ("p2", "The warranty covers damage from power surges but not from water."),
        ("p3", "Accidental damage, water and power surges are handled by our partner, not us.")], embedder)
    (claim, negative) = prepare_claims(["The warranty does cover damage from power surges.",
                                        "The warranty doesn’t cover damage from power surges."], embedder)
    assert signals(claim, surges)["negation_flip"] and not signals(negative, surges)["negation_flip"]
    assert not signals(claim, partial)["negation_flip"]  # its clause says the claim as it is
    assert not signals(claim, loose)["negation_flip"]  # a negation in a sentence that says something else
    assert negation_flip([(frozenset({"cover"}), False)], [(frozenset({"cover"}), True)]) is False  # too short to tell
    assert not negated("It is not only fun but also healthy") and not negated("Report it, whether a victim or not")
