"""The provider of ``turn_standalone``: whether a conversation turn's question stands on its own.

One ``turn.standalone`` call per later turn (``metadata.turn`` above 1), in the extraction
stage, with the conversation so far. A first turn is standalone (nothing came before it);
``metadata.standalone`` in the data is used as given, with no call; a sample that is not a
conversation turn is ``Unavailable`` with the reason.
"""

from __future__ import annotations

from ragmeter.core.history import plain
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import STANDALONE, Evidence, Unavailable
from ragmeter.evidence.provider import EXTRACTION, ProviderBase, Wanted, unavailable, value
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt


class StandaloneTurns(ProviderBase):
    """Each turn's question: answerable without the turns before it, or not."""

    prompts = {STANDALONE: ("turn.standalone",)}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.standalone = load_prompt("turn.standalone")

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != EXTRACTION:
            return {}
        turn = sample.metadata.get("turn")
        if "standalone" in sample.metadata:
            ev.standalone = bool(sample.metadata["standalone"])  # the data says so: no call
        elif turn is None:
            ev.standalone = Unavailable("not a conversation turn")
        elif turn == 1:
            ev.standalone = True  # nothing came before it
        else:
            return {"standalone": JudgeRequest(self.standalone, {"history": plain(sample.metadata.get("history", "")),
                                                                 "question": sample.question or ""},
                                               schemas.STANDALONE, "standalone")}
        return {}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        ev.standalone = unavailable(judgment) or value(judgment)["standalone"]


PROVIDER = StandaloneTurns
