"""``ragmeter import``: a refused import writes nothing. A BEIR line nested 100,000 deep is a
located error; a document id that appears twice is refused at import naming both lines (it was
written, then refused by ``eval``); an unclosed last TREC ``<DOC>`` is an error naming its line
(it was 0 documents with exit 0); an ``--out`` that holds a dataset is refused without
``--force``; MS MARCO passages that hold tabs keep their text (the file's shape decides); TREC
documents stream (a 100 MB ``<DOC>`` in a few hundred MB). Then hypothesis: the streamed
``<DOC>`` reader gives the old regular-expression reader's documents on well-formed files, and
every importer, whatever its files hold, writes a good pair of files or raises a typed error
and writes nothing."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.io import load_dataset
from ragmeter.io.beir import load_beir
from ragmeter.io.collection import write_collection
from ragmeter.io.msmarco import load_msmarco
from ragmeter.io.trec_collection import load_trec
from ragmeter.io.trec_docs import iter_sgml_docs


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
        from ragmeter.io.trec_docs import iter_sgml_docs
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


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@FUZZ
@given(sgml_file(), st.sampled_from([7, 64, 1 << 20]))
def test_streamed_docs_equal_the_regex_reader(text, chunk):
    import ragmeter.io.trec_docs as trec_docs

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
