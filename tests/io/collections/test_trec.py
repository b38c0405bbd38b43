"""``io/collections/trec.py``: TREC topics, qrels and runs: the three topic layouts, trec_eval's
run order, and an imported collection scored as ``ragmeter trec`` scores the files."""

from __future__ import annotations

import json

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.io import load_dataset
from ragmeter.io.collections.trec import read_topics, read_trec_run
from tests.io.collections.test_collection import trec_case

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


def test_a_topics_file_cut_in_its_last_topic_is_refused(tmp_path):
    """The trial: an unclosed last <top> was read as a topic (its text cut short)."""
    cut = tmp_path / "topics.cut"
    cut.write_text(SGML[:SGML.rindex("<narr>")])  # cut inside topic 302
    with pytest.raises(InvalidInputError, match=r"the last <top> \(topic 2 of the file\) is not closed"):
        read_topics(cut)
    loose = tmp_path / "topics.loose"  # a file that closes no topic is read as before
    loose.write_text(SGML.replace("</top>", ""))
    assert read_topics(loose) == {"301": "International Organized Crime", "302": "Poliomyelitis and Post-Polio"}


# (ragmeter measure, trec_eval measure): the measures both compute, with --k 0 (whole list)
PAIRS = [("precision@5", "P_5"), ("precision@10", "P_10"), ("recall@10", "recall_10"), ("ndcg@10", "ndcg_cut_10"),
         ("ndcg", "ndcg"), ("reciprocal_rank", "recip_rank"), ("average_precision", "map"),
         ("average_precision@10", "map_cut_10"), ("r_precision", "Rprec"), ("hit_rate@5", "success_5")]


TREC_MEASURES = ["P.5,10", "recall.10", "ndcg_cut.10", "ndcg", "recip_rank", "map", "map_cut.10", "Rprec", "success.5"]


@pytest.mark.parametrize("complete", [False, True])
def test_a_trec_run_scored_through_the_import_equals_ragmeter_trec(tmp_path, cli, complete):
    from ragmeter.trec import evaluate_trec

    topics, qrels, run = trec_case(tmp_path)
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
