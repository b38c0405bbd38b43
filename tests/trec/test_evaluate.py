"""trec mode semantics and errors: ties, -J, -c, -M, inputs as files, dicts and DataFrames."""

from __future__ import annotations

import pandas as pd
import pytest

from ragmeter import InvalidInputError, InvalidParameterError
from ragmeter.trec import evaluate_trec
from ragmeter.trec.errors import TrecInputError
from tests.conftest import TREC_REF


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_ties_break_by_docno_descending_and_rank_column_is_ignored():
    qrels = {"q1": {"d0": 1}}
    run = {"q1": {"d0": 1.0, "d1": 1.0, "d2": 1.0, "d3": 0.5}}
    assert evaluate_trec(qrels, run, ["recip_rank"]).mean("recip_rank") == pytest.approx(1 / 3)


def test_rank_column_is_ignored(tmp_path):
    q = write(tmp_path, "q", "q1 0 a 1\n")
    r1 = write(tmp_path, "r1", "q1 Q0 a 1 0.2 x\nq1 Q0 b 2 0.9 x\n")
    r2 = write(tmp_path, "r2", "q1 Q0 a 2 0.2 x\nq1 Q0 b 1 0.9 x\n")
    assert evaluate_trec(q, r1, ["recip_rank"]).mean("recip_rank") == 0.5
    assert evaluate_trec(q, r2, ["recip_rank"]).mean("recip_rank") == 0.5


