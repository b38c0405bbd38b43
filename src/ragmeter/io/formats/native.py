"""ragmeter's own records: one sample per record, in a file (``.jsonl`` / ``.ndjson``, ``.json``,
``.csv``, ``.parquet``: :mod:`ragmeter.io.shapes`) or in memory (a list of dicts, a pandas
``DataFrame``, a Hugging Face ``datasets.Dataset``), with ragmeter's field names
(:data:`~ragmeter.io.formats.base.FIELDS`) or the common other names for them below.
"""

from __future__ import annotations

from ragmeter.io.formats.base import Format

FORMAT = Format(
    name="ragmeter",
    tried="ragmeter's (question, retrieved, relevant, answer, reference)",
    accepted=("a path to a .jsonl, .json (array or lines), .csv or .parquet file", "a list of dicts",
              "a pandas DataFrame", "a Hugging Face datasets.Dataset"),
    aliases={"query_id": "id", "qid": "id", "sample_id": "id", "query": "question",
             "retrieved_ids": "retrieved", "relevant_ids": "relevant", "relevance": "relevant", "labels": "relevant",
             "context_ids": "context", "reference_answer": "reference"},
)
