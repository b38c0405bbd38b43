"""Standard collections into datasets: BEIR's layout, TREC topics + qrels + run, MS MARCO TSVs.

A TREC run scored through the import must equal ``ragmeter trec`` on the same files, for every
measure both compute (per topic, to the last bit, and as printed)."""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.io import load_dataset
from ragmeter.io.beir import load_beir
from ragmeter.io.collection import write_collection
from ragmeter.io.trec_collection import load_trec, read_topics, read_trec_run


def _jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    root = tmp_path / "scifact-mini"
    _jsonl(root / "corpus.jsonl", [
        {"_id": "d1", "title": "Aspirin", "text": "Aspirin thins the blood.", "metadata": {}},
        {"_id": "d2", "title": "", "text": "Statins lower cholesterol."},
        {"_id": 3, "title": "Vitamin C", "text": "Vitamin C does not prevent colds."},
        {"_id": "d4", "title": "Sleep", "text": "Adults need seven hours of sleep."},
    ])
    _jsonl(root / "queries.jsonl", [
        {"_id": "q1", "text": "Does aspirin thin the blood?", "metadata": {}},
        {"_id": "q2", "text": "What lowers cholesterol?"},
        {"_id": "q3", "text": "Do vitamins prevent colds?"},
        {"_id": "q4", "text": "A query judged only in the train split"},
    ])
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td4\t0\nq2\td2\t1\nq3\t3\t1\nq3\td1\t1\n", encoding="utf-8")
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq4\td4\t1\n", encoding="utf-8")
    return root


def test_beir_folder_imports_to_the_hand_counted_labels(beir_dir, tmp_path, cli):
    out = tmp_path / "out"
    r = cli("import", "beir", beir_dir, "--out", out)
    assert r.exit_code == 0, r.output
    assert "3 samples" in r.output and "4 documents" in r.output
    rows = [json.loads(x) for x in (out / "dataset.jsonl").read_text().splitlines()]
    # hand count: test split judges q1 (d1=2, d4=0), q2 (d2=1), q3 (3=1, d1=1); q4 only in train
    assert [(r["id"], r["question"], r["relevant"]) for r in rows] == [
        ("q1", "Does aspirin thin the blood?", {"d1": 2.0, "d4": 0.0}),
        ("q2", "What lowers cholesterol?", {"d2": 1.0}),
        ("q3", "Do vitamins prevent colds?", {"3": 1.0, "d1": 1.0}),
    ]
    corpus = [json.loads(x) for x in (out / "corpus.jsonl").read_text().splitlines()]
    assert corpus[0] == {"id": "d1", "text": "Aspirin Aspirin thins the blood."}  # BEIR: title + " " + text
    assert corpus[1] == {"id": "d2", "text": "Statins lower cholesterol."}  # empty title: no leading space
    assert corpus[2]["id"] == "3"
    data = load_dataset(out / "dataset.jsonl", corpus=out / "corpus.jsonl")
    assert [dict(s.relevance) for s in data.samples][2] == {"3": 1.0, "d1": 1.0}
    train = load_beir(beir_dir, "train")
    assert train.qrels == {"q4": {"d4": 1.0}}


def test_beir_unknown_split_names_the_ones_there(beir_dir):
    with pytest.raises(InvalidInputError, match="choose one of test, train"):
        load_beir(beir_dir, "dev")


def test_beir_qrels_without_a_header_keep_their_first_judgment(beir_dir):
    (beir_dir / "qrels" / "test.tsv").write_text("q1\td1\t1\nq2\td2\t1\n", encoding="utf-8")
    assert load_beir(beir_dir).qrels == {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}


SGML = """<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate in international criminal activity.
<narr> Narrative:
A relevant document must name the organization.
</top>

<top>
<num> Number: 302 </num>
<title> Poliomyelitis and Post-Polio </title>
<desc> Description: Is the disease under control?
<narr> Narrative: Relevant documents give case counts.
</top>
"""


