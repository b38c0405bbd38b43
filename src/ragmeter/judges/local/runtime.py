"""llama.cpp in-process, from a prebuilt wheel: the few calls the local judge makes.

The runtime is ``cyllama==0.2.18`` (MIT; manylinux wheels for CPython 3.10-3.14 on x86-64, llama.cpp
b9190 built for AVX2/FMA/F16C, no AVX-512 or AMX code, no compiler needed to install). Its Cython
classes expose llama.cpp's C API one to one; ragmeter uses:

- ``LlamaModel`` / ``LlamaContext`` / ``LlamaVocab``: load (with ``use_extra_bufts``, ``n_seq_max``
  and a unified KV cache), tokenize, detokenize;
- ``LlamaBatch`` + ``LlamaContext.decode``: tokens with positions, sequence ids and a logits flag,
  so the claims after one shared passage prefix are sequences of one batch
  (``memory_seq_cp`` / ``memory_seq_rm`` copy and drop the prefix's cells);
- ``get_logits_ith``: the next-token logits after a prompt (cyllama 0.2.18 reads ``model.n_vocab``
  there, which its ``LlamaModel`` lacks: ``_Model`` adds it);
- ``LlamaSampler`` with ``add_grammar`` + ``add_greedy`` and ``json_schema_to_grammar``: greedy
  JSON that always parses.

The wheel's kernels need AVX2, FMA and F16C: on an x86-64 CPU without them the extension would
die with SIGILL at the first decode, so ``require_cpu`` reads ``/proc/cpuinfo`` first and says
so before anything is imported. The chat template is rendered with jinja2 as Hugging Face does
(``ImmutableSandboxedEnvironment``, ``trim_blocks``, ``lstrip_blocks``).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.local import grammar_check

RUNTIME = "cyllama"
RUNTIME_PIN = "cyllama==0.2.18"
INSTALL_HINT = "pip install 'ragmeter[local]'"
NEEDED_FLAGS = ("avx2", "fma", "f16c")  # what the wheel's ggml CPU kernels execute unconditionally


class CpuUnsupported(JudgeUnavailableError):
    """The prebuilt llama.cpp kernels need instructions this CPU lacks."""


def cpu_flags(path: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU feature flags the kernel reports (Linux); empty where they cannot be read."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def require_cpu(flags: frozenset[str] | None = None, machine: str | None = None) -> None:
    """Raise ``CpuUnsupported`` on an x86-64 CPU that lacks AVX2, FMA or F16C (read from
    /proc/cpuinfo before the extension is imported: it would die with SIGILL, not raise)."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return
    flags = cpu_flags() if flags is None else flags
    if not flags:  # not Linux, or /proc unreadable: nothing to go by
        return
    missing = [f for f in NEEDED_FLAGS if f not in flags]
    if missing:
        raise CpuUnsupported(
            f"the local judge cannot run on this CPU: its llama.cpp kernels ({RUNTIME_PIN}, prebuilt) need "
            f"{', '.join(f.upper() for f in NEEDED_FLAGS)}, and /proc/cpuinfo lists no {', '.join(missing).upper()}. "
            f"Nothing was loaded. Use an API judge (--judge openai:<model> or anthropic:<model>), or run "
            f"ragmeter on a machine with AVX2 (x86-64 CPUs since about 2015).")


def runtime_version() -> str:
    try:
        return f"{RUNTIME} {version(RUNTIME)}"
    except PackageNotFoundError:
        return "not installed"


def _cy() -> Any:
    require_cpu()
    # The wheel's llama.cpp runs its threads under OpenMP (a bundled libgomp, which reads this when
    # the extension loads): by default a thread waiting at one of the many barriers of a decode
    # spins, and on cores shared with other work it spins while the thread it waits for is not
    # scheduled. Passive waiting measured 3.6x less CPU for single-token decodes with 2 threads at
    # load 5 to 6 (2 cores), and faster wall time too. A value the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import cyllama.llama.llama_cpp as cy
    except ImportError:
        raise JudgeUnavailableError(f"the local judge needs {RUNTIME_PIN}: {INSTALL_HINT}") from None
    return cy


def available() -> bool:
    """The runtime is installed (nothing imported)."""
    from importlib.util import find_spec

    return find_spec(RUNTIME) is not None


