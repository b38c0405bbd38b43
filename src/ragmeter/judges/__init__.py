"""Judges: the ledger-backed core (ask, validate, re-ask, record), prompts and reply schemas; the
backends, one module per wire protocol, in ``backends/``; the bundled offline judge in ``local/``.
How far a judge can be trusted (agreement sets, judge agreement with labels) is ``ragmeter.trust``."""

from ragmeter.judges.backends import (
    AnthropicBackend,
    Backend,
    Decoding,
    NoCallBackend,
    OpenAIBackend,
    Reply,
    ScriptedBackend,
    make_backend,
)
from ragmeter.judges.budget import Budget, BudgetExceeded
from ragmeter.judges.judge import Judge, JudgeRequest, Judgment
from ragmeter.judges.judge_factory import make_judge
from ragmeter.judges.prompts import Prompt, load_prompt
from ragmeter.judges.replies import Keyed
from ragmeter.judges.transport import AdaptiveLimiter, JudgeConfigError, JudgeTransportError, Limiter, RetryPolicy

__all__ = ["Backend", "OpenAIBackend", "AnthropicBackend", "ScriptedBackend", "NoCallBackend", "Decoding", "Reply",
           "make_backend", "Judge", "JudgeRequest", "Judgment", "Budget", "BudgetExceeded", "Prompt", "load_prompt",
           "Keyed", "JudgeConfigError", "JudgeTransportError", "RetryPolicy", "Limiter", "AdaptiveLimiter",
           "make_judge"]
