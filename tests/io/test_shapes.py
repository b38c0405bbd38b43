"""Issue 18: the six warranty samples from every accepted shape give identical label-metric tables.

Shapes: JSONL, JSON array, CSV, parquet, a list of dicts, a pandas DataFrame, a Hugging Face
``datasets.Dataset``, Ragas rows with contexts as texts (dicts and objects, and an
``EvaluationDataset``-like holder), DeepEval-style test-case objects. The reference table is
the bundled JSONL's, whose numbers are the seed article's Step 1 table (tests/acceptance/test_seed_tables.py).
Ragas and DeepEval are not installed: their objects are stood in for by plain classes with
their attribute names, which is all ragmeter reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import InvalidInputError, UnsupportedInputError, evaluate, load_dataset
from ragmeter.io.formats.base import content_id
from tests.conftest import WARRANTY
from tests.installed import need

LABEL_METRICS = "precision,recall,hit_rate,mrr,ndcg"


def warranty_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (WARRANTY / "dataset.jsonl").read_text().splitlines() if line.strip()]


def corpus() -> dict[str, str]:
    rows = [json.loads(line) for line in (WARRANTY / "corpus.jsonl").read_text().splitlines() if line.strip()]
    return {r["id"]: r["text"] for r in rows}


def ragas_rows(with_ids: bool = False) -> list[dict[str, Any]]:
    """The samples as Ragas writes them: contexts as texts, no ids, relevance as reference texts."""
    texts = corpus()
    out = []
    for r in warranty_rows():
        row = {"user_input": r["question"], "retrieved_contexts": [texts[c] for c in r["retrieved"]],
               "reference_contexts": [texts[c] for c in r["relevant"]]}
        if "answer" in r:
            row["response"], row["reference"] = r["answer"], r["reference"]
        if with_ids:
            row["id"] = r["id"]
        out.append(row)
    return out


class SingleTurnSample:
    """Stands in for ``ragas.SingleTurnSample``: only its attribute names matter."""

    def __init__(self, user_input: str, retrieved_contexts: list[str], reference_contexts: list[str],
                 response: str | None = None, reference: str | None = None) -> None:
        self.user_input, self.retrieved_contexts = user_input, retrieved_contexts
        self.reference_contexts = reference_contexts
        self.response, self.reference = response, reference
        self.rubrics = None
        self.multi_responses = None


class RagasEvaluationDataset:
    def __init__(self, samples: list[SingleTurnSample]) -> None:
        self.samples = samples


class LLMTestCase:
    """Stands in for ``deepeval.test_case.LLMTestCase``: ``context`` is the ideal (reference) context."""

    def __init__(self, input: str, actual_output: str | None, expected_output: str | None,
                 retrieval_context: list[str], context: list[str]) -> None:
        self.input, self.actual_output, self.expected_output = input, actual_output, expected_output
        self.retrieval_context, self.context = retrieval_context, context
        self.tools_called = None
        self.additional_metadata = {"source": "deepeval"}


def deepeval_cases() -> list[LLMTestCase]:
    return [LLMTestCase(r["user_input"], r.get("response"), r.get("reference"), r["retrieved_contexts"],
                        r["reference_contexts"]) for r in ragas_rows()]


def write_csv(rows: list[dict[str, Any]], path: Path) -> Path:
    import csv

    cols = ["id", "question", "retrieved", "relevant", "answer", "reference", "reference_claims"]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([json.dumps(r[c]) if isinstance(r.get(c), list) else r.get(c, "") for c in cols])
    return path


def write_parquet(rows: list[dict[str, Any]], path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def shape(name: str, tmp_path: Path) -> Any:
    rows = warranty_rows()
    if name == "jsonl":
        return WARRANTY / "dataset.jsonl"
    if name == "json array":
        p = tmp_path / "d.json"
        p.write_text(json.dumps(rows, indent=2), encoding="utf-8")
        return p
    if name == "csv":
        return write_csv(rows, tmp_path / "d.csv")
    if name == "parquet":
        return write_parquet(rows, tmp_path / "d.parquet")
    if name == "list of dicts":
        return rows
    if name == "DataFrame":
        pd = need("pandas")
        return pd.DataFrame(rows)
    if name == "parquet via pandas":
        pd = need("pandas")
        return pd.read_parquet(write_parquet(rows, tmp_path / "p.parquet"))
    if name == "HF Dataset":
        datasets = need("datasets")
        return datasets.Dataset.from_list(rows)
    if name == "Ragas rows":
        return ragas_rows()
    if name == "Ragas DataFrame":
        pd = need("pandas")
        return pd.DataFrame(ragas_rows())
    if name == "Ragas HF Dataset":
        datasets = need("datasets")
        return datasets.Dataset.from_list(ragas_rows())
    if name == "Ragas CSV (pandas' list literals)":
        pd = need("pandas")
        p = tmp_path / "ragas.csv"
        pd.DataFrame(ragas_rows()).to_csv(p, index=False)
        return p
    if name == "Ragas EvaluationDataset":
        return RagasEvaluationDataset([SingleTurnSample(**r) for r in ragas_rows()])
    if name == "DeepEval test cases":
        return deepeval_cases()
    raise AssertionError(name)


WITH_IDS = ["jsonl", "json array", "csv", "parquet", "list of dicts", "DataFrame", "parquet via pandas", "HF Dataset"]
WITHOUT_IDS = ["Ragas rows", "Ragas DataFrame", "Ragas HF Dataset", "Ragas CSV (pandas' list literals)",
               "Ragas EvaluationDataset", "DeepEval test cases"]


@pytest.fixture(scope="module")
def reference_table():
    r = evaluate(WARRANTY / "dataset.jsonl", LABEL_METRICS)
    return r.to_dataframe(), r.means()


@pytest.mark.parametrize("name", WITH_IDS)
def test_shapes_with_ids_give_the_same_table_and_fingerprint(name, tmp_path, reference_table):
    table, means = reference_table
    data = shape(name, tmp_path)
    r = evaluate(data, LABEL_METRICS)
    assert r.to_dataframe().equals(table), r.to_dataframe()
    assert r.means() == means
    assert load_dataset(data).fingerprint == load_dataset(WARRANTY / "dataset.jsonl").fingerprint


@pytest.mark.parametrize("name", WITHOUT_IDS)
def test_text_shapes_give_the_same_label_metrics(name, tmp_path, reference_table, capsys):
    table, means = reference_table
    r = evaluate(shape(name, tmp_path), LABEL_METRICS)
    got = r.to_dataframe()
    assert list(got.index) == ["1", "2", "3", "4", "5", "6"]  # ids default to the row position...
    assert "no record has an id; each sample's id is its position (1 to 6)" in capsys.readouterr().err  # ...said
    assert (got.to_numpy() == table.to_numpy()).all() and list(got.columns) == list(table.columns)
    assert r.means() == means
    assert means["precision@5"] == pytest.approx(0.3) and means["reciprocal_rank@5"] == pytest.approx(0.617, abs=5e-4)


def test_ragas_rows_keep_their_contexts():
    """The bug: a Ragas row's ``retrieved_contexts`` went into metadata and the sample had no chunks."""
    texts = corpus()
    (s,) = load_dataset([ragas_rows(with_ids=True)[0]]).samples
    assert [c.text for c in s.retrieved] == [texts[c] for c in warranty_rows()[0]["retrieved"]]
    assert "retrieved_contexts" not in s.metadata and "reference_contexts" not in s.metadata
    assert s.id == "q1" and s.answer and s.reference and s.question.startswith("My R2 router")
    assert set(s.relevance) == {content_id(texts[c]) for c in ("warranty-r2", "claim-steps", "exclusions")}


