"""``--judge local`` and ``--judge local:/path/model.gguf``: the judge protocol served in-process
by llama.cpp, with no network at all.

- ``claims.verify`` is answered by typed questions per (claim, passage) (``verify``: the
  passages that can bear on each claim, a three-way question, and a yes/no question where it can
  change the verdict), then decided by the rule in ``verdict_rule``. The probabilities of every
  (claim, passage) pair, and the passages skipped, go into the ledger with the judgment, so a
  change of the rule re-scores without a call.
- ``claims.extract`` is answered in small steps (``extract``): claims generated under a
  grammar (or the answer's sentences, ``claims='sentences'``), typed yes/no questions for
  relevance and refusal, citation markers read from the text.
- ``context.relevance`` and the other prompts are generated greedily under a grammar built from
  their JSON Schema. A prompt (or prompt part) whose answers were not measured against hand
  labels, or did no better than a trivial rule, is refused (``refuses``), and the metrics
  reading it are NotComputed with the reason (``agreement``).

The model file, the question recipe and the verification settings are part of each judgment's
ledger key (``key_extra``); the decision rule is not (it is applied when a judgment is read)
and goes into the provenance instead, with its measured agreement.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.backends.base import Backend, Decoding, Reply
from ragmeter.judges.local import agreement as local_agreement
from ragmeter.judges.local import extract as local_extract
from ragmeter.judges.local import llm as local_llm
from ragmeter.judges.local import model as local_model
from ragmeter.judges.local import probe as local_probe
from ragmeter.judges.local.verdict_rule import RULES, VerdictRule
from ragmeter.judges.local.verify import VerifySettings, verdict_rows
from ragmeter.judges.replies import digest
from ragmeter.judges.transport import JudgeConfigError

VERIFY, EXTRACT = "claims.verify", "claims.extract"
MODES = ("per_chunk", "joined")
CLAIM_MODES = ("extracted", "sentences")


def recipe_hashes(questions: str) -> dict:
    """What the local judge asks, hashed: part of every ledger key, like a prompt hash."""
    return {"verdicts": digest([(q.system, q.template, q.words) for q in local_llm.QUESTION_SETS[questions]]),
            "extract": digest(local_extract.RECIPE)}


class LocalBackend(Backend):
    name = "local"

    def __init__(self, path: str | Path | None = None, *, mode: str = "per_chunk", rule: VerdictRule | None = None,
                 threads: int | None = None, n_ctx: int = 8192, settings: VerifySettings | None = None,
                 parallel: int = local_llm.PARALLEL, claims: str | None = None) -> None:
        if path is None:
            self.path = local_model.bundled_model()
            self.sha256 = local_model.BUNDLED_SHA256
            self.model = local_model.BUNDLED_MODEL
        else:
            self.path = Path(path).expanduser()
            if not self.path.is_file():
                raise JudgeUnavailableError(f"local judge: no model file at {self.path}")
            self.sha256 = local_model.file_digest(self.path)
            self.model = self.path.name
        claims = claims or os.environ.get("RAGMETER_LOCAL_CLAIMS") or local_agreement.DEFAULT_CLAIMS
        if claims not in CLAIM_MODES:
            raise JudgeConfigError(f"local judge claims must be one of {', '.join(CLAIM_MODES)}, got {claims!r}")
        self.threads, self.n_ctx, self.parallel, self.claims = threads, n_ctx, parallel, claims
        self._lock = threading.Lock()  # one model, one caller at a time
        self._load_error: JudgeUnavailableError | None = None
        self.settings = settings or local_agreement.DEFAULT_SETTINGS
        self.set_mode(mode, rule)

    def set_mode(self, mode: str, rule: VerdictRule | None = None) -> None:
        """``joined``: each claim against all passages at once; ``per_chunk``: against each passage."""
        if mode not in MODES:
            raise JudgeConfigError(f"local judge mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "joined":
            self.settings = local_agreement.JOINED_SETTINGS
        elif self.settings.mode != "per_chunk":
            self.settings = local_agreement.DEFAULT_SETTINGS
        self.mode = mode
        self.rule = rule or local_agreement.rule_for(self.settings) or RULES[mode]

    @property
    def load_settings(self) -> dict:
        """The llama.cpp load settings the start-up probe checks (they choose code paths)."""
        return {"extra_bufts": local_llm.EXTRA_BUFTS}

    @property
    def llm(self) -> local_llm.LocalLLM:
        """The model, loaded on first use after the start-up probe (``probe``)."""
        if self._load_error is not None:
            raise self._load_error
        try:
            return self._llm
        except JudgeUnavailableError as exc:
            self._load_error = exc
            raise

    @cached_property
    def _llm(self) -> local_llm.LocalLLM:
        local_probe.ensure_loadable(self.path, self.sha256, self.load_settings)
        return local_llm.LocalLLM(self.path, n_ctx=self.n_ctx, threads=self.threads, parallel=self.parallel,
                                  **self.load_settings)

    @cached_property
    def embedder(self) -> Any:
        from ragmeter.embeddings.minilm import bundled

        return bundled()

    @property
    def key_extra(self) -> dict | None:
        key = {"sha256": self.sha256, **recipe_hashes(self.settings.questions), "mode": self.mode}
        if self.settings != VerifySettings(mode=self.mode) or self.parallel != 1:  # the first recipe keeps its keys
            key["verify"] = {**self.settings.as_dict(), "parallel": self.parallel}
        if self.claims != "extracted":  # sentences: questions and offers of help left out since v2
            key["claims"] = self.claims if self.claims != "sentences" else "sentences-v2"
        return key

    @property
    def description(self) -> dict:
        """What goes into provenance besides backend and model."""
        measured = local_agreement.measured(self.sha256, self.settings, self.rule)
        agreement = measured or "not measured for this model and rule: run ragmeter judge-check --judge local:<file>"
        return {"sha256": self.sha256, "verdicts": f"typed next-token probabilities, {self.mode}",
                "verify": self.settings.as_dict(), "claims": self.claims, "rule": self.rule.as_dict(),
                "agreement": agreement}

    def refuses(self, prompt_id: str) -> str | None:
        return local_agreement.refusal(prompt_id, self.sha256)

    async def complete(self, messages: list[dict], schema: dict, schema_name: str, decoding: Decoding,
                       request: Any = None) -> Reply:
        return await asyncio.to_thread(self._complete, messages, schema, decoding, request)

    def _complete(self, messages, schema, decoding, request) -> Reply:
        usage = local_llm.Usage()
        with self._lock:
            if request is not None and request.prompt.id == VERIFY and request.parts is not None:
                probs = self._verdict_probs(request.parts, usage)
                value = self.rule.verdicts(probs, [cid for cid, _ in request.parts["claims"]])
                return Reply(json.dumps(value), usage.prompt_tokens, 0, usage.seconds, logprobs=probs)
            if request is not None and request.prompt.id == EXTRACT:
                found, cut = local_extract.extract(self.llm, dict(request.inputs), max_tokens=decoding.max_tokens,
                                                   seed=decoding.seed, usage=usage, claims=self.claims)
                return Reply(json.dumps(found), usage.prompt_tokens, usage.output_tokens, usage.seconds, truncated=cut)
            text, cut = self.llm.generate_json(messages, schema, max_tokens=decoding.max_tokens, seed=decoding.seed,
                                               usage=usage)
        return Reply(text, usage.prompt_tokens, usage.output_tokens, usage.seconds, truncated=cut)

    def _verdict_probs(self, parts: dict, usage) -> list[dict]:
        return verdict_rows(self.llm, parts["passages"], parts["claims"], self.settings, self.rule, usage,
                            embedder=self.embedder if self.settings.top_k > 0 else None)

    def rescore(self, request: Any, value: Any, logprobs: list | None) -> Any:
        """Re-decide stored verdicts with the current rule (no call)."""
        if request.prompt.id != VERIFY or not logprobs or request.parts is None:
            return value
        return self.rule.verdicts(logprobs, [cid for cid, _ in request.parts["claims"]])