def test_topics_in_sgml_xml_and_tsv(tmp_path):
    sgml = tmp_path / "topics.301-302"
    sgml.write_text(SGML)
    assert read_topics(sgml) == {"301": "International Organized Crime", "302": "Poliomyelitis and Post-Polio"}
    assert read_topics(sgml, "desc")["301"] == ("Identify organizations that participate in international criminal "
                                                "activity.")
    assert read_topics(sgml, "narr")["302"] == "Relevant documents give case counts."
    xml = tmp_path / "topics.xml"
    xml.write_text('<webtrack2009>\n<topic number="1" type="faceted">\n  <query>obama family tree</query>\n'
                   '  <description>Find information on President Barack Obama&apos;s family\n history.</description>\n'
                   '</topic>\n<topic number="2"><query>french lick resort &amp; casino</query>'
                   '<description>Find the casino.</description></topic></webtrack2009>\n')
    assert read_topics(xml) == {"1": "obama family tree", "2": "french lick resort & casino"}
    assert read_topics(xml, "desc")["1"] == "Find information on President Barack Obama's family history."
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("7\twhat is a router\n8\thow long is the warranty\n")
    assert read_topics(tsv) == {"7": "what is a router", "8": "how long is the warranty"}


def _trec_case(tmp_path: Path, seed: int = 0):
    """Topics, graded qrels and a run with score ties, short lists and a topic the run misses."""
    rng = random.Random(seed)
    topics, qrels, run = [], [], []
    for t in range(1, 13):
        qid = str(100 + t)
        topics.append(f"{qid}\ttopic number {t}")
        docs = [f"D{rng.randrange(60):03d}" for _ in range(40)]
        docs = list(dict.fromkeys(docs))
        judged = docs[:25]
        rel = [d for d in judged if rng.random() < 0.35] or [judged[0]]
        for d in judged:
            grade = rng.choice([1, 2, 3]) if d in rel else rng.choice([0, 0, -1])
            qrels.append(f"{qid} 0 {d} {grade}")
        qrels.append(f"{qid} 0 UNRETRIEVED-{t} 2")  # relevant but never retrieved: counts in R
        if t == 12:
            continue  # judged, but the run has no results for it
        pool = [f"D{rng.randrange(80):03d}" for _ in range(rng.randrange(3, 30))]
        pool = list(dict.fromkeys(pool))
        rng.shuffle(pool)
        for rank, d in enumerate(pool, start=1):
            score = rng.choice([1.0, 2.0, 2.0, 3.5]) if t % 3 == 0 else round(rng.uniform(0, 10), 3)
            run.append(f"{qid} Q0 {d} {rank} {score} test-run")
    run.append("999 Q0 D001 1 5.0 test-run")  # a run topic with no judgments: ignored
    (tmp_path / "topics.tsv").write_text("\n".join(topics) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    return tmp_path / "topics.tsv", tmp_path / "qrels.txt", tmp_path / "run.txt"


# (ragmeter measure, trec_eval measure): the measures both compute, with --k 0 (whole list)
PAIRS = [("precision@5", "P_5"), ("precision@10", "P_10"), ("recall@10", "recall_10"), ("ndcg@10", "ndcg_cut_10"),
         ("ndcg", "ndcg"), ("reciprocal_rank", "recip_rank"), ("average_precision", "map"),
         ("average_precision@10", "map_cut_10"), ("r_precision", "Rprec"), ("hit_rate@5", "success_5")]
TREC_MEASURES = ["P.5,10", "recall.10", "ndcg_cut.10", "ndcg", "recip_rank", "map", "map_cut.10", "Rprec", "success.5"]


@pytest.mark.parametrize("complete", [False, True])
def test_a_trec_run_scored_through_the_import_equals_ragmeter_trec(tmp_path, cli, complete):
    from ragmeter.trec import evaluate_trec

    topics, qrels, run = _trec_case(tmp_path)
    out = tmp_path / "imported"
    args = ["import", "trec", "--topics", topics, "--qrels", qrels, "--run", run, "--out", out]
    r = cli(*args, *(["--complete"] if complete else []))
    assert r.exit_code == 0, r.output
    assert ("11 samples" if not complete else "12 samples") in r.output
    # without -c the import leaves out the judged topic the run misses, as trec_eval 9 did
    # (trec_eval 10.0 refuses it): ragmeter trec's --skip-missing
    trec = evaluate_trec(str(qrels), str(run), TREC_MEASURES, complete=complete, skip_missing=not complete)
    data = load_dataset(out / "dataset.jsonl")
    from ragmeter.engine import evaluate

    result = evaluate(data, [m for m, _ in PAIRS], k=None).to_dict()
    assert [s["id"] for s in result["samples"]] == sorted(trec.topics)
    for ours, theirs in PAIRS:
        per_topic = trec.query(theirs)
        got = {s["id"]: s["metrics"][ours]["value"] for s in result["samples"]}
        assert got == pytest.approx(per_topic, abs=1e-12), (ours, theirs)
        assert result["metrics"][ours]["mean"] == pytest.approx(trec.mean(theirs), abs=1e-12)
    # and as `ragmeter trec` prints it (4 decimals), against `ragmeter eval --format json`
    printed = cli("trec", qrels, run, *[x for m in TREC_MEASURES for x in ("-m", m)],
                  *(["-c"] if complete else ["--skip-missing"]))
    lines = {(p.split()[0], p.split()[1]): p.split()[2] for p in printed.output.splitlines() if p.count("\t") == 2}
    ev = cli("eval", out / "dataset.jsonl", "--k", "0", "-m", ",".join(m for m, _ in PAIRS), "--format", "json",
             "--no-save")
    means = json.loads(ev.output)["metrics"]
    for ours, theirs in PAIRS:
        assert f"{means[ours]['mean']:.4f}" == lines[(theirs, "all")], (ours, theirs)


def test_trec_run_order_is_trec_evals(tmp_path):
    run = tmp_path / "run"
    run.write_text("1 Q0 b 1 2.0 r\n1 Q0 a 2 2.0 r\n1 Q0 c 3 9 r\n1 Q0 z 4 2.0 r\n")
    # score descending, ties by docno descending; the rank column is ignored
    assert read_trec_run(run) == {"1": [("c", 9.0), ("z", 2.0), ("b", 2.0), ("a", 2.0)]}
    run.write_text("1 Q0 a 1 2.0 r\n1 Q0 a 2 1.0 r\n")
    with pytest.raises(InvalidInputError, match=r"line 2.*document a appears twice"):
        read_trec_run(run)


def test_trec_docs_in_sgml_become_the_corpus(tmp_path):
    topics, qrels, _ = _trec_case(tmp_path)
    docs = tmp_path / "docs.sgml"
    docs.write_text("<DOC>\n<DOCNO> D001 </DOCNO>\n<HEADLINE>Routers</HEADLINE>\n"
                    "<TEXT>\nThe R1 &amp; R2.\n</TEXT>\n</DOC>\n"
                    "<DOC><DOCNO>D002</DOCNO><TEXT>Second <P>doc</P></TEXT></DOC>\n")
    written = write_collection(load_trec(topics, qrels, docs=docs), tmp_path / "o")
    corpus = [json.loads(x) for x in written.corpus.read_text().splitlines()]
    assert corpus == [{"id": "D001", "text": "Routers The R1 & R2."}, {"id": "D002", "text": "Second doc"}]
    assert written.samples == 12  # no run: every judged topic


def test_msmarco_tsvs(tmp_path, cli):
    (tmp_path / "collection.tsv").write_text("0\tThe R1 has a 12-month warranty.\n1\tThe R2 has 24 months.\n"
                                             "2\tReturns within 30 days.\n3\tDead on arrival units are exchanged.\n")
    (tmp_path / "queries.dev.tsv").write_text("10\tr1 warranty\n11\treturn window\n12\tunjudged query\n")
    (tmp_path / "qrels.dev.tsv").write_text("10\t0\t0\t1\n11\t0\t2\t1\n")
    (tmp_path / "run.dev.tsv").write_text("10\t1\t1\n10\t0\t2\n11\t3\t3\n11\t2\t1\n11\t1\t2\n12\t0\t1\n")
    out = tmp_path / "o"
    r = cli("import", "msmarco", "--collection", tmp_path / "collection.tsv", "--queries", tmp_path / "queries.dev.tsv",
            "--qrels", tmp_path / "qrels.dev.tsv", "--run", tmp_path / "run.dev.tsv", "--out", out)
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (out / "dataset.jsonl").read_text().splitlines()]
    assert rows == [{"id": "10", "question": "r1 warranty", "relevant": {"0": 1.0}, "retrieved": ["1", "0"]},
                    {"id": "11", "question": "return window", "relevant": {"2": 1.0}, "retrieved": ["2", "1", "3"]}]
    ev = cli("eval", out / "dataset.jsonl", "-m", "mrr@10", "--format", "json", "--no-save")
    assert json.loads(ev.output)["metrics"]["reciprocal_rank@10"]["mean"] == pytest.approx((1 / 2 + 1 / 1) / 2)
    assert len((out / "corpus.jsonl").read_text().splitlines()) == 4


