"""``ragmeter.judges.sentences``: the one sentence splitter (sentencex), with list markers kept."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ragmeter.judges.sentences import is_question, split_sentences


def test_abbreviations_and_decimals_do_not_end_a_sentence():
    assert split_sentences("Mr. Smith paid $1,299.50 on Jan. 5. He left.") == [
        "Mr. Smith paid $1,299.50 on Jan. 5.", "He left."]


def test_a_list_marker_cut_off_alone_stays_with_its_item():
    """sentencex cuts "1." off a list item after a blank line; it was a sentence of its own."""
    assert split_sentences("- item one\n- item two\n\n1. **Step**: do it.") == [
        "- item one", "- item two", "1. **Step**: do it."]


def test_other_languages_use_their_own_rules():
    assert split_sentences("Am 3. Mai kam er. Er blieb.", language="de") == ["Am 3. Mai kam er.", "Er blieb."]


def test_no_words_no_sentences():
    assert split_sentences("") == [] and split_sentences("  \n\n ") == [] and split_sentences("...") == []


@given(st.lists(st.sampled_from(["The R2 ships.", "Open a case!", "Is it covered?", "Pay $5.50 now."]),
                min_size=1, max_size=6))
def test_sentences_joined_by_spaces_split_back(parts):
    assert split_sentences(" ".join(parts)) == parts


@given(st.text(max_size=200))
def test_every_word_character_is_kept_in_order(text):
    """Only segments with no letter or digit (blank lines, lone bullets) are dropped."""
    out = split_sentences(text)
    assert all(s == s.strip() and s for s in out)
    assert re.sub(r"\W", "", "".join(out)) == re.sub(r"\W", "", text)


def test_questions_are_told_apart_from_statements():
    assert is_question("Is there anything else I can help you with?") and is_question("¿Necesita ayuda con algo más?")
    assert is_question("您还有其他问题吗？") and is_question("Anything else? [1]")
    assert not is_question("It ships in 5 days.") and not is_question("Covered; see clause 2;")


def test_an_offer_of_help_states_nothing_but_a_number_in_it_is_checked():
    from ragmeter.judges.sentences import is_courtesy

    for text in ("Let me know if you need anything else!", "Please feel free to reach out.", "**Hope this helps!**",
                 "If you have any other questions, don't hesitate to ask.", "I'm happy to help further.",
                 "If you have any questions, feel free to ask."):
        assert is_courtesy(text), text
    for text in ("Let me explain: the warranty lasts 24 months.", "Feel free to call 555-0100.",
                 "If you have questions about returns, the policy is 30 days.", "Help is free.",
                 "If you have any questions about the appeal costs, you can contact the trial court."):
        assert not is_courtesy(text), text
