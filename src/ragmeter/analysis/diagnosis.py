"""Failure-point diagnosis: label each query with the faults its scores show, with evidence.

Follows "How to measure RAG performance from the scores together" in the article "RAG
Evaluation Metrics: Formulas and a Worked Example", with the failure-point names of Barnett et
al. 2024 ("Seven failure points when engineering a RAG system"). Each label needs certain
metrics in the run; a label whose metrics are missing is reported as not checked, never as
passed. Each finding carries the article's lever for it (:data:`LEVERS`; where the evidence
says which of two levers applies, the one it points to).

| label | rule (defaults in ``Thresholds``) |
|---|---|
| missed_top_ranked | hit rate 0 while the sample has relevant chunks labeled |
| missing_content | the question is unanswerable (no relevant chunk exists); says whether the answer declined |
| missing_chunk | a hit, but recall < 1: labeled relevant chunks outside the top k |
| not_in_context | relevant chunks retrieved but not in the context that reached the prompt |
| buried | a hit, but reciprocal rank <= 0.5 or nDCG < 0.6 |
| not_extracted | context recall >= 0.7 and faithfulness < 0.7 (the answer left or altered what the context said) |
| incomplete | faithfulness >= 0.7 and factual recall < 0.7; says whether each missing claim was in the context |
| incorrect_specificity | faithfulness >= 0.7 and answer relevancy < 0.7 |
| false_refusal | the answer declines an answerable question; says whether the relevant chunks reached the prompt |
| unsupported_answer | more than half of the answer's claims are not found in the context (faithfulness's verdicts) |
| wrong_format | the answer fails the ``expected_format`` given in the sample's metadata |
| stale_chunk | a fact the context supports fails against the system of record (``--records``); names the chunk |
| failed_action | a criterion on the run's tool calls fails (``--action-criteria``); names it, with its evidence |

``stale_chunk`` is the article's "faithfulness high, facts wrong in the system of record: the
retrieved chunk is stale" (:func:`ragmeter.records.find_stale_chunks`): it needs the answer's
fact checks (``record_accuracy``) and the answer-vs-context verdicts (``faithfulness``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ragmeter.core import patterns
from ragmeter.core.errors import InvalidInputError, InvalidParameterError
from ragmeter.core.measure import Measure
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Evidence
from ragmeter.metrics import make_measure, parse_measure
from ragmeter.records.facts import FactCheck
from ragmeter.records.stale import find_stale_chunks

LABELS = ("missed_top_ranked", "missing_content", "missing_chunk", "not_in_context", "buried", "not_extracted",
          "incomplete", "incorrect_specificity", "false_refusal", "unsupported_answer", "wrong_format", "stale_chunk",
          "failed_action")

RAISE_K = "raise k, then revisit chunking and the embedding model (no prompt change repairs it)"
PROMPT = "work on the prompt, the generator and the noise around the chunk"
#: The article's lever for each failure point ("How to measure RAG performance from the scores
#: together"); a finding whose evidence points to another lever carries that one instead.
LEVERS = {
    "missed_top_ranked": RAISE_K,
    "missing_content": "score whether the assistant declines, and add the content",
    "missing_chunk": RAISE_K,
    "not_in_context": "keep the retrieved chunk when the context is assembled: the consolidation step dropped it",
    "buried": "rerank; nothing else has to change",
    "not_extracted": PROMPT,
    "incomplete": "where the missing claim was in the context, " + PROMPT + "; where it was not, fix retrieval",
    "incorrect_specificity": "work on the prompt and the generator: the answer is grounded but not as specific as "
                             "the question needs",
    "false_refusal": "where the answer was in the context, work on the prompt and the generator; where it was not, "
                     "fix retrieval",
    "unsupported_answer": "work on the prompt and the generator: require answers from the context (or a refusal); "
                          "where the context lacked the answer, fix retrieval first",
    "wrong_format": "assert the format in code: no text metric measures it",
    "stale_chunk": "update or remove the stale chunk: a corpus fault that only a check outside the context catches",
    "failed_action": "fix the agent's tool use the criterion names: no context metric shows it",
}


@dataclass(frozen=True)
class Thresholds:
    buried_rr: float = 0.5
    buried_ndcg: float = 0.6
    high: float = 0.7  # "high" context recall / faithfulness
    low: float = 0.7  # "low" faithfulness / factual recall / answer relevancy
    mostly_not_found: float = 0.5  # unsupported_answer: more than this share of the claims not found


@dataclass
class Finding:
    label: str
    evidence: str
    lever: str = ""  # what to change; filled from LEVERS where the finding does not say


@dataclass
class QueryDiagnosis:
    id: str
    findings: list[Finding] = field(default_factory=list)
    not_checked: dict[str, str] = field(default_factory=dict)
    #: checks this case's evidence could not settle (an agent criterion Unable to Verify), with why
    unverified: list[Finding] = field(default_factory=list)
    #: a request that retrieved several times (read from a trace): its id and this retrieval's number
    request: str | None = None
    retrieval: int | None = None

    @property
    def labels(self) -> list[str]:
        return [f.label for f in self.findings]

    @property
    def headline(self) -> str:
        """The labels found; else, when some check could not be verified, that it could not
        (never "no failure point found", which would read as a pass); else "no failure point found".

        >>> QueryDiagnosis("a2", unverified=[Finding("failed_action", "no record source (order-on-record)")]).headline
        'unable to verify: failed_action (nothing failed in what could be checked)'
        """
        if self.findings:
            return ", ".join(self.labels)
        if self.unverified:
            labels = ", ".join(dict.fromkeys(f.label for f in self.unverified))
            return f"unable to verify: {labels} (nothing failed in what could be checked)"
        return "no failure point found"

    def as_dict(self) -> dict:
        out: dict[str, Any] = {
            "id": self.id, "findings": [{"label": f.label, "evidence": f.evidence, "lever": f.lever}
                                        for f in self.findings],
            "not_checked": self.not_checked,
            "unverified": [{"label": f.label, "reason": f.evidence} for f in self.unverified]}
        if self.request is not None:
            out.update(request=self.request, retrieval=self.retrieval)
        return out


@lru_cache(maxsize=1024)
def _measure(key: str) -> Measure | None:
    """The measure a run's key names (None for a metric this version does not know)."""
    try:
        return parse_measure(key)
    except InvalidParameterError:
        return None


