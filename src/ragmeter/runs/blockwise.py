"""Evaluating and recording a run block by block (datasets larger than memory).

Each block is scored like an in-memory dataset and its samples and results are appended to
the run directory at once; the summary is built from every scored value at the end
(``math.fsum`` means and the seeded bootstrap interval over the sorted values), so it equals
the in-memory summary exactly.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from array import array
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import LowCoverageWarning, NothingRetrievedWarning
from ragmeter.core.summary import summary_from
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.corpus import load_corpus
from ragmeter.io.dataset import from_samples
from ragmeter.io.jsonl_blocks import iter_blocks, scan
from ragmeter.io.writer import sample_to_row, write_json


class Accumulator:
    """Per-metric values and coverage across blocks."""

    def __init__(self) -> None:
        self.values: dict[str, array[float]] = {}  # 8 bytes a value, not a Python float's 32
        self.status: dict[str, Counter] = {}
        self.reasons: dict[str, Counter] = {}
        self.provenance: dict[str, dict] = {}

    def add(self, doc: dict) -> None:
        for name, m in doc["metrics"].items():
            self.provenance.setdefault(name, m["provenance"])
        for row in doc["samples"]:
            for name, cell in row["metrics"].items():
                self.status.setdefault(name, Counter())[cell["status"]] += 1
                if cell["status"] == "scored":
                    self.values.setdefault(name, array("d")).append(cell["value"])
                else:
                    why = cell.get("reason") or cell.get("error") or ""
                    self.reasons.setdefault(name, Counter())[why] += 1

    def summary(self) -> dict[str, dict]:
        return {name: summary_from(name, self.values.get(name, array("d")), self.status[name]["not_computed"],
                                   self.status[name]["failed"], self.reasons.get(name, Counter())).as_dict()
                for name in self.status}


def evaluate_streaming(path: str, metrics, *, block: int, run_path: Path | None = None, setup: dict | None = None,
                       corpus: str | None = None,
                       open_run: Callable[[dict], tuple[Path | None, dict | None]] | None = None,
                       **kwargs: Any) -> tuple[dict, dict]:
    """Score ``path`` in blocks of ``block`` samples; returns (summary, dataset info).

    ``open_run``: called with the dataset's absolute path and fingerprint once the whole file
    has been checked, returning the run directory and its setup (so a rejected dataset leaves
    no run directory); or give ``run_path`` and ``setup`` directly."""
    texts = load_corpus(corpus) if corpus else None
    fingerprint, testset, count = scan(path, corpus=texts)  # ids checked before anything is scored
    if open_run is not None:
        run_path, setup = open_run({"path": str(Path(path).resolve()), "fingerprint": fingerprint})
    acc = Accumulator()
    files = None
    if run_path is not None:
        files = (open(run_path / "samples.jsonl", "w", encoding="utf-8"),
                 open(run_path / "results.jsonl", "w", encoding="utf-8"))
    judge_stats = None
    try:
        for samples in iter_blocks(path, block, corpus=texts):
            data = dataclasses.replace(from_samples(samples, path=path), fingerprint=fingerprint,
                                       testset_fingerprint=testset)
            with warnings.catch_warnings():  # a block's coverage is not the run's
                warnings.simplefilter("ignore", LowCoverageWarning)
                warnings.simplefilter("ignore", NothingRetrievedWarning)
                result = evaluate(data, metrics, **kwargs)
            doc = result.to_dict()
            acc.add(doc)
            judge_stats = doc.get("judge", judge_stats)
            if files:
                files[0].writelines(json.dumps(sample_to_row(s), ensure_ascii=False) + "\n" for s in samples)
                files[1].writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in doc["samples"])
                for f in files:
                    f.flush()
    finally:
        for f in files or ():
            f.close()
    summary = acc.summary()
    dataset = {"path": path, "fingerprint": fingerprint, "testset_fingerprint": testset, "samples": count}
    if run_path is not None:
        write_json(run_path / "summary.json", summary)
        write_json(run_path / "setup.json", {**(setup or {}), "status": "complete", "finished": time.time(),
                                              "ragmeter_version": __version__, "dataset": dataset,
                                              "metrics": acc.provenance, "judge": judge_stats})
    return summary, dataset