def test_deepeval_retrieval_context_outside_conversations():
    (case,) = deepeval_cases()[:1]
    (s,) = load_dataset([case]).samples
    assert len(s.retrieved) == 5 and all(c.text for c in s.retrieved)
    assert len(s.relevance) == 3  # DeepEval's ``context`` (the ideal context) became the labels
    assert s.metadata["source"] == "deepeval" and s.answer and s.reference


def test_repeated_texts_share_one_chunk_id_across_rows():
    """Stable content-hash ids: the same passage gets the same id in every row (so a label in
    one row and a retrieval in another line up), and the id does not depend on the row."""
    data = load_dataset(ragas_rows())
    r1 = corpus()["warranty-r1"]
    ids = {c.id for s in data for c in s.retrieved if c.text == r1}
    assert ids == {content_id(r1)} and content_id(r1) == "text-" + __import__("hashlib").sha256(
        r1.encode()).hexdigest()[:16]
    retrieving = [r["id"] for r in warranty_rows() if "warranty-r1" in r["retrieved"]]
    assert len(retrieving) > 1 and sum(content_id(r1) in s.retrieved_ids for s in data) == len(retrieving)


def test_reference_texts_match_retrieved_texts_exactly():
    """Reference contexts become labels by exact text match: a trailing space or another case
    is another passage (README, "Your data")."""
    row = {"user_input": "q", "retrieved_contexts": ["Alpha.", "Beta."], "reference_contexts": ["Beta."]}
    assert evaluate([row], "mrr").values("mrr") == [0.5]
    for near in ("Beta. ", "beta."):
        miss = {**row, "reference_contexts": [near]}
        assert evaluate([miss], "mrr").values("mrr") == [0.0]


