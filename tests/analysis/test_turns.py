"""``ragmeter.analysis.turns``: Scores by turn index (1, 2, 3+) and standalone vs non-standalone turns."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.analysis.turns import by_turn
from tests.io.formats.test_turns import NATIVE, write


def test_scores_by_turn_and_standalone(tmp_path):
    convs = [{"id": f"c{i}", "turns": [
        {"question": "q", "retrieved": ["a", "b"], "relevant": ["a"]},
        {"question": "q2", "retrieved": ["b", "a"], "relevant": ["a"], "standalone": i % 2 == 0},
        {"question": "q3", "retrieved": ["b", "c", "a"], "relevant": ["a"], "standalone": False},
        {"question": "q4", "retrieved": ["c", "b", "a"], "relevant": ["a"], "standalone": False}]} for i in range(4)]
    data = ragmeter.load_dataset(write(tmp_path, *convs))
    result = ragmeter.evaluate(data, ["reciprocal_rank"])
    table = by_turn(data.samples, result.to_dict()["samples"])
    turns = table["turns"]
    assert list(turns) == ["1", "2", "3+"]
    assert turns["1"]["reciprocal_rank@5"] == {"mean": 1.0, "n": 4}
    assert turns["2"]["reciprocal_rank@5"]["mean"] == 0.5
    assert turns["3+"]["reciprocal_rank@5"] == {"mean": pytest.approx(1 / 3), "n": 8}
    groups = table["standalone"]
    assert groups["standalone"]["reciprocal_rank@5"]["n"] == 6
    assert groups["non-standalone"]["reciprocal_rank@5"]["n"] == 10


def test_turns_command_and_plot(cli, tmp_path, runs_dir):
    path = write(tmp_path, NATIVE)
    assert cli("eval", path, "--metrics", "reciprocal_rank").exit_code == 0
    from ragmeter.runs import list_runs

    (run,) = list_runs(runs_dir)
    svg = tmp_path / "turns.svg"
    out = cli("turns", run.path, "--svg", svg)
    assert out.exit_code == 0 and "by turn:" in out.stdout and "non-standalone" in out.stdout
    assert svg.read_text().startswith("<svg") and "turn 2" in svg.read_text()
    missing = tmp_path / "no" / "such" / "turns.svg"  # was a FileNotFoundError traceback
    out = cli("turns", run.path, "--svg", missing)
    assert out.exit_code == 2 and out.stderr.strip() == (
        f"error: {missing}: cannot write the plot (No such file or directory). "
        "Fix: give --svg a file in a folder that exists and can be written")
