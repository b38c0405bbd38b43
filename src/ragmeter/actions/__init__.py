"""Actions: criteria over the tool calls a run made, graded Pass / Fail / Unable to verify.

>>> from ragmeter.actions import grade_cases, load_criteria, load_runs, summarise
>>> runs = load_runs("examples/warranty/agent_runs.jsonl")                    # doctest: +SKIP
>>> grades = grade_cases(runs, load_criteria("examples/warranty/criteria.yaml"))  # doctest: +SKIP
>>> summarise(grades).pass_rate                                                # doctest: +SKIP

Importing this package loads no judge, HTTP client or YAML parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "ToolCall": "calls", "ToolSpec": "calls", "AgentRun": "calls",
    "read_tool_calls": "readers", "read_openai_messages": "readers", "read_openinference_spans": "readers",
    "read_plain_calls": "readers", "read_tools": "readers", "read_run": "readers", "load_runs": "readers",
    "read_spans_file": "readers", "run_from_sample": "readers",
    "Criterion": "criteria", "CriteriaSet": "criteria", "parse_criterion": "criteria", "parse_criteria": "criteria",
    "criteria_from_dict": "criteria", "load_criteria": "criteria",
    "CriterionResult": "grade", "CaseGrade": "grade", "grade_case": "grade", "VerifyFn": "grade",
    "ActionsSummary": "summary", "summarise": "summary", "grade_cases": "summary",
    "verifier": "judged", "StatementCheck": "judged",
}

__all__ = [
    "ActionsSummary",
    "AgentRun",
    "CaseGrade",
    "CriteriaSet",
    "Criterion",
    "CriterionResult",
    "StatementCheck",
    "ToolCall",
    "ToolSpec",
    "VerifyFn",
    "criteria_from_dict",
    "grade_case",
    "grade_cases",
    "load_criteria",
    "load_runs",
    "parse_criteria",
    "parse_criterion",
    "read_openai_messages",
    "read_openinference_spans",
    "read_plain_calls",
    "read_run",
    "read_spans_file",
    "read_tool_calls",
    "read_tools",
    "run_from_sample",
    "summarise",
    "verifier",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ragmeter.actions' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ragmeter.actions.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from ragmeter.actions.calls import AgentRun, ToolCall, ToolSpec
    from ragmeter.actions.criteria import (
        CriteriaSet,
        Criterion,
        criteria_from_dict,
        load_criteria,
        parse_criteria,
        parse_criterion,
    )
    from ragmeter.actions.grade import CaseGrade, CriterionResult, VerifyFn, grade_case
    from ragmeter.actions.judged import StatementCheck, verifier
    from ragmeter.actions.readers import (
        load_runs,
        read_openai_messages,
        read_openinference_spans,
        read_plain_calls,
        read_run,
        read_spans_file,
        read_tool_calls,
        read_tools,
    )
    from ragmeter.actions.summary import ActionsSummary, grade_cases, summarise
