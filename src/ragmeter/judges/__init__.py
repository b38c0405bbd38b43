"""Judges: backends, prompts, validation with bounded re-asks, and the ledger-backed core."""

from ragmeter.judges.backend_factory import make_backend
from ragmeter.judges.backends import (
    AnthropicBackend,
    Backend,
    Decoding,
    NoCallBackend,
    OpenAIBackend,
    Reply,
    ScriptedBackend,
)
from ragmeter.judges.judge import Budget, BudgetExceeded, Judge, JudgeRequest, Judgment
from ragmeter.judges.judge_factory import make_judge
from ragmeter.judges.prompts import Prompt, load_prompt
from ragmeter.judges.replies import Keyed
from ragmeter.judges.transport import AdaptiveLimiter, JudgeConfigError, JudgeTransportError, Limiter, RetryPolicy

__all__ = ["Backend", "OpenAIBackend", "AnthropicBackend", "ScriptedBackend", "NoCallBackend", "Decoding", "Reply",
           "make_backend", "Judge", "JudgeRequest", "Judgment", "Budget", "BudgetExceeded", "Prompt", "load_prompt",
           "Keyed", "JudgeConfigError", "JudgeTransportError", "RetryPolicy", "Limiter", "AdaptiveLimiter",
           "make_judge"]
