"""Evaluating and recording a run block by block (datasets larger than memory).

Each block is scored like an in-memory dataset and its samples and results are appended to
the run directory at once; the summary is built from every scored value at the end
(``math.fsum`` means and the seeded bootstrap interval over the sorted values), so it equals
the in-memory summary exactly.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import LowCoverageWarning, NothingRetrievedWarning
from ragmeter.core.evaluation import EvaluationResult, outcome_cells
from ragmeter.core.history import LineLedger
from ragmeter.core.measure import Measure
from ragmeter.core.score_column import ScoreColumn
from ragmeter.core.summary import summary_from
from ragmeter.engine.evaluate import evaluate_with
from ragmeter.evidence.sources import Sources, build_sources
from ragmeter.io.corpus import load_corpus
from ragmeter.io.jsonl_blocks import iter_block_datasets, scan
from ragmeter.io.writer import write_json
from ragmeter.runs.result_lines import result_lines, sample_lines


class Accumulator:
    """Per-metric values and coverage across blocks."""

    def __init__(self) -> None:
        self.values: dict[str, array[float]] = {}  # 8 bytes a value, not a Python float's 32
        self.status: dict[str, Counter] = {}
        self.reasons: dict[str, Counter] = {}
        self.provenance: dict[str, dict | None] = {}

    def add_result(self, result: EvaluationResult) -> None:
        """Add a block's outcomes: each cell as ``result.to_dict()`` writes it, read from the
        outcome columns (no row dicts made, no summary drawn for a block)."""
        for m in result.measures:
            outcomes, name = result.outcomes[m], str(m)
            self.provenance.setdefault(name, _provenance(outcomes) if result.size else None)
            if not result.size:
                continue
            status = self.status.setdefault(name, Counter())
            if isinstance(outcomes, ScoreColumn) and outcomes.all_scored:
                status["scored"] += len(outcomes)
                self.values.setdefault(name, array("d")).extend(outcomes.values.tolist())
                continue
            for cell in outcome_cells(outcomes):
                status[cell["status"]] += 1
                if cell["status"] == "scored":
                    self.values.setdefault(name, array("d")).append(cell["value"])
                else:
                    why = cell.get("reason") or cell.get("error") or ""
                    self.reasons.setdefault(name, Counter())[why] += 1

    def summary(self) -> dict[str, dict]:
        """Each measure's summary (a measure whose interval is the large-n approximation gets it
        named in its provenance, as ``to_dict`` names it)."""
        out = {}
        for name in self.status:
            s = summary_from(name, self.values.get(name, array("d")), self.status[name]["not_computed"],
                             self.status[name]["failed"], self.reasons.get(name, Counter()))
            prov = self.provenance.get(name)
            if prov is not None and s.interval != prov.get("interval", s.interval):
                self.provenance[name] = {**prov, "interval": s.interval}
            out[name] = s.as_dict()
        return out


def _provenance(outcomes: Any) -> dict[str, Any]:
    """A measure's provenance as ``to_dict`` writes it."""
    prov = outcomes.provenance if isinstance(outcomes, ScoreColumn) else outcomes[0].provenance
    return dict(prov.as_dict())


def evaluate_streaming(path: str, measures: Sequence[Measure], *, block: int, run_path: Path | None = None,
                       setup: dict | None = None, corpus: str | None = None,
                       open_run: Callable[[dict], tuple[Path | None, dict | None]] | None = None,
                       sources: Sources | None = None) -> tuple[dict, dict]:
    """Score ``path`` in blocks of ``block`` samples with ``measures`` (resolved) through
    ``sources``; returns (summary, dataset info).

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
    history_lines = LineLedger()  # a conversation's history lines written once across blocks
    try:
        for part in iter_block_datasets(path, block, corpus=texts):  # not fingerprinted again
            data = dataclasses.replace(part, fingerprint=fingerprint, testset_fingerprint=testset)
            with warnings.catch_warnings():  # a block's coverage is not the run's
                warnings.simplefilter("ignore", LowCoverageWarning)
                warnings.simplefilter("ignore", NothingRetrievedWarning)
                result = evaluate_with(data, measures, sources or build_sources())
            acc.add_result(result)
            if result.judge_stats is not None:
                judge_stats = {**result.judge_stats, "calls_per_sample": result.calls_per_sample}
            if files:  # the lines the run store writes (redacted)
                files[0].writelines(line + "\n" for line in sample_lines(data.samples, history_lines))
                files[1].writelines(line + "\n" for line in result_lines(result))
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
