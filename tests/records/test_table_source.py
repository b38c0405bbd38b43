"""The record tables (JSONL, CSV): long rows (entity, attribute, value, unit) and wide ones."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize("name,text,said", [
    ("r.csv", "entity,attribute\nR2,replacement_price\n", 'no "value" column. Fix: add "value"'),
    ("r.csv", "entity,attribute,val\nR2,replacement_price,99\n", 'no "value" column (is "val" it?)'),
    ("r.jsonl", '{"entity": "R2", "attribute": "price"}\n', 'no "value" column'),
])
def test_a_long_table_without_its_value_column_is_refused(tmp_path, name, text, said):
    """It read as one row per entity with an attribute named "attribute": every fact 'cannot verify', exit 0."""
    from ragmeter.core.errors import InvalidInputError
    from ragmeter.records import parse_source
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InvalidInputError, match=re.escape(said)):
        parse_source(str(path))
