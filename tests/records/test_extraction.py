"""``records/extraction.py``: the fact-extraction prompt, its inputs and the reading of its reply."""

from __future__ import annotations

from ragmeter.judges import load_prompt
from ragmeter.records import FACTS_SCHEMA


def test_the_prompt_file():
    prompt = load_prompt("facts.extract")
    assert prompt.version == 1 and prompt.placeholders == {"question", "entities", "attributes", "claims"}
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(FACTS_SCHEMA)
