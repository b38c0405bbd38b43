"""Standard collections into datasets: BEIR's layout, TREC topics + qrels + run, MS MARCO TSVs.

A TREC run scored through the import must equal ``ragmeter trec`` on the same files, for every
measure both compute (per topic, to the last bit, and as printed)."""

from __future__ import annotations

import html
import json
import random
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.io import load_dataset
from ragmeter.io.collections.beir import load_beir
from ragmeter.io.collections.collection import write_collection
from ragmeter.io.collections.msmarco import load_msmarco
from ragmeter.io.collections.trec import load_trec, read_topics, read_trec_run
from ragmeter.io.collections.trec_docs import iter_sgml_docs
from tests.hostile import FUZZ, only_typed_errors, trec_file


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
    from tests import manual

    readme = manual.text()
    for command in ("ragmeter label DATA", "ragmeter testset generate", "ragmeter import beir\\|trec\\|msmarco"):
        assert f"| `{command}" in readme, command  # a row of the command table
    for sub in ("beir", "trec", "msmarco"):
        assert cli("import", sub, "--help").exit_code == 0
    assert cli("testset", "generate", "--help").exit_code == 0 and cli("label", "--help").exit_code == 0


@pytest.mark.slow
@FUZZ
@given(trec_file(4), trec_file(3))
def test_collection_qrels_readers(qrels, beir):
    from ragmeter.io.collections.beir import read_beir_qrels
    from ragmeter.io.collections.trec import read_qrels as read_trec_qrels

    only_typed_errors(qrels, "qrels.txt", read_trec_qrels)
    only_typed_errors(beir.replace(b" ", b"\t"), "test.tsv", read_beir_qrels)


def jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def beir(root: Path, corpus=None, queries=None) -> Path:
    jsonl(root / "corpus.jsonl", corpus or [{"_id": "d1", "title": "", "text": "Aspirin thins the blood."},
                                            {"_id": "d2", "title": "", "text": "Statins lower cholesterol."}])
    jsonl(root / "queries.jsonl", queries or [{"_id": "q1", "text": "Does aspirin thin the blood?"}])
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return root


def nothing_written(out: Path) -> bool:
    return not out.exists() or not [p for p in out.iterdir()]


DEEP = '{"_id": "d9", "text": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("where", ["corpus", "queries"])
def test_a_beir_line_nested_100000_deep_is_a_located_error(tmp_path, where):
    rows = [{"_id": "d1", "title": "", "text": "a"}, DEEP] if where == "corpus" else \
        [{"_id": "q1", "text": "q"}, DEEP.replace("d9", "q9")]
    root = beir(tmp_path / "b", **{where: rows})
    out = tmp_path / "out"
    with pytest.raises(InvalidInputError, match=rf"{where}.jsonl, line 2: not valid JSON \(nested too deep"):
        write_collection(load_beir(root), out)
    assert nothing_written(out)


def test_a_duplicate_beir_document_id_is_refused_naming_both_lines(tmp_path):
    root = beir(tmp_path / "b", corpus=[{"_id": "d1", "title": "", "text": "a"},
                                        {"_id": "d2", "title": "", "text": "b"},
                                        {"_id": "d1", "title": "", "text": "c"}])
    out = tmp_path / "out"
    with pytest.raises(InvalidInputError, match=r"corpus.jsonl, line 3 .*document id 'd1' appears twice "
                                                r"\(lines 1 and 3\)"):
        write_collection(load_beir(root), out)
    assert nothing_written(out)


def trec(tmp_path: Path, docs: str) -> tuple[Path, Path, Path]:
    (tmp_path / "topics.tsv").write_text("1\trouters\n")
    (tmp_path / "qrels.txt").write_text("1 0 D1 1\n")
    (tmp_path / "docs.sgml").write_text(docs)
    return tmp_path / "topics.tsv", tmp_path / "qrels.txt", tmp_path / "docs.sgml"