class Runtime:
    """One model and one context. Sequence 0 holds the last evaluated prompt (``tokens``), whose
    cells a later prompt with the same prefix reuses; sequences 1..``n_scratch`` are scratch, one
    per claim of a batch; the last ``slots`` sequences keep recent prompt prefixes (the system
    prompts of the judge's questions), so that a prompt starting with one of them evaluates only
    the rest even after other prompts ran in between. With a unified KV cache a copied prefix
    shares its cells (``memory_seq_cp`` only tags them), so a slot costs no memory per copy."""

    def __init__(self, path: Path, *, n_ctx: int, threads: int, n_seq_max: int = 1, extra_bufts: bool = True,
                 n_batch: int = 512, slots: int = 4) -> None:
        cy = _cy()
        self.cy = cy
        cy.disable_logging()
        cy.llama_backend_init()

        class _Model(cy.LlamaModel):  # type: ignore[name-defined]
            @property
            def n_vocab(self) -> int:  # read by LlamaContext.get_logits_ith in cyllama 0.2.18
                return int(self.get_vocab().n_vocab)

        mp = cy.LlamaModelParams()
        mp.use_extra_bufts = extra_bufts
        try:
            self.model = _Model(str(path), mp)
        except (ValueError, RuntimeError, OSError) as exc:
            raise JudgeUnavailableError(f"llama.cpp could not load {path}: {exc}") from None
        self.n_scratch = max(0, n_seq_max - 1)
        self.slot_ids = list(range(self.n_scratch + 1, self.n_scratch + 1 + max(0, slots)))
        cp = cy.LlamaContextParams()
        cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, n_batch, n_batch
        cp.n_seq_max = 1 + self.n_scratch + len(self.slot_ids)
        cp.kv_unified = True  # the sequences of one batch share their prefix's cells
        cp.n_threads = cp.n_threads_batch = threads
        try:
            self.ctx = cy.LlamaContext(self.model, cp)
        except (ValueError, RuntimeError, MemoryError) as exc:
            raise JudgeUnavailableError(f"llama.cpp could not make a context for {path}: {exc}") from None
        self.vocab = self.model.get_vocab()
        self.n_vocab = int(self.vocab.n_vocab)
        self.n_ctx, self.n_batch = n_ctx, n_batch
        self.tokens: list[int] = []  # what sequence 0 holds
        self.slots: dict[int, list[int]] = {}  # slot sequence -> the prefix it holds, least recently used first
        self.prompt_evaluated = 0  # prompt tokens the last ``generate`` evaluated (the rest were cached)
        self.picks = [0, 0]  # tokens the last ``generate`` chose by the fast path, by the grammar sampler
        self.metadata: dict = dict(self.model.metadata())

    # ---- text ------------------------------------------------------------------------------

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        return list(self.vocab.tokenize(text, False, special))

    def piece(self, token: int) -> bytes:
        p = self.vocab.token_to_piece(token, 0, False)
        return p if isinstance(p, bytes) else p.encode("utf-8", "surrogateescape")

    def token_text(self, token: int) -> str:
        p = self.vocab.token_to_piece(token, 0, True)
        return p.decode("utf-8", "ignore") if isinstance(p, bytes) else p

    def set_threads(self, n: int) -> None:
        self.ctx.set_n_threads(n, n)

    def reset(self) -> None:
        """Drop every cached cell (after a failed decode)."""
        self.ctx.kv_cache_clear()
        self.tokens, self.slots = [], {}

    # ---- evaluation ------------------------------------------------------------------------

    def _batch(self, n: int) -> Any:
        return self.cy.LlamaBatch(n_tokens=max(1, n), embd=0, n_seq_max=1)

    def _decode(self, batch: Any) -> None:
        """Decode ``batch``; where the cache has no room for it, the prefixes kept in slots give
        their cells up and it is tried once more (llama.cpp finds room for the whole batch before
        it places any of it, so nothing is decoded twice). A small context window fills with
        kept prefixes after a few prompts; the prompt, not the cache, decides whether one fits."""
        try:
            self.ctx.decode(batch)
            return
        except (ValueError, RuntimeError) as exc:
            error = exc
        if self.slots:
            self._drop_slots()
            try:
                self.ctx.decode(batch)
                return
            except (ValueError, RuntimeError) as exc:
                error = exc
        raise RuntimeError(f"llama.cpp could not decode a batch: {error}") from None

    def _drop_slots(self) -> None:
        for slot in self.slots:
            self.ctx.memory_seq_rm(slot, -1, -1)
        self.slots = {}

    @staticmethod
    def _common(a: Sequence[int], b: Sequence[int], limit: int) -> int:
        n = 0
        limit = min(limit, len(a), len(b))
        while n < limit and a[n] == b[n]:
            n += 1
        return n

    def eval_prefix(self, tokens: Sequence[int], *, keep: int = 0) -> int:
        """Make sequence 0 hold ``tokens``, keeping the cells of the longest prefix it or a slot
        already holds (at least the last token is evaluated, so its logits are output 0).
        ``keep`` > 0: remember ``tokens[:keep]`` in a slot for later prompts. Returns the number
        of tokens evaluated."""
        limit = len(tokens) - 1
        same = self._common(self.tokens, tokens, limit)
        best = max(self.slots, key=lambda s: self._common(self.slots[s], tokens, limit), default=None)
        if best is not None and self._common(self.slots[best], tokens, limit) > same:
            same = self._common(self.slots[best], tokens, limit)
            self.ctx.memory_seq_rm(0, -1, -1)
            self.ctx.memory_seq_cp(best, 0, 0, same)
            self.slots[best] = self.slots.pop(best)  # most recently used last
        else:
            self.ctx.memory_seq_rm(0, same, -1)
        self.tokens = list(tokens[:same])
        rest = list(tokens[same:])
        for start in range(0, len(rest), self.n_batch):
            chunk = rest[start:start + self.n_batch]
            batch = self._batch(len(chunk))
            last = start + len(chunk) == len(rest)
            for j, token in enumerate(chunk):
                batch.add(token, same + start + j, [0], last and j == len(chunk) - 1)
            self._decode(batch)
        self.tokens = list(tokens)
        if keep >= 16 and self.slot_ids:
            self._remember(list(tokens[:keep]))
        return len(rest)

    def _remember(self, prefix: list[int]) -> None:
        if any(held == prefix for held in self.slots.values()):
            return
        free = [s for s in self.slot_ids if s not in self.slots]
        slot = free[0] if free else next(iter(self.slots))  # else the least recently used
        self.slots.pop(slot, None)
        self.ctx.memory_seq_rm(slot, -1, -1)
        self.ctx.memory_seq_cp(0, slot, 0, len(prefix))
        self.slots[slot] = prefix

    def last_logits(self) -> list[float]:
        return self.ctx.get_logits_ith(-1)

    def decode_suffixes(self, n_prefix: int, suffixes: Sequence[Sequence[int]]) -> list[list[float]]:
        """Each suffix as its own sequence (1, 2, ...) after sequence 0's first ``n_prefix`` cells,
        all in one batch; the logits after each suffix's last token."""
        if len(suffixes) > self.n_scratch:
            raise ValueError(f"{len(suffixes)} suffixes for {self.n_scratch} scratch sequences")
        batch = self._batch(sum(map(len, suffixes)))
        last, k = [], 0
        try:
            for seq, suffix in enumerate(suffixes, start=1):
                self.ctx.memory_seq_cp(0, seq, 0, n_prefix)
                for j, token in enumerate(suffix):
                    batch.add(token, n_prefix + j, [seq], j == len(suffix) - 1)
                    k += 1
                last.append(k - 1)
            self._decode(batch)
            return [self.ctx.get_logits_ith(i) for i in last]
        finally:
            for seq in range(1, len(suffixes) + 1):
                self.ctx.memory_seq_rm(seq, -1, -1)

    def generate(self, prompt: Sequence[int], grammar: str, *, max_tokens: int, keep: int = 0,
                 on_token: Callable[[int], None] | None = None, n_draft: int = 4) -> tuple[list[int], bool]:
        """Greedy tokens after ``prompt`` under a GBNF grammar, until an end-of-generation token
        (not returned) or ``max_tokens`` (then cut off = True). ``on_token(n)``: after each one.

        Drafts copied from the prompt (prompt-lookup decoding): after each token, the tokens that
        followed the last occurrence of the newest 3 (else 2) generated tokens in the prompt are
        decoded in the same batch, and kept for as long as the greedy choice under the grammar
        agrees with them. The output is exactly what one token at a time gives (each token is
        still the grammar-constrained argmax after the tokens before it); claims copy the answer's
        words, so several tokens often cost one decode.

        Where ``grammar_check`` has a pattern for the grammar, each token is first the
        unconstrained argmax (0.5 ms), taken when the pattern allows it, and the grammar sampler
        (85 ms: it scores the whole vocabulary) is asked only when it does not: the same tokens.
        ``picks`` counts (fast, grammar) choices of the last call."""
        cy = self.cy
        self.prompt_evaluated = self.eval_prefix(prompt, keep=keep)
        params = cy.LlamaSamplerChainParams()
        params.no_perf = True
        sampler = cy.LlamaSampler(params)
        sampler.add_grammar(self.vocab, grammar, "root")
        sampler.add_greedy()
        check = grammar_check.checker(grammar)
        fast = None
        if check is not None:
            fast = cy.LlamaSampler(params)
            fast.add_greedy()
        self.picks = [0, 0]

        def pick(index: int) -> int:
            if fast is not None and check is not None:
                t = int(fast.sample(self.ctx, index))
                if self.vocab.is_eog(t) and check.complete():
                    self.picks[0] += 1
                    return t
                if not self.vocab.is_eog(t) and check.allows(self.piece(t)):
                    sampler.accept(t)  # the grammar allows it: advance it as its own pick would
                    check.take(self.piece(t))
                    self.picks[0] += 1
                    return t
            self.picks[1] += 1
            t = int(sampler.sample(self.ctx, index))
            if check is not None and not self.vocab.is_eog(t):
                check.take(self.piece(t))
            return t

        source = list(prompt)
        out: list[int] = []
        index = -1  # the output whose logits give the next token
        pending: int | None = None  # a token chosen but not yet decoded
        while True:
            token = pending if pending is not None else pick(index)
            pending = None
            if self.vocab.is_eog(token):
                return out, False
            out.append(token)
            if on_token is not None:
                on_token(len(out))
            room = min(n_draft, max_tokens - len(out), self.n_ctx - len(self.tokens) - 2)
            if len(out) >= max_tokens or room < 0:
                return out, True
            draft = _lookup(source, out, room) if room > 0 else []
            base = len(self.tokens)
            batch = self._batch(1 + len(draft))
            for j, t in enumerate([token, *draft]):
                batch.add(t, base + j, [0], True)
            self._decode(batch)
            self.tokens.append(token)
            index = len(draft)
            for j, d in enumerate(draft):
                chosen = pick(j)
                if chosen != d or self.vocab.is_eog(chosen):
                    self.ctx.memory_seq_rm(0, base + 1 + j, -1)
                    pending = chosen
                    break
                self.tokens.append(d)
                out.append(d)
                if on_token is not None:
                    on_token(len(out))
                if len(out) >= max_tokens:
                    self.ctx.memory_seq_rm(0, base + 2 + j, -1)
                    return out, True


