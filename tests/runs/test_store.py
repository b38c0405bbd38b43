"""``ragmeter.runs.store``: Run directories: a durable, self-describing record of one evaluation."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.report.terminal import runs_table, show_run
from ragmeter.runs import list_runs, load_run, start_run
from ragmeter.runs.store import damaged_run

LABEL = "recall,ndcg"


def _runs(runs_dir):
    return sorted(p for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.exists() else []


@pytest.fixture
def four_runs(cli, warranty, runs_dir):
    for name in ("a", "b", "c", "d"):
        assert cli("eval", warranty / "dataset.jsonl", "-m", LABEL, "--name", name).exit_code == 0
    return dict(zip("abcd", _runs(runs_dir)))


def test_damaged_runs_are_listed_with_file_and_line_and_every_command_says_where(cli, four_runs, runs_dir, tmp_path):
    a, b, c, good = four_runs["a"], four_runs["b"], four_runs["c"], four_runs["d"]
    results = (a / "results.jsonl").read_text()
    torn = results[: len(results) // 2]
    assert not torn.endswith("\n")
    (a / "results.jsonl").write_text(torn)  # torn in the middle of a line
    line = f"results.jsonl, line {torn.count(chr(10)) + 1}"
    (b / "setup.json").write_text('{"status": "complete", "options": ')
    (c / "summary.json").write_text(json.dumps({"recall@5": {"mean": "high"}}))
    listed = cli("runs", runs_dir)
    assert listed.exit_code == 0 and good.name in listed.stdout
    out = " ".join(listed.stdout.split())
    for run in (a, b, c):
        assert run.name in out
    assert out.count(" damaged - ") == 3 and line in out and "setup.json, line 1" in out
    for run, where in ((a, line), (b, "setup.json, line 1"), (c, "summary.json")):
        for args in (("show", run), ("report", run, "--html", tmp_path / "r.html"), ("diagnose", run),
                     ("compare", good, run), ("gate", run, "--baseline", good)):
            res = cli(*args)
            assert res.exit_code == 2, (args, res.output)
            assert where in res.output and "damaged" in res.output and "JSONDecodeError" not in res.output


def test_a_torn_last_line_of_an_unfinished_run_is_trimmed(four_runs):
    run = four_runs["a"]
    setup = json.loads((run / "setup.json").read_text())
    (run / "setup.json").write_text(json.dumps({**setup, "status": "running"}))
    (run / "results.jsonl").write_text((run / "results.jsonl").read_text() + '{"id": "q7", "metr')
    (run / "samples.jsonl").write_text((run / "samples.jsonl").read_text() + '{"id": "q7", "retr')
    assert len(load_run(run).results) == 6 and len(load_run(run).samples()) == 6


def test_run_files_are_written_atomically(cli, warranty, runs_dir, monkeypatch):
    """A crash while writing samples.jsonl leaves the previous complete file, never half of one."""
    assert cli("eval", warranty / "dataset.jsonl", "-m", LABEL).exit_code == 0
    (run,) = _runs(runs_dir)
    before = (run / "samples.jsonl").read_text()
    from ragmeter.io import writer

    def crash(tmp, path):
        raise KeyboardInterrupt  # as if killed between writing the temporary file and renaming it

    monkeypatch.setattr(writer, "_replace", crash)
    assert cli("eval", "--resume", run).exit_code != 0
    assert (run / "samples.jsonl").read_text() == before
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]
    assert load_run(run).complete and len(load_run(run).results) == 6  # the previous complete files, whole


scalars = st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70) | \
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)


json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


SETUP = {"status": "complete", "options": {"k": 5}, "started": 1.0,
         "dataset": {"path": "d.jsonl", "fingerprint": "f"}, "judge": None}


ROW = {"id": "q1", "metrics": {"recall@5": {"status": "scored", "value": 0.5}}}


SUMMARY = {"recall@5": {"mean": 0.5, "ci95": [0.1, 0.9], "scored": 1, "not_computed": 0, "failed": 0}}


def _mutate(doc: dict, path: list, value):
    """``doc`` with the value at ``path`` (keys chosen by index) replaced."""
    if not path or not isinstance(doc, dict) or not doc:
        return value
    key = sorted(doc)[path[0] % len(doc)]
    return {**doc, key: _mutate(doc[key], path[1:], value)}


texts = st.one_of(st.text(max_size=80), st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
                  st.builds(lambda d: "{" * d, st.integers(0, 20_000)))


files = st.one_of(
    texts,
    st.builds(lambda p, v, doc: json.dumps(_mutate(doc, p, v), allow_nan=True),
              st.lists(st.integers(0, 10), max_size=3), json_values, st.sampled_from([SETUP, SUMMARY])),
    st.builds(lambda p, v, cut: (json.dumps(ROW) + "\n" + json.dumps(_mutate(ROW, p, v)) + "\n")[:cut],
              st.lists(st.integers(0, 10), max_size=4), json_values, st.integers(0, 400)),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=st.one_of(st.just(json.dumps(SETUP)), files), results=st.one_of(st.just(json.dumps(ROW)), files),
       summary=st.one_of(st.just(json.dumps(SUMMARY)), files))
def test_the_run_loader_reads_any_files_or_says_where(setup, results, summary):
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        for name, text in (("setup.json", setup), ("results.jsonl", results), ("summary.json", summary)):
            (run_dir / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            run = load_run(run_dir)
        except InvalidInputError as exc:
            assert exc.file and Path(exc.file).name in ("setup.json", "results.jsonl", "summary.json")
            assert "damaged" in runs_table([damaged_run(run_dir, exc)])
            assert len(list_runs(tmp)) == 0 and len(list_runs(tmp, damaged=True)) == 1
            return
        try:
            show_run(run)
            runs_table([run])
        except RagmeterError:
            pass


def test_the_loader_fuzz_can_fail():
    """The fuzz above is not vacuous: a truncated results file is refused with its line."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        (run_dir / "setup.json").write_text(json.dumps(SETUP))
        (run_dir / "results.jsonl").write_text(json.dumps(ROW) + "\n" + json.dumps(ROW)[:9])
        try:
            load_run(run_dir)
        except InvalidInputError as exc:
            assert exc.line == 2
        else:
            raise AssertionError("a torn complete run must be refused")