def _is(m: Measure | None, name: str, cut: bool, params: dict[str, Any]) -> bool:
    """``m`` is metric ``name`` with ``params`` and the rest of its parameters at their defaults,
    at some cut-off when ``cut`` (on the retrieved list), else at none."""
    return m is not None and m.name == name and (m.k is not None) == cut and m == make_measure(name, m.k, **params)


def _keys(row: dict, names: tuple[str, ...], cut: bool, **params: Any) -> list[tuple[str, Measure]]:
    return _matching(tuple(row["metrics"]), names, cut, tuple(sorted(params.items())) if params else ())


@lru_cache(maxsize=1024)
def _matching(keys: tuple[str, ...], names: tuple[str, ...], cut: bool,
              params: tuple[tuple[str, Any], ...]) -> list[tuple[str, Measure]]:
    """The run's keys that name one of ``names`` (see :func:`_is`), worked out once per set of
    keys: every row of a run holds the same ones."""
    found = [(key, _measure(key)) for key in keys]
    return [(key, m) for key, m in found if m is not None and any(_is(m, n, cut, dict(params)) for n in names)]


def _metric(row: dict, name: str, *, cut: bool = False, **params: Any) -> float | None | bool:
    """The value of the run's first measure of metric ``name`` (see :func:`_is`), found through
    the registry (aliases and spellings resolve); None when not computed, False when the run lacks it."""
    for key, _ in _keys(row, (name,), cut, **params):
        cell = row["metrics"][key]
        return cell["value"] if cell["status"] == "scored" else None
    return False


def diagnose(samples: Sequence[Sample], rows: Sequence[dict], th: Thresholds = Thresholds()) -> list[QueryDiagnosis]:
    """Each sample's failure points, from its row of results (and the evidence stored with it)."""
    by_id = {r["id"]: r for r in rows}
    return [diagnose_sample(s, by_id[s.id], th) for s in samples if s.id in by_id]