def _lookup(source: list[int], out: list[int], n: int) -> list[int]:
    """Up to ``n`` tokens that followed the last occurrence in ``source`` of the newest 3 (else 2)
    tokens of ``out``."""
    for size in (3, 2):
        if len(out) < size:
            continue
        tail = out[-size:]
        for i in range(len(source) - size - 1, -1, -1):
            if source[i:i + size] == tail:
                return source[i + size:i + size + n]
    return []


def chat_formatter(template: str, eos_token: str) -> Callable[[list[dict]], str]:
    """The GGUF's chat template rendered as Hugging Face's ``apply_chat_template`` does, with the
    generation prompt added."""
    try:
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise JudgeUnavailableError(f"the local judge needs jinja2: {INSTALL_HINT}") from None

    def raise_exception(message: str) -> None:
        raise JudgeUnavailableError(f"the model's chat template refused the messages: {message}")

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    compiled = env.from_string(template)

    def render(messages: list[dict]) -> str:
        return compiled.render(messages=messages, eos_token=eos_token, bos_token="", add_generation_prompt=True,
                               raise_exception=raise_exception)

    return render


def json_grammar(schema: dict) -> str:
    """GBNF for a JSON Schema (llama.cpp's converter, as cyllama ships it)."""
    return str(_cy().json_schema_to_grammar(schema))
