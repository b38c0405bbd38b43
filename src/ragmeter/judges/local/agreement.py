"""What the bundled local judge has been measured to do, and what it therefore refuses.

Numbers here come from ``bench/local_judge_bench.py`` on the bundled hand-labeled sets
(``trust/agreement/``): the verdicts' leave-one-context-out accuracy per verification setting,
and for each other prompt part the accuracy against its labels beside the best trivial rule
(the majority class). A prompt whose answers were never measured, or did no better than the
trivial rule, is refused: the metrics reading it are NotComputed under the local judge, with
the reason, instead of a number nobody should trust.
"""

from __future__ import annotations

from ragmeter.core.judge_specs import judge_specs
from ragmeter.judges.local.model import BUNDLED_SHA256
from ragmeter.judges.local.verdict_rule import MEASURED, RULES, VerdictRule
from ragmeter.judges.local.verify import VerifySettings

# The default (bench/local_judge_bench.py, README "Offline"): the three-way question alone with its
# instruction in the system prompt, each claim checked against its best passage (plus exact number
# and name overlaps), claims as parallel sequences (llm.PARALLEL).
DEFAULT_SETTINGS = VerifySettings(questions="short3", top_k=1)
DEFAULT_CLAIMS = "extracted"
JOINED_SETTINGS = VerifySettings(mode="joined")  # the earlier joined recipe, kept for comparison

_FIT = ("grid search on every (claim, passage) pair of the bundled agreement set (216 claims, 24 contexts), "
        "maximising correct verdicts minus one per contradicted claim called supported")
DEFAULT_RULE = VerdictRule(bias_unmentioned=0.7, yes_threshold=0.0, fitted_on=_FIT, score="log_ratio")
_CV = "leave-one-context-out cross-validation: each context judged by the rule fitted on the other 23"

# settings -> (the rule fitted on the whole agreement set, its measured agreement)
FITTED: dict[VerifySettings, tuple[VerdictRule, dict]] = {
    DEFAULT_SETTINGS: (DEFAULT_RULE, {
        "set": "bundled agreement set, 216 claims in 24 contexts", "method": _CV, "n": 216, "correct": 153,
        "accuracy": 0.7083, "interval95": [0.6667, 0.7525],
        "interval_method": "percentile bootstrap over contexts (2000 draws, seed 0)",
        "contradicted_called_supported": 0.125,
        "confusion": {"supported": [39, 15, 18], "contradicted": [9, 54, 9], "not_found": [6, 6, 60]},
        "confusion_columns": ["supported", "contradicted", "not_found"]}),
    JOINED_SETTINGS: (RULES["joined"], {**MEASURED["joined"], "set": "held-out half of the earlier 72-claim set"}),
}

# prompt part -> measured accuracy against hand labels, beside the majority-class rule
# (bench/local_judge_bench.py prompts; confusion rows: label yes / no, columns: judged yes / no)
PROMPTS: dict[str, dict] = {
    "claims.extract:addresses_question": {
        "set": "agreement/addresses.jsonl", "n": 60, "accuracy": 0.75,
        "baseline": {"rule": "always yes (majority class)", "accuracy": 0.5},
        "confusion": {"yes": [17, 13], "no": [2, 28]}},
    "claims.extract:declines": {
        "set": "agreement/declines.jsonl", "n": 40, "accuracy": 0.85,
        "baseline": {"rule": "always yes (majority class)", "accuracy": 0.5},
        "confusion": {"yes": [20, 0], "no": [6, 14]},
        "note": "the wording was revised once after the first one called 12 of 20 answers refusals on this set"},
    "context.relevance": {
        "set": "agreement/context_relevance.jsonl (per sentence)", "n": 64, "accuracy": 0.75,
        "baseline": {"rule": "always no (majority class)", "accuracy": 0.6562},
        "confusion": {"yes": [15, 7], "no": [9, 33]}},
}

# Seconds per call of the default settings on 2 cores (bench/local_judge_bench.py speed, faithfulness +
# context recall on q1: 22.2 s, of which 14 s extract the claims; the two verifications share the rest).
# A dry run's time estimate: rough, and only for a CPU like the one measured.
SECONDS_PER_CALL = {"claims.extract": 14.0, "claims.verify": 4.1}
SECONDS_MEASURED_ON = "2 cores (bench/local_judge_bench.py speed, default settings)"

UNMEASURED = ("the local judge's answers to {prompt} have not been measured against hand labels, so it does "
              "not serve them; use --judge " + judge_specs(remote=True) + " for this metric")
NO_BETTER = ("the local judge's answers to {prompt} agree with hand labels no more often than the trivial rule "
             "'{rule}' ({acc:.2f} vs {base:.2f} on {n} labeled items), so it does not serve them; use --judge "
             + judge_specs(remote=True) + " for this metric")
SERVED_UNMEASURED = ("claims.extract", "claims.verify")  # measured as a whole through the verdicts


def rule_for(settings: VerifySettings) -> VerdictRule | None:
    fitted = FITTED.get(settings)
    return fitted[0] if fitted else None


def measured(sha256: str, settings: VerifySettings, rule: VerdictRule) -> dict | None:
    """The agreement behind a score's verdicts: the bundled model with the fitted rule only."""
    fitted = FITTED.get(settings)
    if sha256 != BUNDLED_SHA256 or fitted is None or fitted[0] != rule:
        return None
    return {**fitted[1], "prompts": PROMPTS}


def refusal(prompt_id: str, sha256: str) -> str | None:
    """Why the local judge does not serve ``prompt_id`` (None: it does). A prompt part is
    ``<prompt id>:<field>``, e.g. ``claims.extract:declines``."""
    if prompt_id in SERVED_UNMEASURED:
        return None
    m = PROMPTS.get(prompt_id)
    if m is None or sha256 != BUNDLED_SHA256:
        return UNMEASURED.format(prompt=prompt_id)
    if m["accuracy"] <= m["baseline"]["accuracy"]:
        return NO_BETTER.format(prompt=prompt_id, rule=m["baseline"]["rule"], acc=m["accuracy"],
                                base=m["baseline"]["accuracy"], n=m["n"])
    return None
