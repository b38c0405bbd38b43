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

import platform
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ragmeter.core.errors import JudgeUnavailableError

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
    """One model and one context: sequence 0 holds the last evaluated prompt (``tokens``), whose
    cells a later prompt with the same prefix reuses; sequences 1.. are scratch, one per claim."""

    def __init__(self, path: Path, *, n_ctx: int, threads: int, n_seq_max: int = 1, extra_bufts: bool = True,
                 n_batch: int = 512) -> None:
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
        cp = cy.LlamaContextParams()
        cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, n_batch, n_batch
        cp.n_seq_max = max(1, n_seq_max)
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

    # ---- evaluation ------------------------------------------------------------------------

    def _batch(self, n: int) -> Any:
        return self.cy.LlamaBatch(n_tokens=max(1, n), embd=0, n_seq_max=1)

    def _decode(self, batch: Any) -> None:
        try:
            self.ctx.decode(batch)
        except (ValueError, RuntimeError) as exc:
            raise RuntimeError(f"llama.cpp could not decode a batch: {exc}") from None

    def eval_prefix(self, tokens: Sequence[int]) -> int:
        """Make sequence 0 hold ``tokens``, keeping the cells of the longest prefix it already
        holds (at least the last token is evaluated, so its logits are output 0). Returns the
        number of tokens evaluated."""
        same, limit = 0, min(len(self.tokens), len(tokens) - 1)
        while same < limit and self.tokens[same] == tokens[same]:
            same += 1
        self.ctx.memory_seq_rm(0, same, -1)
        self.tokens = self.tokens[:same]
        rest = list(tokens[same:])
        for start in range(0, len(rest), self.n_batch):
            chunk = rest[start:start + self.n_batch]
            batch = self._batch(len(chunk))
            last = start + len(chunk) == len(rest)
            for j, token in enumerate(chunk):
                batch.add(token, same + start + j, [0], last and j == len(chunk) - 1)
            self._decode(batch)
        self.tokens = list(tokens)
        return len(rest)

    def last_logits(self) -> list[float]:
        return self.ctx.get_logits_ith(-1)

    def decode_suffixes(self, n_prefix: int, suffixes: Sequence[Sequence[int]]) -> list[list[float]]:
        """Each suffix as its own sequence (1, 2, ...) after sequence 0's first ``n_prefix`` cells,
        all in one batch; the logits after each suffix's last token."""
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

    def generate(self, prompt: Sequence[int], grammar: str, *, max_tokens: int,
                 on_token: Callable[[int], None] | None = None) -> tuple[list[int], bool]:
        """Greedy tokens after ``prompt`` under a GBNF grammar, until an end-of-generation token
        (not returned) or ``max_tokens`` (then cut off = True). ``on_token(n)``: after each one."""
        cy = self.cy
        self.eval_prefix(prompt)
        params = cy.LlamaSamplerChainParams()
        params.no_perf = True
        sampler = cy.LlamaSampler(params)
        sampler.add_grammar(self.vocab, grammar, "root")
        sampler.add_greedy()
        out: list[int] = []
        while len(out) < max_tokens:
            if len(self.tokens) >= self.n_ctx:
                return out, True
            token = int(sampler.sample(self.ctx, -1))
            if self.vocab.is_eog(token):
                return out, False
            out.append(token)
            batch = self._batch(1)
            batch.add(token, len(self.tokens), [0], True)
            self._decode(batch)
            self.tokens.append(token)
            if on_token is not None:
                on_token(len(out))
        return out, True


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
