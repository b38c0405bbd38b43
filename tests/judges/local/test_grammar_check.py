"""The Python prefix check that lets the local judge skip llama.cpp's grammar sampler where the
unconstrained argmax is allowed (``judges/local/grammar_check.py``)."""

from __future__ import annotations

import pytest

from ragmeter.judges.local import grammar_check
from ragmeter.judges.local.extract import CLAIM_LIST


def _check():
    check = grammar_check.PrefixCheck(grammar_check._compiled(grammar_check.PATTERNS[grammar_check.CLAIM_LIST_GBNF]))
    return check


@pytest.mark.parametrize("text", ['{', '{"claims": ["a', '{"claims": ["a\\', '{"claims": ["a\\u00e', '{ "claims" : [ ]',
                                  '{"claims": ["a"]}', '{"claims": ["a", "b"]} ', '{\n  "claims": [\n    "x"',
                                  '{"claims": ["caf\u00e9 \u00e0 9:00"', '{"claims": []}\n\n\t'])
def test_prefixes_of_the_claim_list_grammar_are_allowed(text):
    assert _check().allows(text.encode())


@pytest.mark.parametrize("text", ['[', ' {', '{"claims":  [', '{"claim": [', '{"claims": ["a"', '{"claims": ["a\\x',
                                  '{"claims": ["a\nb"', '{"claims": ["a"]}\n\n\n', '{"claims": ["a",]',
                                  '{"claims": ["a"] "b"', '{"claims": ["a"]} x', '{"claims": ["a\x7f'])
def test_what_the_grammar_refuses_is_refused(text):
    check = _check()
    if text == '{"claims": ["a"':  # a prefix (the string may go on): allowed; a second string needs a comma
        assert check.allows(text.encode()) and not check.allows((text + ' "b"').encode())
        return
    assert not check.allows(text.encode())


def test_the_end_is_allowed_only_after_a_whole_sentence():
    check = _check()
    check.take(b'{"claims": ["a"]')
    assert not check.complete()
    check.take(b"}")
    assert check.complete()


def test_unsure_pieces_go_to_the_grammar_sampler():
    check = _check()
    check.take(b'{"claims": ["caf')
    assert not check.allows(b"\xc3")  # half a character: unsure
    assert not check.allows(b"") and not check.allows(b"\x00")  # pieces the grammar refuses
    check.take(b"\xc3")
    assert check.allows(b"\xa9")  # the character completed


def test_a_pattern_is_used_only_for_the_grammar_text_it_was_written_for():
    """The pattern equals llama.cpp's grammar for CLAIM_LIST as cyllama 0.2.18 writes it; another
    converter's text (or another schema) gets no fast path, so the output cannot change."""
    assert grammar_check.checker(grammar_check.CLAIM_LIST_GBNF) is not None
    assert grammar_check.checker(grammar_check.CLAIM_LIST_GBNF.replace("{1,2}", "{1,3}")) is None
    assert grammar_check.checker('root ::= "x"') is None


def test_the_pattern_was_written_for_the_grammar_the_runtime_builds():
    from tests.installed import need

    need("cyllama", "the local judge needs: pip install 'ragmeter[local]'")
    from ragmeter.judges.local.runtime import json_grammar

    assert json_grammar(CLAIM_LIST).strip() == grammar_check.CLAIM_LIST_GBNF
