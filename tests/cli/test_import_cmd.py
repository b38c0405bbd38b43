"""``ragmeter.cli.import_cmd``: ``ragmeter import beir|trec|msmarco``: a standard test collection as a
dataset and a corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import one_error_line
from tests.io.collections.test_collection import beir_dir  # noqa: F401  (a fixture)


def test_import_into_a_folder_that_cannot_be_created_isone_error_line(beir_dir, blocked, tmp_path, cli):  # noqa: F811
    one_error_line(cli("import", "beir", beir_dir, "--out", blocked), blocked, "--out")
    (tmp_path / "collection.tsv").write_text("0\tThe R1.\n")
    (tmp_path / "queries.tsv").write_text("10\tr1\n")
    (tmp_path / "qrels.tsv").write_text("10\t0\t0\t1\n")
    r = cli("import", "msmarco", "--collection", tmp_path / "collection.tsv", "--queries", tmp_path / "queries.tsv",
            "--qrels", tmp_path / "qrels.tsv", "--out", blocked)
    one_error_line(r, blocked, "--out")
    (tmp_path / "topics.tsv").write_text("10\tr1\n")
    r = cli("import", "trec", "--topics", tmp_path / "topics.tsv", "--qrels", tmp_path / "qrels.tsv", "--out", blocked)
    one_error_line(r, blocked, "--out")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc")
def test_import_into_proc_names_the_folder(beir_dir, cli):  # noqa: F811
    one_error_line(cli("import", "beir", beir_dir, "--out", "/proc/nope"), Path("/proc/nope"), "--out")