def test_judged_only_equals_removing_unjudged_documents():
    """ir_measures' metamorphic test; trec_eval form_res_rels.c drops docs with rel < 0 under -J."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 2, "z": -1}, "q2": {"x": 1}}
    run = {"q1": {"u1": 5.0, "a": 4.0, "u2": 3.5, "b": 3.0, "z": 2.5, "c": 2.0}, "q2": {"u": 1.0, "x": 0.5}}
    judged = {q: {d: s for d, s in docs.items() if qrels[q].get(d, -1) >= 0} for q, docs in run.items()}
    names = ["map", "P.1,2,5", "ndcg", "ndcg_cut.2", "recip_rank", "bpref", "Rprec", "recall.2"]
    a = evaluate_trec(qrels, run, names, judged_only=True)
    b = evaluate_trec(qrels, judged, names)
    assert {n: a.mean(n) for n in a.names} == {n: b.mean(n) for n in b.names}
    assert a.mean("P_1") == 1.0 and evaluate_trec(qrels, run, ["P.1"]).mean("P_1") == 0.0


def test_missing_topics_are_refused_counted_as_zero_or_skipped():
    """trec_eval 10.0 exits 4 on a qrels topic the run misses; -c scores it; trec_eval 9 skipped it."""
    qrels = {"qA": {"d": 1}, "qC": {"d": 1}}
    run = {"qB": {"d": 1.0}, "qC": {"d": 1.0}}
    with pytest.raises(TrecInputError, match="1 qrels topic.s. have no results in the run: 'qA'") as refused:
        evaluate_trec(qrels, run, ["map", "num_q"])
    assert refused.value.exit_code == 4
    skipped = evaluate_trec(qrels, run, ["map", "num_q"], skip_missing=True)
    assert (skipped.mean("map"), skipped.mean("num_q"), skipped.missing) == (1.0, 1, ["qA"])
    complete = evaluate_trec(qrels, run, ["map", "num_q"], complete=True)
    assert (complete.mean("map"), complete.mean("num_q")) == (0.5, 2)


def test_max_docs_truncates_after_sorting_by_score():
    qrels = {"q": {"best": 1}}
    run = {"q": {"low": 0.1, "best": 0.9, "mid": 0.5}}
    assert evaluate_trec(qrels, run, ["P.1"], max_docs=1).mean("P_1") == 1.0
    assert evaluate_trec(qrels, run, ["num_ret"], max_docs=2).mean("num_ret") == 2


def test_threshold_does_not_apply_to_ndcg():
    qrels = {"q": {"d1": 1, "d2": 2, "d3": 3, "d4": 0}}
    run = {"q": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}}
    l1 = evaluate_trec(qrels, run, ["ndcg", "map"])
    l2 = evaluate_trec(qrels, run, ["ndcg", "map"], level=2)
    assert round(l1.mean("ndcg"), 4) == round(l2.mean("ndcg"), 4) == 0.7900
    assert (l1.mean("map"), round(l2.mean("map"), 4)) == (1.0, 0.5833)


def test_negative_labels_are_unjudged_for_bpref():
    qrels = {"q": {"d1": -1, "d2": 1, "d5": 1, "d3": 0, "d4": 0}}
    run = {"q": {"d1": 9.0, "d2": 8.0, "d3": 7.0, "d9": 6.0, "d5": 5.0, "d4": 4.0}}
    r = evaluate_trec(qrels, run, ["bpref", "map", "P.10"])
    # bpref = (1 + (1 - 1/2)) / 2: d1 (-1) and d9 (not in qrels) are skipped, d3 is above d5
    assert (r.mean("bpref"), r.mean("map"), r.mean("P_10")) == pytest.approx((0.75, 0.45, 0.2))


def test_topic_with_only_negative_labels_is_scored_where_trec_eval_scores_it():
    """trec_eval 10.0 allocates its per-topic grade counts at the first topic with a grade >= 0:
    a topic with only negative grades before that exits 4; after it, all -1 is scored with R = 0
    and all <= -2 crashes trec_eval (refused here)."""
    with pytest.raises(TrecInputError, match="topic 'q' has no judgment >= 0") as first:
        evaluate_trec({"q": {"d": -1}}, {"q": {"d": 1.0}}, ["map", "num_rel", "bpref"])
    assert first.value.exit_code == 4
    qrels = {"a": {"d": 1}, "q": {"d": -1}}
    r = evaluate_trec(qrels, {"a": {"d": 1.0}, "q": {"d": 1.0}}, ["map", "num_rel", "bpref"])
    assert (r.query("map")["q"], r.query("num_rel")["q"], r.query("bpref")["q"]) == (0.0, 0, 0.0)
    with pytest.raises(TrecInputError, match="its grades are all below -1"):
        evaluate_trec({"a": {"d": 1}, "q": {"d": -2}}, {"a": {"d": 1.0}, "q": {"d": 1.0}}, ["map"])
    assert evaluate_trec({"q": {"d": -1}}, {"q": {"d": 1.0}}, ["num_q"]).mean("num_q") == 1  # nothing ranked


def test_dicts_dataframes_and_files_agree():
    files = evaluate_trec(TREC_REF / "qrels.test", TREC_REF / "results.test", ["map", "ndcg_cut.10"])
    qrels = pd.read_csv(TREC_REF / "qrels.test", sep=r"\s+", names=["qid", "iter", "docno", "rel"], dtype=str)
    run = pd.read_csv(TREC_REF / "results.test", sep=r"\s+", names=["qid", "q0", "docno", "rank", "score", "runid"],
                      dtype={"qid": str, "docno": str})
    frames = evaluate_trec(qrels, run, ["map", "ndcg_cut.10"])
    as_dicts = evaluate_trec({q: dict(zip(g.docno, g.rel.astype(int))) for q, g in qrels.groupby("qid")},
                             {q: dict(zip(g.docno, g.score)) for q, g in run.groupby("qid")}, ["map", "ndcg_cut.10"])
    for name in ("map", "ndcg_cut_10"):
        assert files.mean(name) == frames.mean(name) == as_dicts.mean(name)


def test_ragmeter_measures_alongside(cli):
    out = cli("trec", "-m", "recip_rank", "-m", "mrr@10", "-m", "ndcg(discount='jk2002')@10",
              TREC_REF / "qrels.test", TREC_REF / "results.test")
    assert out.exit_code == 0
    names = [line.split("\t")[0].strip() for line in out.stdout.splitlines()]
    assert names == ["recip_rank", "ragmeter:reciprocal_rank@10", "ragmeter:ndcg(discount='jk2002')@10"]
    assert "not trec_eval measures" in out.stderr
    values = {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in out.stdout.splitlines()}
    assert values["ragmeter:reciprocal_rank@10"] <= values["recip_rank"]


@pytest.mark.parametrize("qrels,run,words,code", [
    ("q1 0 a 1\n", "q1 Q0 a 1 0.5\n", "line 1: expected 6 fields", 2),
    ("q1 0 a 1\n", "q1 Q0 a 1 nan x\n", "line 1, field \"score\": score is NaN", 2),
    ("q1 0 a 1\n", "q1 Q0 a 1 high x\n", "line 1, field \"score\": score 'high' is not a number", 2),
    ("q1 0 a x\n", "q1 Q0 a 1 1.0 x\n", "line 1, field \"rel\": relevance 'x' is not an integer", 2),
    ("q1 0 a 1 x\n", "q1 Q0 a 1 1.0 x\n", "line 1: expected 4 fields (qid iter docno rel), got 5", 2),
    ("q1 Q0 a 1 1.0 x\n", "q1 Q0 a 1 1.0 x\n", "got 6 (is this a run file?)", 2),
    ("q1 0 a 1\n\nq1 0 b 1\n", "q1 Q0 a 1 1.0 x\n", "line 2: a blank line", 2),
    ("# one\n# two\nq1 0 a 1\n", "q1 Q0 a 1 1.0 x\n", "line 2: expected 4 fields", 2),
    ("q1 0 a 1\nq1 0 a 0\n", "q1 Q0 a 1 1.0 x\n", "document 'a' is judged twice for topic 'q1'", 4),
    ("q1 0 a 1\n", "q1 Q0 a 1 1.0 x\nq1 Q0 a 2 0.5 x\n", "run.txt: document 'a' appears twice for topic 'q1'", 4),
    ("q1 0 a 1\n", "q2 Q0 a 1 1.0 x\n", "1 qrels topic(s) have no results in the run: 'q1'", 4),
    ("q1 0 a 1\n", "", "the file is empty", 2),
])
def test_errors_name_file_and_line(tmp_path, cli, qrels, run, words, code):
    """The refusals of trec_eval 10.0, with its exit status (2: a malformed file, 4: a topic it
    cannot evaluate), as one located line."""
    q, r = write(tmp_path, "qrels.txt", qrels), write(tmp_path, "run.txt", run)
    result = cli("trec", q, r)
    assert result.exit_code == code, result.output
    assert words in result.output and "Traceback" not in result.output


def test_nan_score_in_a_clean_file_names_its_line(tmp_path):
    q = write(tmp_path, "q", "q1 0 a 1\n")
    r = write(tmp_path, "r", "q1 Q0 b 1 1.0 x\nq1 Q0 a 2 NaN x\n")
    with pytest.raises(InvalidInputError, match="line 2"):
        evaluate_trec(q, r, ["map"])


def test_unknown_measures_and_measures_of_another_format():
    with pytest.raises(InvalidParameterError, match="unknown trec_eval measure 'mapp'"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["mapp"])
    with pytest.raises(InvalidParameterError, match="map_avgjg is computed from -R qrels_jg"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map_avgjg"])
    assert evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["infAP"]).mean("infAP") == 1.0


def test_missing_topics_are_reported(cli, tmp_path):
    q = write(tmp_path, "q", "q1 0 a 1\nq2 0 a 1\n")
    r = write(tmp_path, "r", "q1 Q0 a 1 1.0 x\n")
    refused = cli("trec", q, r, "-m", "map")
    assert refused.exit_code == 4 and "'q2'" in refused.stderr and "-c" in refused.stderr
    result = cli("trec", q, r, "-m", "map", "--skip-missing")
    assert "1 qrels topic(s) have no results" in result.stderr and "q2" in result.stderr
    assert result.stdout == "map                   \tall\t1.0000\n"


def _write_run(path, rows):
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
    return path


@pytest.mark.parametrize("seed", range(6))
def test_line_order_and_depth_cut_are_consistent(tmp_path, seed):
    """Shuffling the run's lines changes nothing; -M k equals keeping each topic's top k lines."""
    import random

    rnd = random.Random(seed)
    qrels = write(tmp_path, "q", "".join(f"t{t} 0 d{d} {rnd.choice([0, 1, 2, -1])}\n"
                                         for t in range(4) for d in range(0, 30, 2)))
    rows = [(f"t{t}", f"d{d}", rnd.choice([0.5, 1.0, 1.5, 2.0, rnd.random()])) for t in range(4) for d in range(25)]
    names = ["map", "P.5", "ndcg_cut.10", "bpref", "recip_rank", "num_ret"]
    ordered = evaluate_trec(qrels, _write_run(tmp_path / "a", rows), names, max_docs=7)
    shuffled_rows = rows[:]
    rnd.shuffle(shuffled_rows)
    shuffled = evaluate_trec(qrels, _write_run(tmp_path / "b", shuffled_rows), names, max_docs=7)
    by_docno_desc = sorted(rows, key=lambda r: r[1].encode(), reverse=True)
    top = [r for t in range(4) for r in sorted((r for r in by_docno_desc if r[0] == f"t{t}"),
                                                key=lambda r: -r[2])[:7]]  # stable: ties stay docno desc
    truncated = evaluate_trec(qrels, _write_run(tmp_path / "c", top), names)
    for name in ordered.names:
        assert ordered.query(name) == shuffled.query(name) == truncated.query(name), name


def test_comment_lines_that_look_like_records_are_skipped(tmp_path):
    """A '#' line with four fields is a comment to trec_eval 10, not a judgment for topic '#'."""
    q = write(tmp_path, "q", "q1 0 a 1\n# x b 1\nq1 0 b 0\n")
    r = write(tmp_path, "r", "q1 Q0 b 1 2.0 run\n# Q0 a 2 1.0 run\nq1 Q0 a 3 1.0 run\n")
    result = evaluate_trec(q, r, ["num_q", "num_ret", "num_rel", "map"])
    assert (result.mean("num_q"), result.mean("num_ret"), result.mean("num_rel")) == (1, 2, 1)
    assert result.mean("map") == 0.5


@pytest.mark.parametrize("pos", [0, 4094, 4095, 4096, 8191, 9000])
def test_the_file_scan_sees_a_needle_across_its_window_boundaries(tmp_path, monkeypatch, pos):
    from ragmeter.trec import reader

    monkeypatch.setattr(reader, "_WINDOW", 4096)  # the smallest window mmap allows
    data = bytearray(b"q1 Q0 d 1 1.0 r\n" * 700)
    data[pos:pos + 2] = b"\n#"
    path = write(tmp_path, "r", data.decode())
    assert reader.file_contains(str(path), (b"\t", b"\n#")) == {b"\t": False, b"\n#": True}
    assert reader.file_contains(str(write(tmp_path, "e", "")), (b"\t",)) == {b"\t": False}


# trec_eval 10.0's own output for these files (-q -M 0 -m iprec_at_recall.0,.5 -m 11pt_avg -m P.1
# -m num_ret), pinned here so that a clone without the binary checks the -nan printing too.
NAN_QRELS = "1 0 a 1\n1 0 b 0\n1 0 c -1\n2 0 a 2\n2 0 d 0\n"
NAN_RUN = "1 Q0 a 1 2.0 r1\n1 Q0 x 2 1.0 r1\n1 Q0 c 2 3.0 r1\n2 Q0 z 1 1 r2\n2 Q0 d 1 0.5 r9\n"
NAN_OUTPUT = """\
num_ret               \t1\t0
iprec_at_recall_0.00  \t1\t  -nan
iprec_at_recall_0.50  \t1\t0.0000
P_1                   \t1\t0.0000
11pt_avg              \t1\t  -nan
num_ret               \t2\t0
iprec_at_recall_0.00  \t2\t  -nan
iprec_at_recall_0.50  \t2\t0.0000
P_1                   \t2\t0.0000
11pt_avg              \t2\t  -nan
num_ret               \tall\t0
iprec_at_recall_0.00  \tall\t  -nan
iprec_at_recall_0.50  \tall\t0.0000
P_1                   \tall\t0.0000
11pt_avg              \tall\t  -nan
"""


def test_nothing_retrieved_prints_trec_evals_nan_and_json_says_null(tmp_path, cli):
    import json

    q, r = write(tmp_path, "q", NAN_QRELS), write(tmp_path, "r", NAN_RUN)
    args = ["-q", "-M", "0", "-m", "iprec_at_recall.0,.5", "-m", "11pt_avg", "-m", "P.1", "-m", "num_ret"]
    assert cli("trec", *args, q, r).stdout == NAN_OUTPUT
    data = json.loads(cli("trec", *args, "--format", "json", q, r).stdout)  # strict JSON: no NaN token
    assert data["measures"]["iprec_at_recall_0.00"]["all"] is None
    assert data["measures"]["P_1"]["all"] == 0.0
    assert data["runid"] == "r9"  # the last line's, as trec_eval


def test_no_summary_prints_nothing_without_q(tmp_path, cli):
    q, r = write(tmp_path, "q", NAN_QRELS), write(tmp_path, "r", NAN_RUN)
    assert cli("trec", "-n", "-m", "map", q, r).stdout == ""
    assert cli("trec", "-n", "-q", "-m", "map", q, r).stdout.splitlines()[-1].split("\t")[1] == "2"


@pytest.mark.parametrize("option", [["--memory-limit", "0"], ["--memory-limit", "-1"], ["-M", "-1"]])
def test_impossible_limits_are_usage_errors(tmp_path, cli, option):
    """--memory-limit 0 used to crash and -1 was ignored; trec_eval crashes on a negative -M."""
    q, r = write(tmp_path, "q", NAN_QRELS), write(tmp_path, "r", NAN_RUN)
    result = cli("trec", *option, q, r)
    assert result.exit_code == 2 and "Invalid value" in result.output and "Traceback" not in result.output
