"""``ragmeter.io.documents``: a criteria or examples file, JSON or YAML, with located errors."""

from __future__ import annotations

import sys

import pytest

from ragmeter import InvalidInputError
from ragmeter.io.documents import read_document


def test_json_and_yaml_read_to_the_same_value(tmp_path):
    (tmp_path / "a.json").write_text('{"examples": [{"winner": "1"}]}')
    (tmp_path / "a.yml").write_text("examples:\n  - winner: '1'\n")
    pytest.importorskip("yaml")
    assert read_document(tmp_path / "a.json", "examples") == read_document(tmp_path / "a.yml", "examples")


def test_bad_yaml_names_the_file_and_line(tmp_path):
    pytest.importorskip("yaml")
    path = tmp_path / "c.yaml"
    path.write_text("criteria:\n  - name: [unclosed\n")
    with pytest.raises(InvalidInputError, match=r"c.yaml, line \d+: not valid YAML"):
        read_document(path, "criteria")


def test_yaml_without_pyyaml_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "p.yaml"
    path.write_text("examples: []\n")
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now raises ImportError
    with pytest.raises(InvalidInputError, match="reading YAML examples needs PyYAML.*write the examples as JSON"):
        read_document(path, "examples")


def test_a_yaml_alias_bomb_is_refused_before_it_is_built(tmp_path):
    """Issue 38: 1.7 KB of nested aliases standing for 10**6 strings of 1,000 characters."""
    pytest.importorskip("yaml")
    path = tmp_path / "c.yaml"
    path.write_text('l0: &l0 "' + "x" * 1000 + '"\n' + "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 7)))
    with pytest.raises(InvalidInputError, match=r"c.yaml, line 6: its aliases expand to more than"):
        read_document(path, "criteria")
