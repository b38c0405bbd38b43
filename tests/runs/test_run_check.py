"""Issue 29, item 11: a run that cannot be read whole is refused by every command that reads
runs (``report``, ``compare``, ``gate``, ``correlate``), with the file, line and field, never a
traceback and never ``gate passed``.

Each case damages a copy of a complete run the way the trial did: results.jsonl cut to 3 of
40 lines or deleted, summary.json deleted, a value that is a string, NaN in results.jsonl and
in summary.json, a line given twice, an interrupted run."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest


def _dataset(path: Path, p: float, seed: int) -> Path:
    rng = random.Random(seed)
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"q{i}?", "retrieved": ["c1", "c2"],
                                        "relevant": ["c1"] if rng.random() < p else ["c9"]}) + "\n"
                            for i in range(40)))
    return path


@pytest.fixture
def runs(cli, tmp_path, runs_dir):
    data = _dataset(tmp_path / "a.jsonl", 0.8, 1)
    for name in ("base", "new"):
        assert cli("eval", data, "-m", "hit_rate,ndcg", "--name", name).exit_code == 0
    base, new = sorted(runs_dir.iterdir())
    return base, new


def _cut(run: Path) -> None:
    lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
    (run / "results.jsonl").write_text("".join(lines[:3]))


def _string(run: Path) -> None:
    text = (run / "results.jsonl").read_text()
    (run / "results.jsonl").write_text(text.replace('"value": 1.0', '"value": "high"', 1))


def _nan_results(run: Path) -> None:
    text = (run / "results.jsonl").read_text()
    (run / "results.jsonl").write_text(text.replace('"value": 1.0', '"value": NaN'))


def _nan_summary(run: Path) -> None:
    doc = json.loads((run / "summary.json").read_text())
    for m in doc.values():
        m["mean"] = float("nan")
    (run / "summary.json").write_text(json.dumps(doc))


def _twice(run: Path) -> None:
    lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
    (run / "results.jsonl").write_text("".join(lines[:-1] + lines[:1]))


def _interrupted(run: Path) -> None:
    setup = json.loads((run / "setup.json").read_text())
    (run / "setup.json").write_text(json.dumps({**setup, "status": "interrupted"}))


DAMAGE = {
    "results cut to 3 of 40": (_cut, ["results.jsonl", "summary.json counts 40", "holds 3"]),
    "results deleted": (lambda r: (r / "results.jsonl").unlink(), ["results.jsonl is missing"]),
    "summary deleted": (lambda r: (r / "summary.json").unlink(), ["summary.json is missing"]),
    "a string value": (_string, ["results.jsonl, line 1", "metrics.hit_rate@5", "finite number, got 'high'"]),
    "NaN in results": (_nan_results, ["results.jsonl, line 1", "finite number, got nan"]),
    "NaN in summary": (_nan_summary, ["summary.json", "finite numeric mean"]),
    "a line twice": (_twice, ["results.jsonl", "appears twice"]),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_every_reader_refuses_a_damaged_run_with_its_place(cli, runs, tmp_path, case):
    base, new = runs
    damaged = tmp_path / "damaged"
    shutil.copytree(new, damaged)
    damage, words = DAMAGE[case]
    damage(damaged)
    for args in (["gate", damaged, "--baseline", base], ["gate", damaged, "--min", "hit_rate@5=0.1"],
                 ["gate", base, "--baseline", damaged], ["compare", base, damaged], ["correlate", damaged],
                 ["report", damaged, "--html", tmp_path / "r.html"], ["show", damaged]):
        out = cli(*args)  # a traceback would raise here (catch_exceptions=False)
        assert out.exit_code == 2, (args, out.output)
        assert "gate passed" not in out.output
        for w in words:
            assert w in out.output, (args, w, out.output)


def test_a_gate_refuses_a_run_that_did_not_complete(cli, runs, tmp_path):
    base, new = runs
    _interrupted(new)
    out = cli("gate", new, "--baseline", base)
    assert out.exit_code == 2 and "is interrupted, not complete" in out.output and "--resume" in out.output
    out = cli("gate", base, "--baseline", new)
    assert out.exit_code == 2 and "baseline is interrupted" in out.output


def test_an_intact_run_still_passes(cli, runs):
    base, new = runs
    out = cli("gate", new, "--baseline", base, "--min", "hit_rate@5=0.1")
    assert out.exit_code == 0 and "gate passed" in out.output
