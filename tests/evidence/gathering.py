"""Gathering one kind of evidence through a scripted judge: what each provider's test needs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Evidence
from ragmeter.evidence.planner import agather_evidence
from ragmeter.evidence.sources import build_sources
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.ledger import Ledger


def gather(samples: Sequence[Sample], needs: set[str], respond: Callable[..., Any] | None = None,
           **parts: Any) -> tuple[list[Evidence], list[tuple[str, dict]]]:
    """Every sample's evidence for ``needs`` (``respond(prompt_id, inputs, messages)`` answers each
    call; None: no judge), and the (prompt id, inputs) of the calls made."""
    backend = ScriptedBackend(respond) if respond is not None else None
    judge = Judge(backend, ledger=Ledger(":memory:")) if backend is not None else None
    sources = build_sources(judge=judge, embedder=parts.pop("embedder", None), records=parts.pop("records", None),
                            criteria=parts.pop("criteria", None), action_criteria=parts.pop("action_criteria", None))
    evidence = asyncio.run(agather_evidence(samples, needs, sources))
    return evidence, list(backend.seen) if backend is not None else []
