"""``io/collections/trec_docs.py``: TREC SGML documents streamed: equal to a regular-expression
reader, located errors, bounded memory."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.collections.collection import write_collection
from ragmeter.io.collections.trec import load_trec
from ragmeter.io.collections.trec_docs import iter_sgml_docs
from tests.hostile import FUZZ
from tests.io.collections.test_collection import nothing_written


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