@pytest.mark.parametrize("docs, said", [
    ("<DOC><DOCNO>D1</DOCNO><TEXT>one</TEXT></DOC>\n<DOC>\n<DOCNO>D2</DOCNO>\n<TEXT>two</TEXT>\n",
     r"docs.sgml, line 2: the <DOC> opened on line 2 is not closed: the file ends first"),
    ("<DOC>\n<DOCNO>D1</DOCNO><TEXT>one</TEXT>\n<DOC><DOCNO>D2</DOCNO></DOC>\n",
     r"line 3: the <DOC> opened on line 1 is not closed before this <DOC>"),
    ("<DOC><DOCNO>D1</DOCNO>\n<TEXT>one\n</DOC>\n", r"line 3: <TEXT> opened on line 2 is not closed before </DOC>"),
    ("<DOC><TEXT>one</TEXT></DOC>\n", r"line 1: the <DOC> opened on line 1 has no <DOCNO>"),
    ("no documents here\n", r"docs.sgml: no <DOC> found"),
])
def test_malformed_trec_documents_are_located_errors(tmp_path, docs, said):
    topics, qrels, path = trec(tmp_path, docs)
    out = tmp_path / "out"
    with pytest.raises(InvalidInputError, match=said):
        write_collection(load_trec(topics, qrels, docs=path), out)
    assert nothing_written(out)


def test_a_duplicate_trec_docno_is_refused(tmp_path):
    topics, qrels, path = trec(tmp_path, "<DOC><DOCNO>D1</DOCNO><TEXT>a</TEXT></DOC>\n\n"
                                         "<DOC><DOCNO> D1 </DOCNO><TEXT>b</TEXT></DOC>\n")
    with pytest.raises(InvalidInputError, match=r"'D1' appears twice \(lines 1 and 3\)"):
        write_collection(load_trec(topics, qrels, docs=path), tmp_path / "out")


def test_an_out_folder_holding_a_dataset_is_refused_without_force(tmp_path, cli):
    root = beir(tmp_path / "b")
    out = tmp_path / "out"
    out.mkdir()
    (out / "dataset.jsonl").write_text("mine\n")
    r = cli("import", "beir", root, "--out", out)
    assert r.exit_code == 2 and "already holds dataset.jsonl; it is not overwritten" in r.output and "--force" in \
        r.output
    assert (out / "dataset.jsonl").read_text() == "mine\n" and not (out / "corpus.jsonl").exists()
    assert cli("import", "beir", root, "--out", out, "--force").exit_code == 0
    assert len(load_dataset(out / "dataset.jsonl", corpus=out / "corpus.jsonl").samples) == 1


