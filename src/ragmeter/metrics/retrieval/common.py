"""The parameters every label metric shares: the relevance threshold and the view."""

from __future__ import annotations

from ragmeter.core.measure import Param

VIEW = Param(str, "retrieved", choices=("retrieved", "context"),
             doc="rank what the retriever returned, or what reached the prompt")
REL = Param(float, 1.0, doc="a chunk is relevant when its grade >= rel")