RETRIEVAL_LABELS = ("missed_top_ranked", "missing_chunk", "buried")
# each needs faithfulness
CONTEXT_LABELS = ("not_extracted", "incomplete", "incorrect_specificity", "unsupported_answer")


def diagnose_sample(s: Sample, row: dict, th: Thresholds = Thresholds()) -> QueryDiagnosis:
    """One sample's findings, in the order of ``LABELS``; labels whose metrics the run lacks are
    listed as not checked, when the sample could have had their evidence: a sample with no
    retrieved list in a run without retrieval metrics (an agent's run) lists no retrieval label,
    and one with no context at all in a run without faithfulness lists no answer-vs-context label."""
    d = QueryDiagnosis(s.id)
    if isinstance(s.metadata.get("retrievals"), int) and s.metadata["retrievals"] > 1:
        d.request, d.retrieval = str(s.metadata.get("request")), s.metadata.get("retrieval")
    ev = row.get("evidence") or {}
    _retrieval_findings(d, s, row, ev, th)
    if not s.retrieved and not _keys(row, ("hit_rate", "reciprocal_rank", "ndcg", "recall"), cut=True):
        for label in RETRIEVAL_LABELS:
            d.not_checked.pop(label, None)
    _answer_findings(d, row, ev, th)
    _refusal_findings(d, s, row, ev, th)
    if not s.context_ids and _metric(row, "faithfulness") is False:
        for label in CONTEXT_LABELS:
            d.not_checked.pop(label, None)
    expected = s.metadata.get("expected_format")
    if expected is not None:
        problem = format_problem(s.answer or "", expected, sample=s.id)
        if problem:
            d.findings.append(Finding("wrong_format", problem))
    _stale_findings(d, ev)
    _action_findings(d, ev)
    for f in d.findings:
        f.lever = f.lever or LEVERS[f.label]
    return d


def _refusal_findings(d: QueryDiagnosis, s: Sample, row: dict, ev: dict, th: Thresholds) -> None:
    """``false_refusal``: the answer declines though the question is answerable (the refusal is
    judged with the answer's claims); the lever follows where the answer was. Not checked where
    the sample has an answer and a context but the run judged no refusal."""
    if not s.answer or not s.answerable or (s.relevance and not any(g >= 1 for g in s.relevance.values())):
        return
    declined = ev.get("declines")
    if not isinstance(declined, bool):
        if s.context_ids or s.retrieved:
            d.not_checked["false_refusal"] = "needs false_refusal or another claim metric (the refusal is judged " \
                                             "with the answer's claims)"
        return
    if not declined:
        return
    relevant = [c for c, g in s.relevance.items() if g >= 1]
    shown = [c for c in relevant if c in s.context_ids]
    ctx_recall = _metric(row, "context_recall")
    if shown or (not relevant and isinstance(ctx_recall, float) and ctx_recall >= th.high):
        why = (f"relevant chunks in the prompt: {', '.join(shown)}" if shown
               else f"context recall {ctx_recall:.2f}")
        d.findings.append(Finding("false_refusal", f"the answer declined an answerable question; {why}",
                                  "work on the prompt and the generator: the answer was in the context"))
    elif relevant or isinstance(ctx_recall, float):
        why = ("no relevant chunk reached the prompt (relevant: " + ", ".join(relevant) + ")" if relevant
               else f"context recall {ctx_recall:.2f}")
        dropped = any(c in s.retrieved_ids for c in relevant)
        d.findings.append(Finding("false_refusal", f"the answer declined an answerable question; {why}",
                                  LEVERS["not_in_context"] if dropped else "fix retrieval first: " + RAISE_K))
    else:
        d.findings.append(Finding("false_refusal", "the answer declined an answerable question; whether the context "
                                                   "held the answer is not known (no relevance labels, no "
                                                   "context_recall)"))


