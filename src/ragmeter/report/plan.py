"""A dry run's plan (:func:`ragmeter.engine.call_plan.dry_run_plan`) for a person: the judge calls
by prompt, the tokens, the cost and the time they would take, and what the estimate rests on
(``--format json`` prints the plan itself)."""

from __future__ import annotations

from typing import Any


def dry_run_text(plan: dict[str, Any]) -> str:
    """A dry run's plan for a person (``--format json`` prints the plan itself).

    >>> print(dry_run_text({"calls": 0, "note": "no judged metric requested"}))
    dry run: no judge call needed (no judged metric requested)
    """
    calls = plan.get("calls", 0)
    if not calls:
        return f"dry run: no judge call needed ({plan.get('note', 'nothing to judge')})"
    offline = bool(plan.get("judge_offline"))  # the offline judge: judgments, no token spent
    noun = "judgment" if offline else "judge call"
    lines = [f"dry run: {calls} {noun}{'s' if calls != 1 else ''} needed (none made)"]
    by_prompt = plan.get("calls_by_prompt") or {}
    width = max((len(p) for p in by_prompt), default=0)
    lines += [f"  {p:<{width}}  {n}" for p, n in by_prompt.items()]
    if "estimated_input_tokens" in plan and not offline:
        lines.append(f"estimated input tokens: {plan['estimated_input_tokens']}")
    if "max_output_tokens" in plan and not offline:
        lines.append(f"output tokens at most: {plan['max_output_tokens']}")
    if "estimated_usd_at_most" in plan:
        lines.append(f"cost at most about ${plan['estimated_usd_at_most']:.4f} (estimated input, output at its cap)")
        if plan.get("prices"):
            lines.append(f"  at {plan['prices']}")
    elif plan.get("judge_backend") != "local":  # a served judge: its price is the user's to give
        lines.append("cost: give --price-in and --price-out (USD per million tokens) to estimate it")
    if "estimated_seconds" in plan:
        lines.append(f"estimated time: about {plan['estimated_seconds']} s"
                     + (f" ({plan['time_note']})" if plan.get("time_note") else ""))
        for prompt, figure in (plan.get("seconds_per_call") or {}).items():
            lines.append(f"  assumes {figure['seconds']} s per {prompt} call ({figure['from']})")
    if plan.get("not_timed"):
        lines.append(f"not timed (left out of the estimate): {', '.join(plan['not_timed'])}")
    if plan.get("note"):
        lines.append(f"note: {plan['note']}")
    return "\n".join(lines)