def test_older_ragas_names_and_ragas_ids():
    (old,) = load_dataset([{"question": "q", "contexts": ["A", "B"], "answer": "a",
                            "ground_truths": ["one", "two"]}]).samples
    assert [c.text for c in old.retrieved] == ["A", "B"] and old.reference == "one\ntwo" and old.answer == "a"
    (ids,) = load_dataset([{"user_input": "q", "retrieved_contexts": ["A", "B"], "retrieved_context_ids": ["a", "b"],
                            "reference_context_ids": ["b"]}]).samples
    assert ids.retrieved_ids == ("a", "b") and dict(ids.relevance) == {"b": 1.0} and ids.retrieved[1].text == "B"


@pytest.mark.parametrize("data,words", [
    (42, "data: got int; accepted: a path"),
    (b"d.jsonl", "data: got bytes"),
    ([42], "data item: got int"),
    ([object()], "data item: got object"),
])
def test_anything_else_is_a_typed_error_naming_the_argument(data, words):
    with pytest.raises(UnsupportedInputError) as info:
        evaluate(data)
    assert words in str(info.value) and "a pandas DataFrame" in str(info.value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, InvalidInputError)


def test_one_dict_and_bad_text_contexts_say_the_fix(tmp_path):
    with pytest.raises(InvalidInputError, match="got one dict. Fix: pass a list of dicts"):
        load_dataset({"id": "q1"})
    with pytest.raises(InvalidInputError,
                       match=r'list of dicts, row 2, field "retrieved_contexts": must be a list of texts'):
        load_dataset([{"user_input": "a", "retrieved_contexts": ["x"]}, {"user_input": "b", "retrieved_contexts": "x"}])
    with pytest.raises(InvalidInputError, match=r'"retrieved_contexts" and "retrieved" both give "retrieved"'):
        load_dataset([{"id": "q", "retrieved": ["a"], "retrieved_contexts": ["x"]}])
    bad = tmp_path / "d.json"
    bad.write_text('[{"id": "q1"}, ', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"d.json, line 1: not valid JSON"):
        load_dataset(bad)


def test_a_json_array_error_names_the_row(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps([{"id": "q1"}, {"id": "q2", "retrieved": "a"}]), encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r'd.json, row 2 \(id "q2"\), field "retrieved"'):
        load_dataset(p)


def test_json_lines_in_a_json_file_still_read(tmp_path):
    p = tmp_path / "d.json"
    p.write_text((WARRANTY / "dataset.jsonl").read_text(), encoding="utf-8")
    assert len(load_dataset(p)) == 6


def test_a_dataset_repr_is_short_and_its_html_escaped():
    data = load_dataset([{"id": "<b>x</b>", "question": "<script>alert(1)</script>", "retrieved": ["a"]}])
    assert repr(data).startswith("Dataset(1 samples, fingerprint=")
    page = data._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_readme_your_data_block_runs_and_says_what_it_prints():
    from tests import manual

    section = manual.section("## Your data")
    (block,) = __import__("re").findall(r"```python\n(.*?)```", section, __import__("re").DOTALL)
    scope: dict = {}
    exec(block, scope)  # noqa: S102  (README's own example)
    assert scope["result"].means() == {"precision@2": 0.5, "reciprocal_rank@2": 0.5}
    assert "result.means()  # {'precision@2': 0.5, 'reciprocal_rank@2': 0.5}" in section


@pytest.mark.parametrize("name", ["json array", "parquet"])
def test_the_cli_scores_a_json_array_and_parquet(name, cli, tmp_path):
    out = cli("eval", shape(name, tmp_path), "--no-save")
    assert out.exit_code == 0, out.output
    assert "mean   precision@5 0.300 | recall@5 0.778 | hit rate@5 0.833 | MRR 0.617 | nDCG@5 0.628" in out.stdout


def test_graded_labels_and_metadata_through_arrow_and_as_dicts(tmp_path):
    """Arrow unifies per-row objects into one struct (missing keys become null): those nulls are
    not grades. A list of dicts keeps its metadata as written."""
    rows = [{"id": "a", "retrieved": ["x", "y"], "relevant": {"x": 2}, "metadata": {"m": None}},
            {"id": "b", "retrieved": ["x", "y"], "relevant": {"y": 1}}]
    arrow = load_dataset(write_parquet(rows, tmp_path / "g.parquet"))
    assert [dict(s.relevance) for s in arrow] == [{"x": 2.0}, {"y": 1.0}]
    assert dict(load_dataset(rows).samples[0].metadata) == {"m": None}
    assert evaluate(rows, "ndcg", k=None).values("ndcg") == evaluate(arrow, "ndcg", k=None).values("ndcg")


def test_a_folder_and_a_json_nested_too_deep_are_located_errors(tmp_path):
    """The trial: a folder was "unknown format '(no extension)'", and "[" x 100,000 in a .json a
    RecursionError traceback."""
    folder = tmp_path / "beir-scifact"
    folder.mkdir()
    with pytest.raises(InvalidInputError, match="is a folder, not a dataset file.*ragmeter import"):
        load_dataset(folder)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(InvalidInputError, match=r"deep.json: not valid JSON \(nested too deep to read\)"):
        load_dataset(deep)