def test_a_failed_import_with_force_keeps_the_old_files(tmp_path):
    root = beir(tmp_path / "b")
    out = tmp_path / "out"
    write_collection(load_beir(root), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    jsonl(root / "corpus.jsonl", [{"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}])
    with pytest.raises(InvalidInputError, match="appears twice"):
        write_collection(load_beir(root), out, force=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary file left either


def marco(tmp_path: Path, collection: str) -> Path:
    (tmp_path / "collection.tsv").write_text(collection)
    (tmp_path / "queries.tsv").write_text("10\tr1 warranty\n")
    (tmp_path / "qrels.tsv").write_text("10\t0\t0\t1\n")
    out = tmp_path / "out"
    write_collection(load_msmarco(tmp_path / "collection.tsv", tmp_path / "queries.tsv", tmp_path / "qrels.tsv"), out)
    return out / "corpus.jsonl"


def test_msmarco_passages_holding_tabs_keep_their_text(tmp_path):
    corpus = marco(tmp_path, "0\tThe R1\thas a\t12-month warranty.\n1\tNo tabs here.\n2\ta\tb\n")
    assert [json.loads(x) for x in corpus.read_text().splitlines()] == [
        {"id": "0", "text": "The R1\thas a\t12-month warranty."}, {"id": "1", "text": "No tabs here."},
        {"id": "2", "text": "a\tb"}]


@pytest.mark.parametrize("kind", ["beir", "msmarco"])
def test_a_collection_with_no_document_is_refused(tmp_path, kind):
    out = tmp_path / "out"
    if kind == "beir":
        root = beir(tmp_path / "b")
        (root / "corpus.jsonl").write_text("\n")
        load = lambda: load_beir(root)  # noqa: E731
    else:
        for name, text in (("c.tsv", ""), ("q.tsv", "1\tq\n"), ("r.tsv", "1 0 0 1\n")):
            (tmp_path / name).write_text(text)
        load = lambda: load_msmarco(tmp_path / "c.tsv", tmp_path / "q.tsv", tmp_path / "r.tsv")  # noqa: E731
    with pytest.raises(InvalidInputError, match="no document"):
        write_collection(load(), out)
    assert nothing_written(out)


def test_the_msmarco_document_collection_is_told_by_its_shape(tmp_path):
    corpus = marco(tmp_path, "D0\thttps://x.example/a\tWarranty\tThe R1 has\ta 12-month warranty.\n"
                             "D1\thttp://x.example/b\tReturns\t30 days.\n")
    assert [json.loads(x) for x in corpus.read_text().splitlines()] == [
        {"id": "D0", "text": "Warranty The R1 has\ta 12-month warranty."}, {"id": "D1", "text": "Returns 30 days."}]
    with pytest.raises(InvalidInputError, match=r"line 2: expected docid<TAB>url<TAB>title<TAB>body"):
        (tmp_path / "again").mkdir()
        marco(tmp_path / "again", "D0\thttps://x.example/a\tT\tbody\nD1\tno url here\n")


@pytest.mark.slow
def test_a_100_mb_doc_streams_in_a_few_hundred_mb(tmp_path):
    big = tmp_path / "big.sgml"
    with big.open("w") as f:
        f.write("<DOC>\n<DOCNO> BIG </DOCNO>\n<TEXT>\n")
        line = "the router &amp; its <P>warranty claim shipped today\n"
        for _ in range(100_000_000 // len(line)):
            f.write(line)
        f.write("</TEXT>\n</DOC>\n")
    # VmHWM is this process's own peak; ru_maxrss would carry the forking pytest's peak across exec
    code = textwrap.dedent(f"""
        import re
        from ragmeter.io.collections.trec_docs import iter_sgml_docs
        [(doc, text, line)] = list(iter_sgml_docs({str(big)!r}))
        assert doc == "BIG" and text.startswith("the router & its warranty claim shipped today the router")
        print(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    peak_mb = int(done.stdout.split()[-1]) / 1024
    assert peak_mb < 600, f"peak {peak_mb:.0f} MB for a 100 MB <DOC>"


def regex_reader(text: str) -> list[tuple[str, str]]:
    """The reader before streaming (main 0beb687's iter_trec_docs), for well-formed files; one
    difference on purpose: an empty part no longer leaves a stray space ("" and "x" gave " x")."""
    out = []
    for m in re.finditer(r"<DOC>(.*?)</DOC>", text, re.IGNORECASE | re.DOTALL):
        body = m.group(1)
        docno = re.search(r"<DOCNO>(.*?)</DOCNO>", body, re.IGNORECASE | re.DOTALL)
        parts = re.findall(r"<(?:TEXT|HEADLINE|TITLE)>(.*?)</(?:TEXT|HEADLINE|TITLE)>", body, re.IGNORECASE | re.DOTALL)
        cleaned = (" ".join(html.unescape(re.sub(r"<[^>]+>", " ", p)).split()) for p in parts)
        content = " ".join(c for c in cleaned if c)
        out.append((docno.group(1).strip(), content))
    return out


WORD = st.sampled_from(["router", "R2", "&amp;", "&lt;b&gt;", "&#233;", "<P>", "</P>", '<a href="x y">', "\u00a0",
                        "24-month", "é", "x" * 40])


SPACE = st.sampled_from([" ", "\n", "\t", "  \n ", "\r\n"])


@st.composite
def sgml_file(draw) -> str:
    docs = []
    for i in range(draw(st.integers(1, 4))):
        parts = []
        for _ in range(draw(st.integers(0, 3))):
            tag = draw(st.sampled_from(["TEXT", "HEADLINE", "TITLE", "text"]))
            words = draw(st.lists(st.tuples(WORD, SPACE), max_size=30))
            parts.append(f"<{tag}>" + "".join(w + s for w, s in words) + f"</{tag}>")
        gap = draw(SPACE)
        docs.append(f"<DOC>{gap}<DOCNO> D{i} </DOCNO>{gap}" + gap.join(parts) + f"{gap}</DOC>")
    return draw(SPACE).join(docs) + "\n"


@FUZZ
@given(sgml_file(), st.sampled_from([7, 64, 1 << 20]))
def test_streamed_docs_equal_the_regex_reader(text, chunk):
    import ragmeter.io.collections.trec_docs as trec_docs

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "docs.sgml"
        p.write_text(text, encoding="utf-8")
        saved = trec_docs.CHUNK, trec_docs.SEGMENT
        trec_docs.CHUNK, trec_docs.SEGMENT = chunk, max(chunk // 2, 3)  # tags and segments cut anywhere
        try:
            streamed = [(doc, body) for doc, body, _ in iter_sgml_docs(p)]
        finally:
            trec_docs.CHUNK, trec_docs.SEGMENT = saved
    assert streamed == regex_reader(text)


HOSTILE = st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
                    st.sampled_from([b"<DOC><DOCNO>a</DOCNO>", b"<DOC>\n<DOC>", b"</DOC><DOC><DOCNO>x</DOCNO></DOC>",
                                     b'{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "a"}\n',
                                     ("[" * 5000).encode(), b"0\ta\tb\tc\n1\thttp://u\tt\tb\n", b"\xff\xfe",
                                     b'{"_id": 1e999, "text": 5}', b"D1\thttps://u\tT\n"]))


def _imports_or_refuses(load, out: Path) -> None:
    try:
        written = write_collection(load(), out)
    except RagmeterError:
        assert nothing_written(out)
        return
    load_dataset(written.dataset, corpus=written.corpus if written.documents else None)  # what is written, eval reads


@FUZZ
@given(HOSTILE, HOSTILE, st.sampled_from(["beir", "trec", "msmarco"]))
def test_fuzz_importers_write_a_good_pair_or_nothing(corpus, queries, kind):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "qrels").mkdir()
        if kind == "beir":
            (root / "corpus.jsonl").write_bytes(corpus)
            (root / "queries.jsonl").write_bytes(queries)
            (root / "qrels" / "test.tsv").write_text("q\tc\ts\nq1\td1\t1\n")
            _imports_or_refuses(lambda: load_beir(root), root / "out")
        elif kind == "trec":
            (root / "docs.sgml").write_bytes(corpus)
            (root / "topics.tsv").write_bytes(queries + b"\n1\trouters\n")
            (root / "qrels.txt").write_text("1 0 a 1\n")
            _imports_or_refuses(lambda: load_trec(root / "topics.tsv", root / "qrels.txt", docs=root / "docs.sgml"),
                                root / "out")
        else:
            (root / "collection.tsv").write_bytes(corpus)
            (root / "queries.tsv").write_bytes(b"1\tq\n" + queries)
            (root / "qrels.tsv").write_text("1 0 0 1\n")
            _imports_or_refuses(lambda: load_msmarco(root / "collection.tsv", root / "queries.tsv",
                                                     root / "qrels.tsv"), root / "out")