def test_evaluate_retriever_runs_over_an_imported_collection(tmp_path):
    import ragmeter

    topics, qrels, run = _trec_case(tmp_path)
    written = write_collection(load_trec(topics, qrels, run=run), tmp_path / "o")
    ranked = read_trec_run(run)
    data = load_dataset(written.dataset)
    bare = ragmeter.load_dataset(written.dataset)
    live = ragmeter.evaluate_retriever(lambda q: [d for d, _ in ranked[_qid(bare, q)]], bare, k=10,
                                       metrics=["ndcg@10", "recall@10"])
    stored = ragmeter.evaluate(data, ["ndcg@10", "recall@10"], k=10)
    assert live.means() == stored.means()
    assert np.isfinite(list(live.means().values())).all()


def _qid(data, question: str) -> str:
    return next(s.id for s in data.samples if s.question == question)


def test_judged_queries_without_query_text_are_an_error(tmp_path):
    topics, qrels, _ = _trec_case(tmp_path)
    with open(qrels, "a") as f:
        f.write("555 0 D001 1\n")
    with pytest.raises(InvalidInputError, match="1 judged query id"):
        write_collection(load_trec(topics, qrels), tmp_path / "o")


def test_the_evaluation_set_commands_are_in_the_readme(cli):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for command in ("ragmeter label DATA", "ragmeter testset generate", "ragmeter import beir\\|trec\\|msmarco"):
        assert f"| `{command}" in readme, command  # a row of the command table
    for sub in ("beir", "trec", "msmarco"):
        assert cli("import", sub, "--help").exit_code == 0
    assert cli("testset", "generate", "--help").exit_code == 0 and cli("label", "--help").exit_code == 0


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@st.composite
def trec_file(draw, fields: int) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        parts = [draw(st.one_of(st.sampled_from(["q1", "q2", "Q0", "0", "d1", "d2", "1", "-1", "9" * 30, "9" * 5000,
                                                 "nan", "inf", "1e999", "#", "\x00", "é", "r"]),
                                st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)))
                 for _ in range(draw(st.sampled_from([fields, fields, fields - 1, fields + 1])))]
        lines.append(draw(st.sampled_from([" ", "\t", "  "])).join(parts))
    return "\n".join(lines).encode() + draw(st.sampled_from([b"", b"\n"]))


def _only_typed_errors(data: bytes, name: str, read: Callable[[str], object]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, name)
        Path(p).write_bytes(data)
        try:
            read(p)
        except RagmeterError:
            pass


@FUZZ
@given(trec_file(4), trec_file(3))
def test_collection_qrels_readers(qrels, beir):
    from ragmeter.io.beir import read_beir_qrels
    from ragmeter.io.trec_collection import read_qrels as read_trec_qrels

    _only_typed_errors(qrels, "qrels.txt", read_trec_qrels)
    _only_typed_errors(beir.replace(b" ", b"\t"), "test.tsv", read_beir_qrels)
