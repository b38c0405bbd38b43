"""``ragmeter.core.yaml_file``: YAML from a user's file, bounded (size, aliases, expansion)."""

from __future__ import annotations

import pytest

from ragmeter.core import yaml_file
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.yaml_file import check_size, load_yaml

from ..installed import need


def bomb(levels: int, width: int = 10, leaf: int = 1000) -> str:
    """``levels`` of aliases, each a list of ``width`` aliases of the level below: width**levels leaves."""
    lines = ['l0: &l0 "' + "x" * leaf + '"']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_aliases_that_expand_within_the_bound_are_read():
    need("yaml")
    doc = load_yaml(bomb(3), file="c.yaml")  # 1,000 leaves of 1,000 characters: 1 MB expanded
    assert len(doc["l3"]) == 10 and doc["l3"][0][0][0] == "x" * 1000


def test_the_issue_bomb_is_refused_with_its_line():
    """10**6 x 1,000 characters from 1.7 KB (issue 38): refused at the first level past the bound
    (line 6: 10**5 strings), before anything is built."""
    need("yaml")
    text = bomb(6)
    assert len(text) < 1800
    with pytest.raises(InvalidInputError, match=r"c.yaml, line 6: its aliases expand to more than 33554432"):
        load_yaml(text, file="c.yaml")


def test_a_recursive_alias_is_refused():
    need("yaml")
    with pytest.raises(InvalidInputError, match="a cycle"):
        load_yaml("a: &a [1, *a]\n", file="c.yaml")


def test_too_many_aliases_are_refused(monkeypatch):
    need("yaml")
    monkeypatch.setattr(yaml_file, "MAX_ALIASES", 5)
    with pytest.raises(InvalidInputError, match=r"c.yaml, line 3: more than 5 aliases"):
        load_yaml("a: &a 1\nb: [*a, *a, *a]\nc: [*a, *a, *a]\n", file="c.yaml")


def test_a_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(yaml_file, "MAX_BYTES", 100)
    big = tmp_path / "c.yaml"
    big.write_text("a: " + "x" * 200)
    with pytest.raises(InvalidInputError, match=r"c.yaml: the criteria file is larger than"):
        check_size(big, "criteria file")
    with pytest.raises(InvalidInputError, match="larger than"):
        load_yaml(big.read_text(), file=str(big))
    check_size(tmp_path / "missing.yaml")  # left to the reader, which says it is missing


def test_deep_nesting_and_bad_yaml_are_located_errors():
    need("yaml")
    with pytest.raises(InvalidInputError, match=r"c.yaml, line 2: not valid YAML"):
        load_yaml("a: [1,\n  b: }\n", file="c.yaml")
    with pytest.raises(InvalidInputError, match="nested too deep"):
        load_yaml("[" * 20_000 + "]" * 20_000, file="c.yaml")
    assert load_yaml("", file="c.yaml") is None
