"""A GGUF model run in-process with llama.cpp (``pip install 'ragmeter[local]'``).

Two ways of asking it:

- ``ask(question, passage, claims)``: typed next-token decisions. The prompt ends where the
  model would write one word (supported / contradicted / unmentioned, or yes / no); the
  answer is the softmax mass on each word's first tokens (both cases, with and without a
  leading space), renormalised over the answers. Words, not letters: letters gave
  near-uniform probabilities on the 1.5B model. The passage comes first and the claim last,
  so the passage's tokens are evaluated once and their KV cache reused for every claim.
- ``generate_json(messages, schema)``: greedy generation constrained by a grammar built
  from the JSON Schema, so the reply always parses.

One model instance is not thread-safe: the backend serialises calls.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.transport import JudgeTransportError


@dataclass(frozen=True)
class TypedQuestion:
    """A question answered by the next token: the probability mass on each answer word's first
    tokens, renormalised over the answers. The context comes first and the claim last, so the
    KV cache of (system, context) is reused across claims."""

    name: str
    system: str
    template: str  # with {context} and {claim}
    words: dict  # answer -> spellings whose first token counts for it

    def messages(self, passage: str, claim: str) -> list[dict]:
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.template.format(context=passage, claim=claim)}]


THREE_WAY = TypedQuestion(
    "three_way",
    "You check a claim against a context. Answer supported if the context states the claim or it follows from the "
    "context (simple arithmetic included), contradicted if the context states something different (another number, "
    "date, name or the opposite), and unmentioned if the context does not say.",
    "CONTEXT:\n{context}\n\nCLAIM: {claim}\n\nDoes the context support the claim, contradict it, or not mention it? "
    "Answer with one word: supported, contradicted or unmentioned.",
    {"supported": ("supported", "Supported", "support", "Support", "supports", "Supports"),
     "contradicted": ("contradicted", "Contradicted", "contradicts", "Contradicts", "contradict", "Contradict"),
     "unmentioned": ("unmentioned", "Unmentioned", "not", "Not")})

YES_NO_WORDS = {"yes": ("yes", "Yes", "YES"), "no": ("no", "No", "NO")}

YES_NO = TypedQuestion(
    "yes_no",
    "You check a claim against a context. The claim is true if the context states it or it follows from the context "
    "(simple arithmetic included).",
    "CONTEXT:\n{context}\n\nCLAIM: {claim}\n\nIs the claim true according to the context? Answer yes or no.",
    YES_NO_WORDS)

QUESTIONS = (THREE_WAY, YES_NO)


class PromptTooLong(JudgeTransportError):
    """A prompt longer than the model's context window: this item fails, the run goes on."""


@dataclass
class Usage:
    prompt_tokens: int = 0  # tokens actually evaluated (a reused prefix is not counted)
    output_tokens: int = 0
    seconds: float = 0.0


class LocalLLM:
    def __init__(self, path: Path, *, n_ctx: int = 8192, threads: int | None = None) -> None:
        try:
            from llama_cpp import Llama, llama_get_logits
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise JudgeUnavailableError("the local judge needs llama-cpp-python: pip install 'ragmeter[local]'") from None
        self.path = Path(path)
        self._logits = llama_get_logits  # the last evaluated token's logits, through llama.cpp's public API
        try:
            self.llm = Llama(model_path=str(self.path), n_ctx=n_ctx, n_threads=threads or os.cpu_count() or 1,
                             n_batch=512, logits_all=False, verbose=False, seed=0)
        except ValueError as exc:
            raise JudgeUnavailableError(f"llama.cpp could not load {self.path}: {exc}") from None
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise JudgeUnavailableError(f"{self.path.name} has no chat template: the local judge needs an "
                                        f"instruction-tuned (chat) GGUF")
        eos = self.llm.detokenize([self.llm.token_eos()]).decode("utf-8", "ignore")
        self.formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token="")
        self.first_tokens = {q.name: self._first_tokens(q) for q in QUESTIONS}
        self.n_ctx = n_ctx

    def _first_tokens(self, question: TypedQuestion) -> dict[str, np.ndarray]:
        out = {}
        for label, words in question.words.items():
            ids = {self.llm.tokenize(v.encode(), add_bos=False)[0] for w in words for v in (w, " " + w)}
            out[label] = np.array(sorted(ids))
        seen: set = set()
        for ids in out.values():
            if seen & set(ids.tolist()):
                raise JudgeUnavailableError(f"{self.path.name}: the verdict words share first tokens; "
                                            f"this model cannot give typed verdicts")
            seen |= set(ids.tolist())
        return out

    def _prompt_tokens(self, messages: list[dict]) -> list[int]:
        text = self.formatter(messages=messages).prompt
        return self.llm.tokenize(text.encode(), add_bos=False, special=True)

    def _eval_reusing(self, tokens: list[int], usage: Usage) -> None:
        """Evaluate ``tokens``, keeping the KV cache of the longest prefix already evaluated."""
        if len(tokens) >= self.n_ctx:
            raise PromptTooLong(f"local judge: a prompt of {len(tokens)} tokens does not fit the context window of "
                                f"{self.n_ctx}; split long chunks, or use per_chunk mode")
        llm = self.llm
        done = llm.input_ids[: llm.n_tokens]
        same = 0
        limit = min(len(done), len(tokens) - 1)  # always evaluate at least the last token
        while same < limit and done[same] == tokens[same]:
            same += 1
        llm.n_tokens = same
        llm.eval(tokens[same:])
        usage.prompt_tokens += len(tokens) - same

    def _next_token_probs(self) -> np.ndarray:
        logits = np.ctypeslib.as_array(self._logits(self.llm.ctx), shape=(self.llm.n_vocab(),)).astype(np.float64)
        p = np.exp(logits - logits.max())
        return p / p.sum()

    def ask(self, question: TypedQuestion, passage: str, claims: Sequence[str],
            usage: Usage | None = None) -> list[dict[str, float]]:
        """For each claim, the probability of each of the question's answers given the passage."""
        usage = usage if usage is not None else Usage()
        start = time.perf_counter()
        out = []
        if question.name not in self.first_tokens:
            self.first_tokens[question.name] = self._first_tokens(question)
        first = self.first_tokens[question.name]
        for claim in claims:
            self._eval_reusing(self._prompt_tokens(question.messages(passage, claim)), usage)
            p = self._next_token_probs()
            mass = {label: float(p[ids].sum()) for label, ids in first.items()}
            total = sum(mass.values()) or 1.0
            out.append({label: m / total for label, m in mass.items()})
        usage.seconds += time.perf_counter() - start
        return out

    def generate_json(self, messages: list[dict], schema: dict, *, max_tokens: int, seed: int | None,
                      usage: Usage | None = None) -> tuple[str, bool]:
        """Greedy, grammar-constrained JSON. Returns (text, cut off at max_tokens)."""
        usage = usage if usage is not None else Usage()
        start = time.perf_counter()
        try:
            reply = self.llm.create_chat_completion(messages=messages, temperature=0.0, max_tokens=max_tokens,
                                                    seed=seed, response_format={"type": "json_object", "schema": schema})
        except ValueError as exc:  # llama-cpp-python: "Requested tokens (...) exceed context window of ..."
            raise PromptTooLong(f"local judge: {exc}") from None
        u = reply.get("usage") or {}
        usage.prompt_tokens += int(u.get("prompt_tokens") or 0)
        usage.output_tokens += int(u.get("completion_tokens") or 0)
        usage.seconds += time.perf_counter() - start
        choice = reply["choices"][0]
        return choice["message"].get("content") or "", choice.get("finish_reason") == "length"
