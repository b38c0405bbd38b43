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