def _action_findings(d: QueryDiagnosis, ev: dict) -> None:
    """``failed_action``: the criteria on the sample's tool calls that failed (stored by
    ``action_pass_rate``), each with its evidence. Criteria that could not be verified (Unable
    to Verify) are listed in ``unverified``, one entry per reason with the criteria it held back."""
    actions = ev.get("actions")
    if not isinstance(actions, dict):
        return
    criteria = [c for c in actions.get("criteria") or () if isinstance(c, dict)]
    failed = [c for c in criteria if c.get("verdict") == "fail"]
    if failed:
        d.findings.append(Finding("failed_action", "; ".join(f"{c.get('id')} ({c.get('criterion')}): "
                                                             f"{c.get('evidence')}" for c in failed)))
    held: dict[str, list[str]] = {}
    for c in criteria:
        if c.get("verdict") == "unable_to_verify":
            held.setdefault(str(c.get("evidence") or "no reason recorded"), []).append(str(c.get("id")))
    d.unverified += [Finding("failed_action", f"{why} ({', '.join(ids)})") for why, ids in held.items()]


def _stale_findings(d: QueryDiagnosis, ev: dict) -> None:
    """``stale_chunk``, from the stored fact checks and answer-vs-context verdicts. Not checked
    when the run checked facts but lacks the verdicts; silent when it checked no facts."""
    facts = ev.get("facts")
    if facts is None:
        return
    if not isinstance(facts, list):
        d.not_checked["stale_chunk"] = f"no fact checks: {facts.get('unavailable', 'not available')}"
        return
    verdicts = ev.get("verdicts", {}).get("answer@context")
    matrix = Evidence.from_dict({
        "answer_claims": [c for c in ev.get("answer_claims") or [] if isinstance(c, dict)],
        "verdicts": {"answer@context": verdicts} if isinstance(verdicts, list) else {}})
    stale, why = find_stale_chunks(matrix, [FactCheck.from_dict(f) for f in facts])
    if why is not None and facts:
        d.not_checked["stale_chunk"] = "needs faithfulness (the answer-vs-context verdicts) with record_accuracy"
    for found in stale:
        d.findings.append(Finding("stale_chunk", found.evidence))


def retrieval_keys(keys: Sequence[str]) -> tuple[str | None, str | None, str | None, str | None, int | None]:
    """The keys of a run whose rows hold ``keys`` (in that order) that the retrieval findings read:
    hit rate, reciprocal rank, nDCG and recall (each the first at a cut-off with its default
    parameters, or None), and the cut-off k they take (as :func:`diagnose_sample` finds them)."""
    row = {"metrics": dict.fromkeys(keys)}
    first = {name: next((key for key, _ in _keys(row, (name,), True)), None)
             for name in ("hit_rate", "reciprocal_rank", "ndcg", "recall")}
    k = next((m.k for _, m in _keys(row, ("hit_rate", "recall", "ndcg"), cut=True)), None)
    return first["hit_rate"], first["reciprocal_rank"], first["ndcg"], first["recall"], k


def _retrieval_findings(d: QueryDiagnosis, s: Sample, row: dict, ev: dict, th: Thresholds) -> None:
    hit, rr = _metric(row, "hit_rate", cut=True), _metric(row, "reciprocal_rank", cut=True)
    ndcg, recall = _metric(row, "ndcg", cut=True), _metric(row, "recall", cut=True)
    k = next((m.k for _, m in _keys(row, ("hit_rate", "recall", "ndcg"), cut=True)), None)
    relevant = [c for c, g in s.relevance.items() if g >= 1]
    ranked = s.retrieved_ids
    top = ranked[:k] if k else ranked
    if not s.answerable or (s.relevance and not relevant):
        declined = ev.get("declines")
        says: dict[object, str] = {True: "the answer declined", False: "the answer did not decline"}
        said = says.get(declined, "refusal not judged")
        d.findings.append(Finding("missing_content", f"no relevant chunk exists for this question; {said}"))
    if hit is False:
        d.not_checked["missed_top_ranked"] = "needs hit_rate@k"
    elif hit == 0 and relevant:
        d.findings.append(Finding("missed_top_ranked", f"no relevant chunk in the top {k}; relevant: "
                                                       f"{', '.join(relevant)}"))
    if hit is False or (hit == 1 and recall is False):
        d.not_checked["missing_chunk"] = "needs hit_rate@k and recall@k"
    elif hit == 1 and recall is not None and recall < 1:
        missing = [c for c in relevant if c not in top]
        d.findings.append(Finding("missing_chunk", f"recall@{k} {recall:.3f}: {', '.join(missing)} not retrieved"))
    in_prompt = set(s.context_ids) if relevant else set()
    dropped = [c for c in relevant if c in top and c not in in_prompt]
    if dropped:
        d.findings.append(Finding("not_in_context", f"retrieved but not in the prompt: {', '.join(dropped)}"))
    if hit is False or (rr is False and ndcg is False):
        d.not_checked["buried"] = "needs hit_rate@k and reciprocal_rank@k or ndcg@k"
    elif hit == 1 and ((rr not in (False, None) and rr <= th.buried_rr) or
                       (ndcg not in (False, None) and ndcg < th.buried_ndcg)):
        first = next(i for i, c in enumerate(top, start=1) if c in relevant)
        d.findings.append(Finding("buried", f"first relevant chunk at rank {first}"
                                            + (f"; nDCG@{k} {ndcg:.3f}" if ndcg not in (False, None) else "")))


