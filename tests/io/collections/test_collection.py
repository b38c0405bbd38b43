"""Standard collections into datasets: BEIR's layout, TREC topics + qrels + run, MS MARCO TSVs.

A TREC run scored through the import must equal ``ragmeter trec`` on the same files, for every
measure both compute (per topic, to the last bit, and as printed)."""

from __future__ import annotations

import json
import random
import tempfile
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
from ragmeter.io.collections.trec import load_trec, read_trec_run
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










def trec_case(tmp_path: Path, seed: int = 0):
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








def test_trec_docs_in_sgml_become_the_corpus(tmp_path):
    topics, qrels, _ = trec_case(tmp_path)
    docs = tmp_path / "docs.sgml"
    docs.write_text("<DOC>\n<DOCNO> D001 </DOCNO>\n<HEADLINE>Routers</HEADLINE>\n"
                    "<TEXT>\nThe R1 &amp; R2.\n</TEXT>\n</DOC>\n"
                    "<DOC><DOCNO>D002</DOCNO><TEXT>Second <P>doc</P></TEXT></DOC>\n")
    written = write_collection(load_trec(topics, qrels, docs=docs), tmp_path / "o")
    corpus = [json.loads(x) for x in written.corpus.read_text().splitlines()]
    assert corpus == [{"id": "D001", "text": "Routers The R1 & R2."}, {"id": "D002", "text": "Second doc"}]
    assert written.samples == 12  # no run: every judged topic




def test_evaluate_retriever_runs_over_an_imported_collection(tmp_path):
    import ragmeter

    topics, qrels, run = trec_case(tmp_path)
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
    topics, qrels, _ = trec_case(tmp_path)
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
