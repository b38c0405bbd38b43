"""``--dry-run``: the judge calls and tokens a run needs, with no call made.

Also whether a run needs a judge at all, which decides if ``auto`` picks the bundled one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.core.measure import Measure
from ragmeter.core.settings import InvalidSettingError
from ragmeter.io.dataset import Dataset
from ragmeter.metrics.kinds import JudgedSpec

if TYPE_CHECKING:  # whether a run needs a judge is asked on every run: it loads no judge code
    from ragmeter.evidence.sources import Sources
    from ragmeter.judges.judge import Judge


def judged_measures(measures: Iterable[Measure]) -> list[Measure]:
    """The measures that read judgments."""
    return [m for m in measures if isinstance(m.spec, JudgedSpec)]


def needs_judge(measures: Iterable[Measure]) -> bool:
    """Whether any of the (resolved) measures reads judgments.

    >>> from ragmeter.engine.evaluate import resolve_measures
    >>> needs_judge(resolve_measures(["ndcg@5", "faithfulness"], 5)), needs_judge(resolve_measures(None, 5))
    (True, False)
    """
    return bool(judged_measures(measures))


def dry_run_plan(data: Dataset, measures: Sequence[Measure], *, sources: Sources, price_in: float | None = None,
                 price_out: float | None = None, concurrency: int = 1) -> dict[str, Any]:
    """The judge calls, estimated input tokens and output cap the judged measures need
    (``{"calls": 0, "note": ...}`` without one); raises when they need a judge and
    ``sources`` has none (a planning judge: no call is made).

    With a price (USD per million tokens), ``estimated_usd_at_most``: the estimated input
    tokens at ``price_in`` plus the output cap at ``price_out`` (:func:`ragmeter.judges.cost.usd`)."""
    measures = judged_measures(measures)
    if not measures:
        return {"calls": 0, "note": "no judged metric requested"}
    judge = sources.judge
    if judge is None:
        raise InvalidSettingError("dry_run", "a dry run of judged metrics needs --judge")
    from ragmeter.engine.judged_scoring import checked_context
    from ragmeter.evidence.planner import plan_calls

    checked_context(measures, sources)  # what the run refuses before any call, the plan refuses too
    needs: set[str] = set().union(*(m.spec.needs(m) for m in measures if isinstance(m.spec, JudgedSpec)))
    plan = plan_calls(data.samples, needs, sources)
    plan["judge_backend"] = judge.backend.name
    if str(judge.backend.model).startswith("offline evidence"):
        plan["judge_offline"] = True  # its judgments spend no token: time is their cost
    tokens = plan.pop("input_tokens_by_prompt", None)
    plan.update(time_estimate(plan["calls_by_prompt"], judge, concurrency=concurrency, tokens_by_prompt=tokens))
    if price_in is not None or price_out is not None:
        from ragmeter.judges.cost import usd

        plan["estimated_usd_at_most"] = round(usd(plan["estimated_input_tokens"], plan["max_output_tokens"],
                                                  price_in, price_out), 6)
    return plan


#: The offline judge (``--judge local``: sentence claims, evidence signals, its rule; no model
#: call): seconds per claims.extract call, and per estimated input token of claims.verify (its
#: cost is embedding the passages and claims it is shown, so it grows with their length).
#: Measured 2026-12-02 on 2 shared cores (AMD EPYC) at load 4.7 to 5.6, ``ragmeter eval ...
#: --judge local`` wall time (start-up included) against the dry run's calls and tokens:
#: the warranty sample with README's first command, 1 extraction + 4 verifications of 1,638
#: tokens, 4.6 s; 3 MTRAG tasks (tests/data/mtrag/responses-3.jsonl, faithfulness, context
#: recall, factual correctness, answer relevancy), 3 + 10 (4,892 tokens), 10.8 s; 10 MTRAG
#: development tasks with passages (trust/mtrag/dev.jsonl, about 4,400 characters of passages
#: each), the same metrics, 10 + 40 (37,862 tokens), 70.8 s, and faithfulness alone, 10 + 10
#: (13,411 tokens), 41.1 s. Timed inside the judge, an extraction took 0.1 to 0.25 s. With these
#: figures the dry runs said 3.4, 10.6, 78.0 and 29.0 s; the runs, again at load 3.3 to 4.6,
#: took 3.5, 7.9, 57.4 and 43.7 s.
OFFLINE_SECONDS_PER_CALL = {"claims.extract": 0.2, "claims.verify": 1.2}  # claims.verify: without its tokens
OFFLINE_SECONDS_PER_TOKEN = {"claims.verify": 0.002}
OFFLINE_MEASURED_ON = "the offline judge on 2 cores at load 5, warranty and MTRAG tasks (engine/call_plan.py)"
# the prompts the offline judge passes to the bundled model: context relevance measured on the warranty sample
# (6 calls, 2 min 29 s wall with the model's load and start-up, 2 cores at load 5, 2026-12-02)
MODEL_SECONDS_PER_CALL = {"context.relevance": 22.0}
MODEL_MEASURED_ON = "the bundled model's context relevance, warranty sample, 2 cores at load 5 (engine/call_plan.py)"
# a verification with the model stage on (--judge local:model): the warranty sample's q1 with faithfulness, context
# recall, factual correctness and answer relevancy, 4 verifications in 17.3 s (the stage's own progress line; 18.7 s
# wall with start-up), 2 cores at load 1.3, 2026-12-02
MODEL_STAGE_SECONDS_PER_VERIFY = 4.3
MODEL_STAGE_MEASURED_ON = ("the offline judge with its model stage, warranty q1, 2 cores at load 1.3 "
                           "(engine/call_plan.py)")


def _bundled_seconds(judge: Judge, calls: dict[str, int], tokens: dict[str, int]) -> dict[str, dict[str, Any]]:
    """prompt -> {"seconds" per call, "from"} for the bundled local judge: the offline judge's
    own figures (a verification's from its estimated input tokens; with its model stage on, the
    bundled model's verification figure), else the bundled model judge's."""
    from ragmeter.judges.local.agreement import SECONDS_MEASURED_ON, SECONDS_PER_CALL

    model = {p: {"seconds": v, "from": f"bundled figure: {SECONDS_MEASURED_ON}"} for p, v in SECONDS_PER_CALL.items()}
    if not str(judge.backend.model).startswith("offline evidence"):
        return model
    out = {p: {"seconds": v, "from": f"bundled figure: {OFFLINE_MEASURED_ON}"}
           for p, v in OFFLINE_SECONDS_PER_CALL.items()}
    out.update({p: {"seconds": v, "from": f"bundled figure: {MODEL_MEASURED_ON}"}
                for p, v in MODEL_SECONDS_PER_CALL.items()})
    for p, rate in OFFLINE_SECONDS_PER_TOKEN.items():
        if calls.get(p) and tokens.get(p):
            out[p] = {"seconds": round(rate * tokens[p] / calls[p], 1),
                      "from": f"bundled figure: {rate * 1000:g} s per 1,000 input tokens ({tokens[p]:,} here), "
                              f"{OFFLINE_MEASURED_ON}"}
    stages = (getattr(judge.backend, "key_extra", None) or {}).get("stages") or []
    if "model" in stages:  # the bundled model asked about uncertain claims
        out["claims.verify"] = {"seconds": MODEL_STAGE_SECONDS_PER_VERIFY,
                                "from": f"bundled figure: {MODEL_STAGE_MEASURED_ON}"}
    return out


def time_estimate(calls_by_prompt: dict[str, int], judge: Judge, *, concurrency: int = 1,
                  tokens_by_prompt: dict[str, int] | None = None) -> dict[str, Any]:
    """How long the calls take, and what that rests on: per prompt, the median seconds per call of
    this judge's own past calls in the ledger when it has some, else (the bundled local judge) the
    figures measured for it (the offline judge's own: :data:`OFFLINE_SECONDS_PER_CALL`, and a
    verification's from its input tokens, ``tokens_by_prompt``); calls in flight at once: one
    for the local judge, else ``concurrency``. Without either figure for a prompt, it is named,
    not guessed. Returns
    ``estimated_seconds``, ``seconds_per_call`` ({prompt: {"seconds", "from"}}) and ``time_note``;
    nothing when no prompt has a figure.

    >>> from ragmeter.judges import Judge, NoCallBackend
    >>> time_estimate({"claims.extract": 2}, Judge(NoCallBackend("local", "m")))["seconds_per_call"]
    {'claims.extract': {'seconds': 14.0, 'from': 'bundled figure: 2 cores (bench/local_judge_bench.py speed, \
default settings)'}}
    """
    local = judge.backend.name == "local"
    bundled = _bundled_seconds(judge, calls_by_prompt, tokens_by_prompt or {}) if local else {}
    past = judge.ledger.seconds_per_call(judge.backend.name, judge.backend.model)
    per_call: dict[str, dict[str, Any]] = {}
    for prompt in calls_by_prompt:
        seen = sorted(past.get(prompt, []))
        if seen:
            mid = len(seen) // 2
            median = seen[mid] if len(seen) % 2 else (seen[mid - 1] + seen[mid]) / 2
            per_call[prompt] = {"seconds": round(median, 1),
                                "from": f"median of this judge's {len(seen)} past call(s) in the ledger"}
        elif prompt in bundled:
            per_call[prompt] = bundled[prompt]
    if not per_call:
        return {}
    parallel = 1 if local else max(1, concurrency)
    total = sum(per_call[p]["seconds"] * n for p, n in calls_by_prompt.items() if p in per_call) / parallel
    out: dict[str, Any] = {
        "estimated_seconds": round(total, 1), "seconds_per_call": per_call,
        "time_note": (f"{'one call at a time' if parallel == 1 else f'{parallel} calls in flight at once'}; "
                      "seconds per call vary with the machine, its load and the length of the texts"),
    }
    untimed = sorted(set(calls_by_prompt) - set(per_call))
    if untimed:
        out["not_timed"] = untimed
    return out
