"""A GGUF model run in-process with llama.cpp (``pip install 'ragmeter[local]'``; the runtime is
``runtime``: a prebuilt wheel, no compiler).

Two ways of asking it:

- ``ask(question, passage, claims)``: typed next-token decisions. The prompt ends where the
  model would write one word (supported / contradicted / unmentioned, or yes / no); the
  answer is the softmax mass on each word's first tokens (both cases, with and without a
  leading space), renormalised over the answers. Words, not letters: letters gave
  near-uniform probabilities on the 1.5B model. The passage comes first and the claim last,
  so the passage's tokens are evaluated once and their KV cache reused for every claim.
- ``generate_json(messages, schema)``: greedy generation constrained by a grammar built
  from the JSON Schema, so the reply always parses. ``on_tokens`` (a callable, or None) is
  called with the number of tokens generated so far after each one: a progress heartbeat.

One model instance is not thread-safe: the backend serialises calls.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.local.runtime import Runtime, chat_formatter, json_grammar
from ragmeter.judges.transport import RequestTooLong

# Load settings (measured in bench/local_judge_bench.py; README "Offline"):
EXTRA_BUFTS = True  # llama.cpp's extra weight buffers (REPACK of the Q4_K weights for the AVX2 kernels)
PARALLEL = 8  # claims evaluated as sequences of one batch after their shared passage prefix

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

# The same two questions with the instruction moved into the system prompt, so that only the claim
# and the chat template's closing tokens follow the cached (system, passage) prefix (~20 tokens per
# claim instead of ~45 and ~30).
THREE_WAY_SHORT = TypedQuestion(
    "three_way_short", THREE_WAY.system + " Reply with one word: supported, contradicted or unmentioned.",
    "CONTEXT:\n{context}\n\nCLAIM: {claim}", THREE_WAY.words)
YES_NO_SHORT = TypedQuestion(
    "yes_no_short", YES_NO.system + " Reply yes if the claim is true according to the context, else no.",
    "CONTEXT:\n{context}\n\nCLAIM: {claim}", YES_NO_WORDS)

# The three-way question alone, with worked examples in the system prompt. The system prompt is
# the start of every verification prompt, so its KV cache is evaluated once and then reused for
# every passage and claim: the examples cost nothing per claim. The examples are made up for this
# prompt (a library, two offices) and share nothing with the agreement set.
FEW_SHOT_EXAMPLES = (
    "Examples:\n"
    "CONTEXT: The Riverside library lends up to 8 books per member for 3 weeks. A loan can be renewed online "
    "twice, for 3 weeks each time. Laptops cannot be borrowed.\n"
    "CLAIM: By renewing online, a member can keep a book for 9 weeks. -> supported\n"
    "CLAIM: Members may borrow up to 10 books. -> contradicted\n"
    "CLAIM: Laptops can be borrowed for one week. -> contradicted\n"
    "CLAIM: A late book costs 20 cents a day. -> unmentioned\n"
    "CLAIM: The library opens at 9:00 on Saturdays. -> unmentioned\n"
    "CONTEXT: Ana manages the Lisbon office. Tom manages the Porto office, which opened in 2019.\n"
    "CLAIM: Tom manages the Lisbon office. -> contradicted\n"
    "CLAIM: The Porto office opened before 2020. -> supported\n"
    "CLAIM: Lisbon is the capital of Portugal. -> unmentioned")
THREE_WAY_FEW_SHOT = TypedQuestion(
    "three_way_few_shot", THREE_WAY.system + " A claim is contradicted when any part of it disagrees with the "
    "context, and unmentioned when the context is silent on it, even if it is true in the world. Reply with one "
    "word: supported, contradicted or unmentioned.\n\n" + FEW_SHOT_EXAMPLES,
    "CONTEXT:\n{context}\n\nCLAIM: {claim}", THREE_WAY.words)

# name -> questions asked per (claim, passage): the three-way one, and the yes/no one where a set has it
QUESTION_SETS: dict[str, tuple[TypedQuestion, ...]] = {
    "long": (THREE_WAY, YES_NO), "short": (THREE_WAY_SHORT, YES_NO_SHORT), "short3": (THREE_WAY_SHORT,),
    "long3": (THREE_WAY,), "few_shot3": (THREE_WAY_FEW_SHOT,)}


class PromptTooLong(RequestTooLong):
    """A prompt longer than the model's context window: this item fails, the run goes on."""


