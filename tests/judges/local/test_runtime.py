"""The prebuilt llama.cpp runtime (``judges/local/runtime.py``): the CPU check that stands before
the extension is imported, and (with the bundled model, slow) the calls the judge makes."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.judges.local import runtime as local_runtime
from ragmeter.judges.local.runtime import CpuUnsupported, require_cpu

HASWELL = frozenset({"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"})


def test_a_cpu_without_avx2_is_refused_with_what_is_missing():
    with pytest.raises(CpuUnsupported) as info:
        require_cpu(frozenset({"sse4_2", "avx", "f16c"}), "x86_64")  # Sandy Bridge: AVX, no AVX2/FMA
    text = str(info.value)
    assert "lists no AVX2, FMA" in text and "cyllama==0.2.18" in text and "--judge openai:<model>" in text
    require_cpu(HASWELL, "x86_64")  # no error
    require_cpu(frozenset({"neon"}), "aarch64")  # not x86: the wheel decides, not these flags
    require_cpu(frozenset(), "x86_64")  # flags unreadable (not Linux): nothing to go by


def test_the_flags_are_read_from_proc_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma f16c\n\nprocessor\t: 1\n")
    assert local_runtime.cpu_flags(cpuinfo) == {"fpu", "sse4_2", "avx", "avx2", "fma", "f16c"}
    assert local_runtime.cpu_flags(tmp_path / "missing") == frozenset()


def test_the_refusal_comes_before_the_extension_is_imported(monkeypatch):
    """On such a CPU the Cython module is never imported (importing and running it is what dies)."""
    import builtins

    monkeypatch.setattr(local_runtime, "cpu_flags", lambda path=None: frozenset({"sse4_2"}))
    monkeypatch.setattr(local_runtime.platform, "machine", lambda: "x86_64")
    real_import = builtins.__import__

    def guarded(name, *args, **kwargs):
        assert not name.startswith("cyllama"), "the extension was imported"
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)
    with pytest.raises(CpuUnsupported):
        local_runtime.Runtime(local_runtime.Path("unused.gguf"), n_ctx=256, threads=1)


def test_openmp_threads_wait_passively_unless_the_user_chose(monkeypatch):
    """Set before the extension (and its bundled libgomp) loads; a value already set is kept."""
    from tests.installed import need

    need("cyllama", "the local judge needs: pip install 'ragmeter[local]'")
    monkeypatch.setattr(local_runtime, "require_cpu", lambda: None)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    local_runtime._cy()
    assert local_runtime.os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    local_runtime._cy()
    assert local_runtime.os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


# ---- with the bundled model (the ``llm`` fixture: conftest.py) ----------------------------------

@pytest.mark.slow
def test_drafts_copied_from_the_prompt_change_no_token(llm):
    """Prompt-lookup drafts: the same tokens as one greedy token at a time, in fewer decodes."""
    from ragmeter.judges.local.extract import CLAIM_LIST, SPLIT_SYSTEM, SPLIT_USER
    from ragmeter.judges.local.runtime import json_grammar

    text = "The R2 carries a 24-month warranty, so a failure at 14 months is covered. Shipping is free."
    prompt = llm._prompt_tokens([{"role": "system", "content": SPLIT_SYSTEM},
                                 {"role": "user", "content": SPLIT_USER.format(text=text)}])
    grammar = json_grammar(CLAIM_LIST)
    decodes: list[int] = []
    real = llm.llm._decode

    def counted(batch):
        decodes.append(batch.n_tokens)
        real(batch)

    llm.llm._decode = counted
    try:
        runs = {}
        for n_draft in (0, 4):
            llm.llm.reset()
            decodes.clear()
            runs[n_draft] = (llm.llm.generate(prompt, grammar, max_tokens=120, n_draft=n_draft), len(decodes))
    finally:
        llm.llm._decode = real
    (plain, cut), plain_decodes = runs[0]
    (drafted, _), drafted_decodes = runs[4]
    assert drafted == plain and not cut
    assert drafted_decodes < plain_decodes


@pytest.mark.slow
def test_a_system_prompt_is_kept_across_other_prompts(llm):
    """The slot cache: a prompt whose system message was evaluated before, with other prompts in
    between, evaluates only its user part, and gives the same logits as a fresh evaluation."""
    runtime = llm.llm
    first = [{"role": "system", "content": "You check claims against a context, carefully and briefly."},
             {"role": "user", "content": "CONTEXT: The shop opens at 9.\n\nCLAIM: The shop opens at 10."}]
    other = [{"role": "system", "content": "You split texts into claims for fact checking, one fact each."},
             {"role": "user", "content": "TEXT: The museum is free."}]
    tokens, others = llm._prompt_tokens(first), llm._prompt_tokens(other)
    runtime.reset()
    fresh = np.asarray(runtime.ctx.get_logits_ith(-1)) if runtime.eval_prefix(tokens) else None
    keep = llm._system_length(first, tokens)
    assert 16 <= keep < len(tokens)
    runtime.reset()
    runtime.eval_prefix(tokens, keep=keep)
    runtime.eval_prefix(others, keep=llm._system_length(other, others))
    again = runtime.eval_prefix(tokens, keep=keep)
    assert again == len(tokens) - keep
    assert np.abs(np.asarray(runtime.ctx.get_logits_ith(-1)) - fresh).max() < 1e-3


@pytest.mark.slow
def test_the_grammar_fast_path_changes_no_token(llm, monkeypatch):
    """The unconstrained argmax taken where ``grammar_check`` allows it: the same tokens as the
    grammar sampler alone, which is now asked for a few tokens only."""
    from ragmeter.judges.local import grammar_check
    from ragmeter.judges.local.extract import CLAIM_LIST, SPLIT_SYSTEM, SPLIT_USER
    from ragmeter.judges.local.runtime import json_grammar

    text = "The R2 carries a 24-month warranty, so a failure at 14 months is covered. Shipping is free."
    prompt = llm._prompt_tokens([{"role": "system", "content": SPLIT_SYSTEM},
                                 {"role": "user", "content": SPLIT_USER.format(text=text)}])
    grammar = json_grammar(CLAIM_LIST)
    llm.llm.reset()
    fast = llm.llm.generate(prompt, grammar, max_tokens=120)
    fast_picks = list(llm.llm.picks)
    monkeypatch.setattr(grammar_check, "PATTERNS", {})
    llm.llm.reset()
    slow = llm.llm.generate(prompt, grammar, max_tokens=120)
    assert fast == slow and not fast[1]
    assert llm.llm.picks[0] == 0 and fast_picks[1] < fast_picks[0] / 4
