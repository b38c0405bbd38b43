"""What the bundled local judge has been measured to do, and what it therefore refuses.

Numbers here come from ``bench/local_judge_bench.py`` on the bundled hand-labeled sets
(``judges/agreement/``): the verdicts' leave-one-context-out accuracy per verification setting,
and for each other prompt part the accuracy against its labels beside the best trivial rule
(the majority class). A prompt whose answers were never measured, or did no better than the
trivial rule, is refused: the metrics reading it are NotComputed under the local judge, with
the reason, instead of a number nobody should trust.
"""

from __future__ import annotations

from ragmeter.judges.local_model import BUNDLED_SHA256
from ragmeter.judges.local_verify import VerifySettings
from ragmeter.judges.verdict_rule import MEASURED, RULES, VerdictRule

DEFAULT_SETTINGS = VerifySettings()
DEFAULT_CLAIMS = "extracted"

# settings -> (the rule fitted on the whole agreement set, its measured agreement)
FITTED: dict[VerifySettings, tuple[VerdictRule, dict]] = {
    VerifySettings(mode="per_chunk"): (RULES["per_chunk"], MEASURED["per_chunk"]),
    VerifySettings(mode="joined"): (RULES["joined"], MEASURED["joined"]),
}

# prompt part -> measured accuracy against hand labels, beside the majority-class rule
PROMPTS: dict[str, dict] = {}

UNMEASURED = ("the local judge's answers to {prompt} have not been measured against hand labels, so it does "
              "not serve them; use --judge openai:<model> or anthropic:<model> for this metric")
NO_BETTER = ("the local judge's answers to {prompt} agree with hand labels no more often than the trivial rule "
             "'{rule}' ({acc:.2f} vs {base:.2f} on {n} labeled items), so it does not serve them; use --judge "
             "openai:<model> or anthropic:<model> for this metric")
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
