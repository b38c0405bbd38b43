"""Actions: criteria over the tool calls a run made, graded Pass / Fail / Unable to verify.

>>> from ragmeter.actions import grade_cases, load_action_criteria, load_runs, summarise
>>> runs = load_runs("examples/warranty/agent_runs.jsonl")                    # doctest: +SKIP
>>> grades = grade_cases(runs, load_action_criteria("examples/warranty/criteria.yaml"))  # doctest: +SKIP
>>> summarise(grades).pass_rate                                                # doctest: +SKIP

Importing this package loads no judge, HTTP client or YAML parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

_named, __dir__, __all__ = lazy_facade(__name__)
#: The former names (the rubric criteria had the same ones), still read for code that uses them.
FORMER = {"Criterion": "ActionCriterion", "load_criteria": "load_action_criteria"}


def __getattr__(name: str) -> object:
    return _named(FORMER.get(name, name))


if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.actions.calls import AgentRun, ToolCall, ToolSpec
    from ragmeter.actions.criteria import (
        ActionCriterion,
        CriteriaSet,
        criteria_from_dict,
        load_action_criteria,
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
        run_from_sample,
    )
    from ragmeter.actions.summary import ActionsSummary, grade_cases, summarise
