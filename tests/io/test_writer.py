"""``ragmeter.io.writer``: Writing samples back in the dataset format (a run keeps a copy of what it
scored), and every file ragmeter writes, atomically (a temporary file, fsync, then a rename)."""

from __future__ import annotations


def test_written_outputs_get_the_umask_mode_not_0600(tmp_path):
    """An imported dataset, a test set, a labels export or a report is a file to share:
    mkstemp's 0600 made them unreadable to anyone else."""
    import os
    from pathlib import Path

    from ragmeter.io.writer import write_jsonl, write_output

    old = os.umask(0o022)
    try:
        write_jsonl(Path(tmp_path / "d.jsonl"), [{"id": "1"}])
        write_output(tmp_path / "r.html", "<!DOCTYPE html>", what="report", option="--html")
    finally:
        os.umask(old)
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {"d.jsonl": 0o644, "r.html": 0o644}


def test_answer_context_round_trips():
    from ragmeter.core.sample import Chunk, Sample
    from ragmeter.io.dataset import load_dataset
    from ragmeter.io.writer import sample_to_row

    s = Sample("t#2", question="q", retrieved=(Chunk("c", 0.5, "u"),), answer="x",
               answer_context=(Chunk("a", None, "t"), Chunk("c", 0.5, "u")), metadata={"request": "t"})
    assert load_dataset([sample_to_row(s)]).samples[0] == s
