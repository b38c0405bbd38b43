"""The provider of every kind of evidence not yet in its own module (while they move out).

Standalone turns add one call per later turn when asked for.
"""

from __future__ import annotations

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import (
    STANDALONE,
    Evidence,
    Unavailable,
)
from ragmeter.evidence.provider import (
    EXTRACTION,
    ProviderBase,
    Wanted,
    unavailable,
    value,
)
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt


class Legacy(ProviderBase):
    """Standalone turns (one ``turn.standalone`` call per later turn)."""

    prompts = {
        STANDALONE: ("turn.standalone",),
    }

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.standalone = load_prompt("turn.standalone")

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        return self.extraction_requests(sample, ev) if stage == EXTRACTION else {}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        self.read_extraction(ev, name, judgment)

    def extraction_requests(self, s: Sample, ev: Evidence) -> dict[str, JudgeRequest]:
        out: dict[str, JudgeRequest] = {}
        if STANDALONE in self.kinds:
            standalone = self._standalone_request(s, ev)
            if standalone is not None:
                out["standalone"] = standalone
        return out

    def _standalone_request(self, s: Sample, ev: Evidence) -> JudgeRequest | None:
        turn = s.metadata.get("turn")
        if "standalone" in s.metadata:
            ev.standalone = bool(s.metadata["standalone"])  # the data says so: no call
        elif turn is None:
            ev.standalone = Unavailable("not a conversation turn")
        elif turn == 1:
            ev.standalone = True  # nothing came before it
        else:
            return JudgeRequest(self.standalone, {"history": s.metadata.get("history", ""),
                                                  "question": s.question or ""},
                                schemas.STANDALONE, "standalone")
        return None

    def read_extraction(self, ev: Evidence, name: str, j: Judgment | Exception) -> None:
        """Stage 1's judgment ``name`` (a key of :meth:`extraction_requests`) into ``ev``."""
        bad = unavailable(j)
        if name == "standalone":
            ev.standalone = bad or value(j)["standalone"]


PROVIDER = Legacy