@dataclass
class Usage:
    prompt_tokens: int = 0  # tokens actually evaluated (a reused prefix is not counted)
    output_tokens: int = 0
    seconds: float = 0.0


def open_runtime(path: Path, *, n_ctx: int, threads: int | None = None, extra_bufts: bool = EXTRA_BUFTS,
                 n_seq_max: int = 1) -> Runtime:
    """The model loaded with ragmeter's load settings (also used by the start-up probe)."""
    return Runtime(Path(path), n_ctx=n_ctx, threads=threads or default_threads(), n_seq_max=n_seq_max,
                   extra_bufts=extra_bufts)


def default_threads() -> int:
    return os.cpu_count() or 1


def set_threads(llm: LocalLLM, threads: int | None) -> None:
    """Change the threads of a loaded model (``None``: the default)."""
    llm.llm.set_threads(threads or default_threads())


class LocalLLM:
    def __init__(self, path: Path, *, n_ctx: int = 8192, threads: int | None = None, extra_bufts: bool = EXTRA_BUFTS,
                 parallel: int = PARALLEL) -> None:
        self.path = Path(path)
        self.parallel = max(1, parallel)
        self.llm = open_runtime(self.path, n_ctx=n_ctx, threads=threads, extra_bufts=extra_bufts,
                                n_seq_max=self.parallel + 1)
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise JudgeUnavailableError(f"{self.path.name} has no chat template: the local judge needs an "
                                        f"instruction-tuned (chat) GGUF")
        eos = self.llm.token_text(self.llm.vocab.token_eos())
        self.formatter = chat_formatter(template, eos)
        self.first_tokens: dict[str, dict[str, np.ndarray]] = {}
        self.grammars: dict[str, str] = {}
        self.system_lengths: dict[str, int] = {}
        self.n_ctx = n_ctx
        self.on_tokens: Callable[[int], None] | None = None  # tokens generated so far, after each one

    def _first_tokens(self, question: TypedQuestion) -> dict[str, np.ndarray]:
        if question.name in self.first_tokens:
            return self.first_tokens[question.name]
        out = {}
        for label, words in question.words.items():
            first = {self.llm.tokenize(v)[0] for w in words for v in (w, " " + w)}
            out[label] = np.array(sorted(first))
        seen: set = set()
        for ids in out.values():
            if seen & set(ids.tolist()):
                raise JudgeUnavailableError(f"{self.path.name}: the verdict words share first tokens; "
                                            f"this model cannot give typed verdicts")
            seen |= set(ids.tolist())
        self.first_tokens[question.name] = out
        return out

    def _prompt_tokens(self, messages: list[dict]) -> list[int]:
        return self.llm.tokenize(self.formatter(messages), special=True)

    def _system_length(self, messages: list[dict], tokens: list[int]) -> int:
        """How many of ``tokens`` are the system message (0 without one): the prefix the runtime
        keeps in a slot, so that the same instructions are evaluated once, not per call."""
        if not messages or messages[0].get("role") != "system":
            return 0
        key = messages[0]["content"]
        if key not in self.system_lengths:
            head = self.llm.tokenize(self.formatter([messages[0]]).rsplit("<|im_start|>assistant", 1)[0], special=True)
            n = 0
            while n < min(len(head), len(tokens)) and head[n] == tokens[n]:
                n += 1
            self.system_lengths[key] = n
        return self.system_lengths[key]

    def _check_fits(self, n: int) -> None:
        if n >= self.n_ctx:
            raise PromptTooLong(f"local judge: a prompt of {n} tokens does not fit the context window of "
                                f"{self.n_ctx}; split long chunks, or use per_chunk mode")

    def _eval_reusing(self, tokens: list[int], usage: Usage, keep: int = 0) -> None:
        """Evaluate ``tokens``, keeping the KV cache of the longest prefix already evaluated."""
        self._check_fits(len(tokens))
        usage.prompt_tokens += self._decoded(lambda: self.llm.eval_prefix(tokens, keep=keep))

    def _decoded(self, call: Callable) -> Any:
        try:
            return call()
        except RuntimeError as exc:  # llama.cpp found no KV slot, or the batch was refused
            self.llm.reset()
            raise PromptTooLong(f"local judge: {exc}") from None

    @staticmethod
    def _softmax(logits: Sequence[float]) -> np.ndarray:
        a = np.asarray(logits, dtype=np.float64)
        p = np.exp(a - a.max())
        return p / p.sum()

    def next_token_dists(self, prompts: list[list[int]], usage: Usage, keep: int = 0) -> list[np.ndarray]:
        """The next-token distribution after each prompt. Prompts that share a prefix (one
        passage, several claims) are evaluated as sequences of one llama.cpp batch after the
        prefix, ``parallel`` at a time; with ``parallel=1``, one after another."""
        if self.parallel == 1 or len(prompts) < 2:
            return [d for t in prompts for d in self.next_token_dists_one(t, usage, keep)]
        shortest = min(len(t) for t in prompts)
        n = 0
        while n < shortest - 1 and all(t[n] == prompts[0][n] for t in prompts):
            n += 1
        if n == 0:
            return [d for t in prompts for d in self.next_token_dists_one(t, usage, keep)]
        self._eval_reusing(prompts[0][:n], usage, min(keep, n))  # the shared prefix, in sequence 0
        out = []
        group: list[list[int]] = []
        for suffix in (t[n:] for t in prompts):
            self._check_fits(n + len(suffix))
            if group and (len(group) == self.parallel
                          or n + sum(map(len, group)) + len(suffix) >= min(self.n_ctx, n + 512)):
                out.extend(self._decode_group(n, group, usage))
                group = []
            group.append(suffix)
        out.extend(self._decode_group(n, group, usage))
        return out

    def next_token_dists_one(self, tokens: list[int], usage: Usage, keep: int = 0) -> list[np.ndarray]:
        self._eval_reusing(tokens, usage, keep)
        return [self._softmax(self.llm.last_logits())]

    def _decode_group(self, n_prefix: int, suffixes: list[list[int]], usage: Usage) -> list[np.ndarray]:
        logits = self._decoded(lambda: self.llm.decode_suffixes(n_prefix, suffixes))
        usage.prompt_tokens += sum(map(len, suffixes))
        return [self._softmax(row) for row in logits]

    def ask(self, question: TypedQuestion, passage: str, claims: Sequence[str],
            usage: Usage | None = None) -> list[dict[str, float]]:
        """For each claim, the probability of each of the question's answers given the passage."""
        usage = usage if usage is not None else Usage()
        start = time.perf_counter()
        first = self._first_tokens(question)
        prompts = [self._prompt_tokens(question.messages(passage, c)) for c in claims]
        keep = self._system_length(question.messages(passage, claims[0]), prompts[0]) if prompts else 0
        dists = self.next_token_dists(prompts, usage, keep)
        out = []
        for p in dists:
            mass = {label: float(p[ids].sum()) for label, ids in first.items()}
            total = sum(mass.values()) or 1.0
            out.append({label: m / total for label, m in mass.items()})
        usage.seconds += time.perf_counter() - start
        return out

    def generate_json(self, messages: list[dict], schema: dict, *, max_tokens: int, seed: int | None,
                      usage: Usage | None = None) -> tuple[str, bool]:
        """Greedy, grammar-constrained JSON. Returns (text, cut off at max_tokens or the window).
        ``seed`` is unused (greedy decoding draws nothing)."""
        usage = usage if usage is not None else Usage()
        start = time.perf_counter()
        key = json.dumps(schema, sort_keys=True)
        grammar = self.grammars.get(key)
        if grammar is None:
            grammar = self.grammars[key] = json_grammar(schema)
        prompt = self._prompt_tokens(messages)
        self._check_fits(len(prompt))
        keep = self._system_length(messages, prompt)
        tokens, cut = self._decoded(lambda: self.llm.generate(prompt, grammar, max_tokens=max_tokens, keep=keep,
                                                              on_token=self.on_tokens))
        usage.prompt_tokens += self.llm.prompt_evaluated
        usage.output_tokens += len(tokens)
        usage.seconds += time.perf_counter() - start
        return b"".join(self.llm.piece(t) for t in tokens).decode("utf-8", "replace"), cut
