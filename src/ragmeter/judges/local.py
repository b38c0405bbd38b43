"""``--judge local`` and ``--judge local:/path/model.gguf``: the judge protocol served in-process
by llama.cpp, with no network at all.

- ``claims.verify`` is answered by two typed questions per (claim, passage)
  (``local_llm.THREE_WAY`` and ``local_llm.YES_NO``), per context passage by default
  (``mode='joined'`` reads the passages together), then decided by the rule fitted in
  ``verdict_rule``. The probabilities of every (claim, passage) pair go
  into the ledger with the judgment, so a change of the rule re-scores without a call.
- ``claims.extract`` is answered in small steps (``local_extract``): generated claim lists,
  typed yes/no questions for relevance and refusal, citation markers read from the text.
- Every other prompt (context relevance, questions, rubric, pairwise, standalone) is
  generated greedily under a grammar built from its JSON Schema.

The model file, the verdict recipe and the mode are part of each judgment's ledger key
(``key_extra``); the decision rule is not (it is applied when a judgment is read) and goes
into the provenance instead.
"""

from __future__ import annotations

import asyncio
import json
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.backends import Backend, Decoding, Reply
from ragmeter.judges.replies import digest
from ragmeter.judges.transport import JudgeConfigError
from ragmeter.judges import local_extract, local_llm, local_model
from ragmeter.judges.verdict_rule import MEASURED, RULES, VerdictRule

VERIFY, EXTRACT = "claims.verify", "claims.extract"
# What the local judge asks, hashed once: part of every ledger key, like a prompt hash.
RECIPE_HASHES = {"verdicts": digest([(q.system, q.template, q.words) for q in local_llm.QUESTIONS]),
                 "extract": digest(local_extract.RECIPE)}


class LocalBackend(Backend):
    name = "local"

    def __init__(self, path: str | Path | None = None, *, mode: str = "per_chunk", rule: VerdictRule | None = None,
                 threads: int | None = None, n_ctx: int = 8192) -> None:
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
        self.threads, self.n_ctx = threads, n_ctx
        self._lock = threading.Lock()  # one model, one caller at a time
        self.set_mode(mode, rule)

    def set_mode(self, mode: str, rule: VerdictRule | None = None) -> None:
        """``joined``: each claim against all passages at once; ``per_chunk``: against each passage."""
        if mode not in RULES:
            raise JudgeConfigError(f"local judge mode must be one of {', '.join(RULES)}, got {mode!r}")
        self.mode, self.rule = mode, rule or RULES[mode]

    @cached_property
    def llm(self):
        return local_llm.LocalLLM(self.path, n_ctx=self.n_ctx, threads=self.threads)

    @property
    def key_extra(self) -> dict:
        return {"sha256": self.sha256, **RECIPE_HASHES, "mode": self.mode}

    @property
    def description(self) -> dict:
        """What goes into provenance besides backend and model."""
        bundled = self.sha256 == local_model.BUNDLED_SHA256 and self.rule == RULES[self.mode]
        agreement = (MEASURED[self.mode] if bundled
                     else "not measured for this model and rule: run ragmeter judge-check --judge local:<file>")
        return {"sha256": self.sha256, "verdicts": f"typed next-token probabilities, {self.mode}",
                "rule": self.rule.as_dict(), "agreement": agreement}

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
                value, cut = local_extract.extract(self.llm, dict(request.inputs), max_tokens=decoding.max_tokens,
                                     seed=decoding.seed, usage=usage)
                return Reply(json.dumps(value), usage.prompt_tokens, usage.output_tokens, usage.seconds, truncated=cut)
            text, cut = self.llm.generate_json(messages, schema, max_tokens=decoding.max_tokens, seed=decoding.seed,
                                               usage=usage)
        return Reply(text, usage.prompt_tokens, usage.output_tokens, usage.seconds, truncated=cut)

    def _verdict_probs(self, parts: dict, usage) -> list[dict]:
        """One row per (claim, passage): P(supported), P(contradicted), P(unmentioned) from the
        three-way question and P(yes) from the yes/no question."""
        claims = parts["claims"]
        texts = [t for _, t in claims]
        passages = parts["passages"]
        if self.mode == "joined":
            passages = [("+".join(pid for pid, _ in passages), "\n\n".join(text for _, text in passages))]
        # One question over every passage, then the other: consecutive prompts then share the
        # system prompt as well as the passage, and the KV cache keeps both.
        three = [self.llm.ask(local_llm.THREE_WAY, text, texts, usage) for _, text in passages]
        yes = [self.llm.ask(local_llm.YES_NO, text, texts, usage) for _, text in passages]
        return [{"claim": cid, "passage": pid, **{k: round(v, 6) for k, v in p.items()}, "yes": round(y["yes"], 6)}
                for (pid, _), ps, ys in zip(passages, three, yes) for (cid, _), p, y in zip(claims, ps, ys)]

    def rescore(self, request: Any, value: Any, logprobs: list | None) -> Any:
        """Re-decide stored verdicts with the current rule (no call)."""
        if request.prompt.id != VERIFY or not logprobs or request.parts is None:
            return value
        return self.rule.verdicts(logprobs, [cid for cid, _ in request.parts["claims"]])