def _answer_findings(d: QueryDiagnosis, row: dict, ev: dict, th: Thresholds) -> None:
    faith = _metric(row, "faithfulness")
    ctx_recall = _metric(row, "context_recall")
    fact_recall = _metric(row, "factual_correctness", mode="recall")
    relevancy = _metric(row, "answer_relevancy")
    if faith is False or ctx_recall is False:
        d.not_checked["not_extracted"] = "needs faithfulness and context_recall"
    elif faith is not None and ctx_recall is not None and ctx_recall >= th.high and faith < th.low:
        d.findings.append(Finding("not_extracted", f"context recall {ctx_recall:.2f}, faithfulness {faith:.2f}: "
                                                   + _failed_claims(ev)))
    if faith is False or fact_recall is False:
        d.not_checked["incomplete"] = "needs faithfulness and factual_correctness(mode='recall')"
    elif faith is not None and fact_recall is not None and faith >= th.high and fact_recall < th.low:
        d.findings.append(Finding("incomplete", f"faithfulness {faith:.2f}, factual recall {fact_recall:.2f}: "
                                                + _missing_claims(ev)))
    _unsupported(d, row, ev, th, faith, ctx_recall)
    if faith is False or relevancy is False:
        d.not_checked["incorrect_specificity"] = "needs faithfulness and answer_relevancy"
    elif faith is not None and relevancy is not None and faith >= th.high and relevancy < th.low:
        d.findings.append(Finding("incorrect_specificity", f"faithful ({faith:.2f}) but answer relevancy "
                                                           f"{relevancy:.2f}"))


def _unsupported(d: QueryDiagnosis, row: dict, ev: dict, th: Thresholds, faith: Any, ctx_recall: Any) -> None:
    """``unsupported_answer``: more than ``th.mostly_not_found`` of the answer's claims are not
    found in the context (the generator answered from elsewhere), from faithfulness's verdicts."""
    verdicts = ev.get("verdicts", {}).get("answer@context")
    if faith is False:
        d.not_checked["unsupported_answer"] = "needs faithfulness (the answer-vs-context verdicts)"
        return
    if not isinstance(verdicts, list) or not verdicts:
        return
    texts = {c["id"]: c["text"] for c in ev.get("answer_claims") or [] if isinstance(c, dict)}
    missing = [v["claim"] for v in verdicts if v["verdict"] == "not_found"]
    if len(missing) / len(verdicts) <= th.mostly_not_found:
        return
    lever = None
    if isinstance(ctx_recall, float) and ctx_recall < th.high:
        lever = f"fix retrieval first (context recall {ctx_recall:.2f}: the context lacked the answer); then " \
                "require answers from the context in the prompt"
    d.findings.append(Finding("unsupported_answer", f"{len(missing)} of {len(verdicts)} claims not found in the "
                                                    "context: " + "; ".join(f'"{texts.get(c, c)}"' for c in missing),
                              lever or ""))


