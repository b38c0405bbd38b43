"""Labeling without a browser: the kappas (hand-worked and against scikit-learn / statsmodels),
the append-only labels file (torn last line, a killed server), the final labels and their export,
and the server's guards (token, Host)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.label.agreement import (
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    weighted_kappa,
)
from ragmeter.label.export import final_labels, qrels_lines
from ragmeter.label.store import LabelStore, load_state, read_events
from ragmeter.label.tasks import Candidate, Task, build_tasks

from .installed import need

ROOT = Path(__file__).resolve().parent.parent


# ---- kappas ---------------------------------------------------------------------------------

A = [2, 0, 3, 1, 0]
B = [2, 1, 3, 1, 2]


def test_cohen_kappa_hand_worked():
    # p_o = 3/5; marginals A: 0->2, 1->1, 2->1, 3->1; B: 1->2, 2->2, 3->1; p_e = (0 + 1*2 + 1*2 + 1*1) / 25
    p_o, p_e = 3 / 5, (1 * 2 + 1 * 2 + 1 * 1) / 25
    assert cohen_kappa(A, B) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(A, B) == pytest.approx(0.5)


def test_weighted_kappa_hand_worked():
    # quadratic: observed disagreement sum (i-j)^2 / n = (0 + 1 + 0 + 0 + 4) / 5
    observed = (0 + 1 + 0 + 0 + 4) / 5
    pa = np.bincount(A, minlength=4) / 5
    pb = np.bincount(B, minlength=4) / 5
    expected = sum(pa[i] * pb[j] * (i - j) ** 2 for i in range(4) for j in range(4))
    assert weighted_kappa(A, B) == pytest.approx(1 - observed / expected)
    linear_expected = sum(pa[i] * pb[j] * abs(i - j) for i in range(4) for j in range(4))
    assert weighted_kappa(A, B, weights="linear") == pytest.approx(1 - (0 + 1 + 0 + 0 + 2) / 5 / linear_expected)


def test_fleiss_kappa_hand_worked():
    # 4 items, 3 labelers, grades 0..1: rows are counts per category
    table = np.array([[3, 0], [0, 3], [2, 1], [1, 2]])
    p_i = [(9 - 3) / 6, (9 - 3) / 6, (4 + 1 - 3) / 6, (1 + 4 - 3) / 6]
    p_g = [(3 + 0 + 2 + 1) / 12, (0 + 3 + 1 + 2) / 12]
    p_e = p_g[0] ** 2 + p_g[1] ** 2
    assert fleiss_kappa(table) == pytest.approx((np.mean(p_i) - p_e) / (1 - p_e))


def test_undefined_kappas_say_so():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None  # chance agreement is 1: 0/0
    assert weighted_kappa([2, 2], [2, 2]) is None
    assert fleiss_kappa(np.array([[3, 0], [3, 0]])) is None
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])


grades = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40)


@settings(max_examples=150, deadline=None)
@given(grades)
def test_cohen_and_weighted_kappa_equal_scikit_learn(pairs):
    metrics = need("sklearn.metrics")
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = cohen_kappa(a, b)
    if ours is None:
        return
    assert ours == pytest.approx(metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3]), abs=1e-12)
    for w in ("linear", "quadratic"):
        theirs = metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=w)
        mine = weighted_kappa(a, b, weights=w)
        assert mine == pytest.approx(theirs, abs=1e-12) if mine is not None else np.isnan(theirs)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # statsmodels' own 0/0
@settings(max_examples=150, deadline=None)
@given(st.integers(2, 6).flatmap(lambda m: st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m),
                                                    min_size=1, max_size=30)))
def test_fleiss_kappa_equals_statsmodels(rows):
    inter = need("statsmodels.stats.inter_rater")
    table = np.array([np.bincount(r, minlength=4) for r in rows])
    ours = fleiss_kappa(table)
    theirs = inter.fleiss_kappa(table, method="fleiss")
    if ours is None:
        assert np.isnan(theirs)  # every label in one category: 0/0, which statsmodels gives as nan
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


# ---- the labels file ------------------------------------------------------------------------

def _ev(**kw):
    return {"labeler": "alice", "sample": "q1", "kind": "grade", "chunk": "c1", "grade": 1, **kw}


def test_every_event_is_on_disk_before_append_returns(tmp_path):
    path = tmp_path / "l.jsonl"
    store = LabelStore(path)
    store.append(_ev())
    store.append(_ev(grade=3))
    store.append(_ev(chunk="c2", grade=None))
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["grade"] == 3
    assert load_state(path).grades == {"alice": {"q1": {"c1": 3}}}  # the last event wins
    store.close()


def test_a_torn_last_line_is_ignored_by_readers_and_cut_by_the_writer(tmp_path):
    path = tmp_path / "l.jsonl"
    store = LabelStore(path)
    store.append(_ev())
    store.close()
    with open(path, "ab") as f:
        f.write(b'{"v":1,"labeler":"alice","sample":"q1","kind":"gra')  # a crash mid-write
    assert [e["grade"] for e in read_events(path)] == [1]
    store = LabelStore(path)
    assert store.trimmed == len(b'{"v":1,"labeler":"alice","sample":"q1","kind":"gra')
    store.append(_ev(chunk="c2", grade=2))
    store.close()
    assert [json.loads(x)["chunk"] for x in path.read_text().splitlines()] == ["c1", "c2"]


def test_a_damaged_line_inside_the_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({**_ev(), "v": 1, "at": "x"}) + "\nnot json\n" + json.dumps({**_ev(), "v": 1}) + "\n")
    with pytest.raises(InvalidInputError, match="line 2"):
        load_state(path)


def test_events_are_validated(tmp_path):
    store = LabelStore(tmp_path / "l.jsonl")
    for bad in (_ev(grade=4), _ev(grade=True), _ev(labeler="<script>"), _ev(kind="delete"), _ev(chunk=""),
                {"kind": "note", "labeler": "a", "sample": "q1", "text": "x" * 5000}):
        with pytest.raises(ValueError):
            store.append(bad)
    store.close()
    assert (tmp_path / "l.jsonl").read_text() == ""


# ---- final labels and export ----------------------------------------------------------------

def _tasks() -> list[Task]:
    return [Task(0, "q1", "first?", "", tuple(Candidate(c, "t", "retrieved") for c in ("c1", "c2", "c3"))),
            Task(1, "q2", "second?", "", tuple(Candidate(c, "t", "retrieved") for c in ("c3", "c4")))]


def _labeled(tmp_path) -> LabelStore:
    store = LabelStore(tmp_path / "l.jsonl")
    for who, q, c, g in [("alice", "q1", "c1", 2), ("alice", "q1", "c2", 0), ("alice", "q1", "c3", 3),
                         ("alice", "q2", "c3", 1), ("alice", "q2", "c4", 0),
                         ("bob", "q1", "c1", 2), ("bob", "q1", "c2", 1), ("bob", "q1", "c3", 3),
                         ("bob", "q2", "c3", 1), ("bob", "q2", "c4", 2)]:
        store.append({"labeler": who, "sample": q, "kind": "grade", "chunk": c, "grade": g})
    store.append({"labeler": "carol", "sample": "q1", "kind": "final", "chunk": "c2", "grade": 1})
    return store


def test_final_labels_adjudicated_then_agreed_then_the_rule(tmp_path):
    store = _labeled(tmp_path)
    final = final_labels(_tasks(), store.state)
    assert final.grades == {"q1": {"c1": 2, "c2": 1, "c3": 3}, "q2": {"c3": 1, "c4": 0}}
    assert final.how == {"adjudicated": 1, "agreed": 3, "median": 1}
    assert final_labels(_tasks(), store.state, resolve="max").grades["q2"]["c4"] == 2
    with pytest.raises(InvalidInputError, match="1 disagreement"):
        final_labels(_tasks(), store.state, resolve="adjudicated")
    assert final_labels(_tasks(), store.state, labelers=["bob"]).grades["q1"] == {"c1": 2, "c2": 1, "c3": 3}
    assert qrels_lines(final) == ["q1 0 c1 2", "q1 0 c2 1", "q1 0 c3 3", "q2 0 c3 1", "q2 0 c4 0"]
    store.close()


def test_agreement_report_lists_disagreements(tmp_path):
    store = _labeled(tmp_path)
    rep = agreement_report(_tasks(), store.state)
    (pair,) = rep["pairs"]
    assert pair["labelers"] == ["alice", "bob"] and pair["items"] == 5
    assert pair["cohen_kappa"] == pytest.approx(0.5)
    assert [(d["sample"], [c["chunk"] for c in d["chunks"]], d["open"]) for d in rep["disagreements"]] == [
        ("q1", ["c2"], 0), ("q2", ["c4"], 1)]
    store.append({"labeler": "dave", "sample": "q1", "kind": "grade", "chunk": "c1", "grade": 2})
    fleiss = agreement_report(_tasks(), store.state)["fleiss"]
    assert fleiss["items"] == 1 and fleiss["fleiss_kappa"] is None  # one pair graded by all three, all 2: 0/0
    store.close()


def test_cli_export_writes_a_new_dataset_and_qrels(tmp_path, cli):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "first?", "retrieved": ["c1", "c2", "c3"], "relevant": ["c9"]}\n'
                    '{"id": "q2", "question": "second?", "retrieved": ["c3", "c4"]}\n'
                    '{"id": "q3", "question": "nobody labeled me", "retrieved": ["c1"], "relevant": ["c1"]}\n')
    store = _labeled(tmp_path)
    store.close()
    out, qrels = tmp_path / "labeled.jsonl", tmp_path / "labels.qrels"
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--export", out, "--qrels", qrels)
    assert r.exit_code == 0, r.output
    assert "1 adjudicated, 3 agreed, 1 median" in r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["relevant"] for r in rows] == [{"c1": 2.0, "c2": 1.0, "c3": 3.0}, {"c3": 1.0, "c4": 0.0}, {"c1": 1.0}]
    assert rows[0]["metadata"]["labeling"]["labelers"] == ["alice", "bob"]
    assert qrels.read_text().splitlines() == ["q1 0 c1 2", "q1 0 c2 1", "q1 0 c3 3", "q2 0 c3 1", "q2 0 c4 0"]
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--agreement")
    assert "alice / bob" in r.output and "0.500" in r.output and "c4: alice 0, bob 2 -> open" in r.output
    assert cli("label", data, "--labels", tmp_path / "l.jsonl", "--export", data).exit_code == 2  # never overwrites


def test_candidates_from_the_corpus_by_embedding_when_no_list_is_given():
    corpus = {"a": "apples are red", "b": "the warranty lasts two years", "c": "bananas are yellow"}
    letters = "abcdefghijklmnopqrstuvwxyz"

    def embed(texts):
        return [[t.count(ch) + 0.01 for ch in letters] for t in texts]

    from ragmeter.embeddings import CallableEmbedder

    tasks = build_tasks([Sample("q", "how long is the warranty", ())], corpus=corpus, k=2,
                        embedder=CallableEmbedder(embed))
    vecs = np.array(embed(list(corpus.values())))
    q = np.array(embed(["how long is the warranty"]))[0]
    cos = vecs @ q / np.linalg.norm(vecs, axis=1) / np.linalg.norm(q)
    assert [c.id for c in tasks[0].candidates] == [list(corpus)[i] for i in np.argsort(-cos)[:2]]
    assert tasks[0].candidates[0].source == "embedder"
    with pytest.raises(InvalidInputError, match="give --corpus"):
        build_tasks([Sample("q", "x", ())])
    with pytest.raises(InvalidInputError, match="no text to show"):
        build_tasks([Sample("q", "x", (Chunk("zz"),))])


# ---- the server, as a process that gets killed ------------------------------------------------

def _start(args: list[str], env: dict) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "ragmeter", "label", *args, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("open "):
            return proc, line.split()[1].split("?")[0]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("the label server did not start")


def _call(url: str, token: str, body: dict | None = None, host: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"X-Ragmeter-Token": token, "Content-Type": "application/json",
                                          **({"Host": host} if host else {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_killed_server_loses_no_acknowledged_click(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "one?", '
                    '"retrieved": [{"id": "c1", "text": "x"}, {"id": "c2", "text": "y"}]}\n'
                    '{"id": "q2", "question": "two?", "retrieved": [{"id": "c1", "text": "x"}]}\n')
    labels = tmp_path / "d.labels.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc, url = _start([str(data)], env)
    try:
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        token = page.split('name="ragmeter-token" content="')[1].split('"')[0]
        assert _call(url + "api/event", "wrong", {"kind": "grade"})[0] == 403
        assert _call(url + "api/meta", token, host="attacker.example:80")[0] == 403  # DNS rebinding
        for chunk, grade in (("c1", 2), ("c2", 0)):
            status, doc = _call(url + "api/event", token, {"kind": "grade", "labeler": "alice", "sample": "q1",
                                                           "chunk": chunk, "grade": grade})
            assert status == 200 and doc["ok"]
        assert _call(url + "api/event", token, {"kind": "grade", "labeler": "alice", "sample": "q1",
                                                "chunk": "not-a-candidate", "grade": 1})[0] == 400
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    proc, url = _start([str(data)], env)
    try:
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        token = page.split('name="ragmeter-token" content="')[1].split('"')[0]
        status, progress = _call(url + "api/progress?labeler=alice", token)
        assert progress == {"total": 2, "done": [0], "resume": 1}  # q1 was finished: resume at q2
        status, task = _call(url + "api/task?i=0&labeler=alice", token)
        assert task["labels"] == {"c1": 2, "c2": 0}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert len(labels.read_text().splitlines()) == 2


def test_a_conversation_turn_shows_the_conversation_so_far():
    s = Sample("c1#2", "And for the other one?", (Chunk("a", text="x"),),
               metadata={"history": "User: Which router has 24 months?\nAssistant: The R2."})
    (task,) = build_tasks([s])
    assert task.history.startswith("User: Which router") and task.as_dict()["history"] == task.history
    (first,) = build_tasks([Sample("c1#1", "Which?", (Chunk("a", text="x"),), metadata={"history": "(none)"})])
    assert first.history == ""
