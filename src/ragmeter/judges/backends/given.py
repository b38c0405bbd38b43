"""``--judge given``: the verdicts the data already holds, used as they are; no model, no call.

A sample carries them in ``metadata["verdicts"]``: per claim list and source (``answer@context``,
``reference@context``, ``answer@reference``, ``reference@answer``), one ``{"verdict", "sources"}``
per claim in the order of the sample's given claims. RAGChecker's ``checking_outputs.json`` is
read that way (``io/foreign.py``), so its published figures come out of ``ragmeter eval`` as
RAGChecker printed them. The claims must be given too (``answer_claims``, ``reference_claims``):
this judge splits nothing, and a sample or pair without given verdicts is not computed, with
the reason. Every other prompt is refused.
"""

from __future__ import annotations

from typing import Any

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.backends.base import Backend, Decoding, Reply

WHY = ("the given judge reads the claims and verdicts the data holds ({what}); it asks no model. "
       "Use --judge local or an API judge for this")


class GivenBackend(Backend):
    name = "given"
    model = "the verdicts in the data"
    given = True  # evidence/claims.py reads the sample's verdicts instead of asking

    @property
    def description(self) -> dict:
        return {"verdicts": "as the data gives them (metadata.verdicts)"}

    def refuses(self, prompt_id: str) -> str | None:
        if prompt_id.split(":")[0] in ("claims.extract", "claims.verify"):
            return None
        return WHY.format(what=f"{prompt_id} is not one of them")

    async def complete(self, messages: list[dict], schema: dict, schema_name: str, decoding: Decoding,
                       request: Any = None) -> Reply:
        what = "the sample gives no claims to verify" if request is not None and \
            request.prompt.id == "claims.extract" else "this prompt is not one of them"
        raise JudgeUnavailableError(WHY.format(what=what))