def _failed_claims(ev: dict) -> str:
    claims = {c["id"]: c["text"] for c in ev.get("answer_claims") or [] if isinstance(c, dict)}
    verdicts = ev.get("verdicts", {}).get("answer@context")
    if not isinstance(verdicts, list):
        return "claim verdicts not in the run"
    parts = []
    for v in verdicts:
        if v["verdict"] == "contradicted":
            parts.append(f"claim {v['claim']} \"{claims.get(v['claim'], '')}\" contradicted by "
                         f"{', '.join(v['sources']) or 'the context'} (altered fact)")
        elif v["verdict"] == "not_found":
            parts.append(f"claim {v['claim']} \"{claims.get(v['claim'], '')}\" not in the context")
    return "; ".join(parts) or "no failing claim recorded"


def _missing_claims(ev: dict) -> str:
    claims = {c["id"]: c["text"] for c in ev.get("reference_claims") or [] if isinstance(c, dict)}
    in_answer = ev.get("verdicts", {}).get("reference@answer")
    in_context = ev.get("verdicts", {}).get("reference@context")
    if not isinstance(in_answer, list):
        return "claim verdicts not in the run"
    ctx = {v["claim"]: v["verdict"] for v in in_context} if isinstance(in_context, list) else {}
    parts = []
    for v in in_answer:
        if v["verdict"] != "supported":
            where = {"supported": "was in the context (incomplete)",
                     "contradicted": "the context contradicts it"}.get(ctx.get(v["claim"], ""),
                                                                       "was not in the context (a retrieval fault)")
            parts.append(f"\"{claims.get(v['claim'], v['claim'])}\" missing; it {where}")
    return "; ".join(parts) or "no missing claim recorded"


#: The longest a user's ``expected_format`` regex may search one answer (catastrophic
#: backtracking ends here, as a located error, instead of hanging ``diagnose``).
REGEX_TIMEOUT_S = patterns.TIMEOUT_S


def format_problem(answer: str, expected: Any, *, sample: str | None = None) -> str | None:
    """Check an answer against ``expected_format``: "json", "list", "table" or {"regex": ...}.

    A regex that does not compile, or that searches longer than :data:`REGEX_TIMEOUT_S`
    (the ``regex`` package's ``timeout``), is an ``InvalidInputError`` naming the sample.
    """
    if expected == "json":
        try:
            json.loads(re.sub(r"^```(?:json)?|```$", "", answer.strip()).strip())
            return None
        except (ValueError, RecursionError):
            return "expected JSON, the answer does not parse"
    if expected == "list":
        items = [line for line in answer.splitlines() if re.match(r"\s*([-*\u2022]|\d+[.)])\s+", line)]
        return None if len(items) >= 2 else "expected a list, the answer has fewer than two list items"
    if expected == "table":
        lines = answer.splitlines()
        ok = any("|" in a and re.fullmatch(r"\s*\|?\s*:?-{3,}.*", b or "") for a, b in zip(lines, lines[1:]))
        return None if ok else "expected a Markdown table, none found"
    if isinstance(expected, dict) and "regex" in expected:
        return None if _search(expected["regex"], answer, sample) else \
            f"the answer does not match {expected['regex']!r}"
    return f"unknown expected_format {expected!r} (use json, list, table or {{\"regex\": ...}})"


def _search(pattern: Any, answer: str, sample: str | None) -> bool:
    field = "metadata.expected_format.regex"
    why = patterns.check(pattern)
    if why is not None:
        raise InvalidInputError(f"the regex {str(pattern)[:60]!r} {why}" if isinstance(pattern, str) else why,
                                record=sample, field=field,
                                fix="escape special characters (\\( for a literal parenthesis)")
    try:
        return patterns.search(pattern, answer, timeout_s=REGEX_TIMEOUT_S)
    except patterns.PatternTimeout as exc:
        raise InvalidInputError(f"{exc} on the answer", record=sample, field=field, fix=patterns.FIX) from None


def count_labels(diagnoses: Sequence[QueryDiagnosis]) -> dict[str, int]:
    counts = Counter(label for d in diagnoses for label in d.labels)
    return {label: counts.get(label, 0) for label in LABELS}