def test_eval_writes_a_self_describing_run(cli, warranty, runs_dir):
    out = cli("eval", warranty / "dataset.jsonl", "--name", "baseline")
    assert out.exit_code == 0 and "run saved:" in out.stdout
    (run,) = list_runs(runs_dir)
    assert run.complete and run.name.endswith("-baseline") and len(run.results) == 6
    setup = run.setup
    assert setup["metrics"]["ndcg@5"]["metric_version"] == 1 and setup["dataset"]["fingerprint"]
    assert setup["options"]["k"] == 5 and setup["ragmeter_version"] == ragmeter.__version__
    assert round(run.summary["ndcg@5"]["mean"], 3) == 0.628 and run.summary["ndcg@5"]["ci95"] is not None
    shown = cli("show", run.path).stdout
    assert "ndcg@5" in shown and "0.628" in shown and "95% CI" in shown
    assert run.name in cli("runs", runs_dir).stdout
    assert [s.id for s in run.samples()] == ["q1", "q2", "q3", "q4", "q5", "q6"]


def test_start_run_writes_running_status(tmp_path):
    start_run(tmp_path / "r", {"dataset": "x"})
    assert load_run(tmp_path / "r").setup["status"] == "running"


# --- issue 38: run directories made atomically under any name ----------------------------------------------


def test_runs_of_one_name_started_at_once_each_get_their_own_directory(tmp_path):
    """72 runs of one --name in the same second (the trial: 16 refused with "Directory not empty",
    each leaving a hidden .<run>.<pid>.tmp/, and twice two processes printed the same run)."""
    from concurrent.futures import ThreadPoolExecutor

    from ragmeter.runs.store import create_run

    with ThreadPoolExecutor(16) as pool:
        made = list(pool.map(lambda i: create_run(tmp_path, "same", {"dataset": f"d{i}"})[0], range(72)))
    assert len(set(made)) == 72
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in made)  # no temporary left
    assert sorted(json.loads((p / "setup.json").read_text())["options"]["dataset"] for p in made) == sorted(
        f"d{i}" for i in range(72))


@pytest.mark.slow
def test_evals_of_one_name_in_separate_processes_each_get_their_own_run(tmp_path, warranty):
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-m", "ragmeter", "eval", str(warranty / "dataset.jsonl"), "-m",
                               "recall@5", "--name", "same", "--runs-dir", str(tmp_path / "runs")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(12)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    printed = {line for out, _ in outs for line in out.splitlines() if line.startswith("run saved:")}
    assert len(printed) == 12
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 12 and not [p for p in runs if p.name.startswith(".")]


@pytest.mark.parametrize("name", ["n" * 300, "é" * 200, "../../etc", ".", "..", "a/b\\c", " ", "-" * 40,
                                  "x\x00y", "名前" * 60])
def test_any_run_name_makes_a_run_directory(cli, warranty, runs_dir, name):
    r = cli("eval", warranty / "dataset.jsonl", "-m", "recall@5", "--name", name)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    (run,) = list_runs(runs_dir)
    assert run.path.parent == runs_dir and len(run.path.name) <= 120


def test_a_run_stopped_on_a_full_disk_is_still_marked_interrupted(tmp_path, monkeypatch):
    """The trial: a full ledger disk left setup.json ``running`` (no room for the temporary copy)."""
    import errno

    from ragmeter.core.errors import StorageError
    from ragmeter.runs import store

    path = tmp_path / "run"
    setup = start_run(path, {"dataset": "d.jsonl"})

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "write_json", full)
    error = StorageError("the judgment ledger cannot be written (OperationalError: database or disk is full)")
    assert store.mark_stopped(path, setup, error) == "interrupted"
    written = json.loads((path / "setup.json").read_text())
    assert written["status"] == "interrupted" and "disk is full" in written["stopped_by"]
