"""``ragmeter.actions.calls``: What an agent run did: the tool calls it made and the tools it declares."""

from __future__ import annotations

import pickle
from types import MappingProxyType


def test_an_agent_run_pickles() -> None:
    from ragmeter.actions.calls import AgentRun

    run = AgentRun(id="a1", question="?", metadata=MappingProxyType({"k": 1}))
    assert pickle.loads(pickle.dumps(run)) == run
