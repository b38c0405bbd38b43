"""The offline local judge: speed on the bundled sample and cross-validated accuracy, per setting.

    python bench/local_judge_bench.py accuracy [--settings short3+batch+top1] [--pool passage]  # grouped CV
    python bench/local_judge_bench.py prompts                            # addresses / declines / relevance
    python bench/local_judge_bench.py speed [--repeat 3] [--settings before,default]
    python bench/local_judge_bench.py table                              # both, side by side (cached)

accuracy: the typed-question probabilities of every (claim, passage) of the bundled agreement set
(``src/ragmeter/trust/agreement/claims.jsonl``, 216 claims in 24 contexts) are computed once per
question set and cached under ``bench/.data/`` (they are what the ledger stores, so a new rule or
a new preselection costs no model call); then each setting's verdicts are scored by
leave-one-context-out cross-validation (``verdict_rule.cross_validate``): each context judged by
a rule fitted on the 23 others. Printed: accuracy, 95% interval (bootstrap over contexts),
contradicted claims called supported, the confusion matrix, and the (claim, passage) pairs and
yes/no questions each setting asks.

speed: faithfulness + context recall on the warranty sample (q1 is its one answered sample), a
fresh ledger each time so every judgment is a model call, the model loaded once beforehand. The
machine is shared: settings run interleaved, round by round, and the median is reported with
the load average seen. Answered samples/s = 1 / median seconds.

prompts: the other prompt parts the local judge serves, against their own hand labels
(``agreement/addresses.jsonl``, ``declines.jsonl``, ``context_relevance.jsonl``), beside the
majority-class rule. The numbers go into ``judges/local/agreement.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import ragmeter
from ragmeter.judges.local import grammar_check, verdict_rule
from ragmeter.judges.local import llm as local_llm
from ragmeter.judges.local.preselect import preselect
from ragmeter.judges.local.verify import SKIP_MARGIN, VerifySettings
from ragmeter.trust.agreement_set import LABELS, SET_PATH, load_set

ROOT = Path(__file__).resolve().parent.parent
WARRANTY = ROOT / "examples" / "warranty"
DATA = ROOT / "bench" / ".data" / "local_judge"
AGREEMENT = SET_PATH.parent
ACC_PARALLEL = 8
COLLECT_THREADS: int | None = None  # --threads
POOL = "max"  # --pool: how the rule combines passages (verdict_rule.VerdictRule.pool)

# name -> (verification settings, parallel sequences, claims, threads); "before" is the judge as it was
SETTINGS: dict[str, tuple[VerifySettings, int, str, int | None]] = {
    "before": (VerifySettings(questions="long"), 1, "extracted", None),
    "short": (VerifySettings(questions="short"), 1, "extracted", None),
    "short+skip": (VerifySettings(questions="short", skip_second=True), 1, "extracted", None),
    "long3": (VerifySettings(questions="long3"), 1, "extracted", None),
    "few3": (VerifySettings(questions="few_shot3"), 1, "extracted", None),
    "few3+top2": (VerifySettings(questions="few_shot3", top_k=2), 1, "extracted", None),
    "few3+top1": (VerifySettings(questions="few_shot3", top_k=1), 1, "extracted", None),
    "short3": (VerifySettings(questions="short3"), 1, "extracted", None),
    "short3+batch": (VerifySettings(questions="short3"), 8, "extracted", None),
    "short3+batch+top2": (VerifySettings(questions="short3", top_k=2), 8, "extracted", None),
    "short3+batch+top1": (VerifySettings(questions="short3", top_k=1), 8, "extracted", None),
    "short3+batch+sentences": (VerifySettings(questions="short3"), 8, "sentences", None),
    "short3+batch 1thread": (VerifySettings(questions="short3"), 8, "extracted", 1),
    "short3+batch+top2+sentences": (VerifySettings(questions="short3", top_k=2), 8, "sentences", None),
    "short3+batch+top1+sentences": (VerifySettings(questions="short3", top_k=1), 8, "sentences", None),
    "short3+batch+top1 grammar sampler": (VerifySettings(questions="short3", top_k=1), 8, "extracted", None),
}
# settings run with llama.cpp's grammar sampler for every token (no grammar_check fast path): the
# same tokens, the time before the fast path
GRAMMAR_ONLY = frozenset({"short3+batch+top1 grammar sampler"})
SPEED = ("before", "short3", "short3+batch", "short3+batch+top2", "short3+batch+top1", "short3+batch+sentences",
         "short3+batch+top2+sentences", "short3+batch+top1+sentences", "short3+batch 1thread")


# ---- accuracy ---------------------------------------------------------------------------------

def cache_path(question: str, parallel: int) -> Path:
    return DATA / f"probs_{question}_p{parallel}.jsonl"


def collect(questions: str, parallel: int) -> dict[tuple[str, str], dict]:
    """Probabilities of each question of a set for every (passage, claim) of the agreement set,
    cached per question (the yes/no question's answer goes under "yes")."""
    merged: dict[tuple[str, str], dict] = {}
    for question in local_llm.QUESTION_SETS[questions]:
        for key, row in _collect_one(question, parallel).items():
            merged.setdefault(key, {"passage": key[0], "claim": key[1]}).update(
                {"yes": row["yes"]} if "yes" in row
                else {k: row[k] for k in ("supported", "contradicted", "unmentioned")})
    return merged


def _collect_one(question: local_llm.TypedQuestion, parallel: int) -> dict[tuple[str, str], dict]:
    from ragmeter.judges.local.model import bundled_model

    path = cache_path(question.name, parallel)
    rows = _read_cache(path)
    missing = [(case, pid, text) for case in load_set("all") for pid, text in case.passages
               if any((pid, c) not in rows for c in case.claims)]
    if not missing:
        return rows
    path.parent.mkdir(parents=True, exist_ok=True)
    llm = local_llm.LocalLLM(bundled_model(), n_ctx=4096, parallel=parallel, threads=COLLECT_THREADS)
    start, usage = time.perf_counter(), local_llm.Usage()
    with open(path, "a", encoding="utf-8") as f:
        for k, (case, pid, text) in enumerate(missing, start=1):
            todo = [c for c in case.claims if (pid, c) not in rows]
            for claim, p in zip(todo, llm.ask(question, text, todo, usage)):
                row = {"passage": pid, "claim": claim, **{x: round(v, 6) for x, v in p.items()}}
                rows[(pid, claim)] = row
                f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"  {question.name} p{parallel}: passage {k}/{len(missing)}, {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
    return rows


def _read_cache(path: Path) -> dict[tuple[str, str], dict]:
    rows: dict[tuple[str, str], dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            rows[(r["passage"], r["claim"])] = r
    return rows


def score_for(settings: VerifySettings) -> str:
    """What the rule reads: P(yes) where the question set asks it, else log s - log c."""
    return "yes" if len(local_llm.QUESTION_SETS[settings.questions]) > 1 else "log_ratio"


def agreement(settings: VerifySettings, embedder: Any) -> dict:
    """Grouped cross-validation of one setting on cached probabilities (no model call)."""
    score = score_for(settings)
    claims, per_claim, pairs = _claims(settings, embedder)
    # The rule is fitted on every (claim, passage) pair, also where verification then checks only
    # the preselected passages: fitted on the preselected pairs, the grid search lands on other
    # thresholds (8 supported claims flip on short3 top-2), while judged by the all-pairs rule the
    # preselection changes 1 verdict in 216.
    every = _claims(replace(settings, top_k=0), embedder)[0] if settings.top_k else claims
    pool = POOL if score == "log_ratio" else "max"
    cv = verdict_rule.cross_validate(claims, score=score, fit_on=every, pool=pool)
    # Skipping the yes/no question where the three-way answers already give not_found (with the
    # fold's rule, less SKIP_MARGIN) cannot change a verdict; count what it saves, and check that.
    asked = pairs if score == "yes" else 0
    if settings.skip_second and score == "yes":
        asked = 0
        for (group, _, rows), pred in zip(per_claim, cv.predicted):
            loose = replace(cv.rules[group], bias_unmentioned=cv.rules[group].bias_unmentioned - SKIP_MARGIN)
            if loose.mentioned(rows):
                asked += len(rows)
            else:
                assert pred == LABELS.index("not_found")
    final = verdict_rule.fit(every, score=score, fitted_on="", pool=pool)
    shipped = verdict_rule.RULES["per_chunk"] if settings == VerifySettings(questions="long") else None
    unfitted = (round(float((verdict_rule.predict(shipped, claims) == claims.labels).mean()), 4)
                if shipped is not None else None)
    return {**cv.as_dict(), "pairs": pairs, "yes_no_asked": asked, "rule": final.as_dict(),
            "shipped_rule_accuracy": unfitted,
            "fold_rules": sorted({(r.bias_unmentioned, r.yes_threshold, r.t_c) for r in cv.rules.values()})}


def fitted_rule(settings: VerifySettings, embedder: Any) -> verdict_rule.VerdictRule:
    """The setting's rule fitted on the whole agreement set, every passage (what would ship)."""
    return verdict_rule.fit(_claims(replace(settings, top_k=0), embedder)[0], score=score_for(settings))


def _claims(settings: VerifySettings, embedder: Any) -> tuple[verdict_rule.Claims, list, int]:
    probs = collect(settings.questions, ACC_PARALLEL)
    per_claim, pairs = [], 0
    for case in load_set("all"):
        selections = preselect(list(case.claims), [t for _, t in case.passages], top_k=settings.top_k,
                               embedder=embedder)
        for claim, label, sel in zip(case.claims, case.labels, selections):
            rows = [dict(probs[(case.passages[j][0], claim)]) for j in sel.keep]
            pairs += len(rows)
            per_claim.append((case.id, label, rows))
    return verdict_rule.Claims.from_rows(per_claim), per_claim, pairs


def accuracy_table(names: list[str]) -> dict[str, dict]:
    """Every setting's accuracy from probabilities computed with ``ACC_PARALLEL`` sequences per
    batch (llama.cpp's kernels group rows differently by batch size: the probabilities move in
    the second decimal, the verdicts rarely)."""
    from ragmeter.embeddings.minilm import bundled

    out: dict[str, dict] = {}
    for name in names:
        settings = SETTINGS[name][0]
        same = next((n for n in out if SETTINGS[n][0] == settings), None)
        out[name] = out[same] if same else agreement(settings, bundled())
    return out


# ---- speed ------------------------------------------------------------------------------------

def speed(names: list[str], repeat: int) -> dict[str, dict]:
    from ragmeter.judges import Judge
    from ragmeter.judges.local.backend import LocalBackend
    from ragmeter.ledger import Ledger

    data = ragmeter.load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl")
    answered = [s for s in data.samples if s.answer]
    from ragmeter.embeddings.minilm import bundled
    from ragmeter.judges.local import agreement as local_agreement

    # the shipped rule where one is shipped for the setting (no re-fit: that needs the agreement
    # set's probabilities, a long collection run), else the rule fitted on them
    rules = {n: verdict_rule.RULES["per_chunk"] if n == "before"
             else local_agreement.rule_for(SETTINGS[n][0]) or fitted_rule(SETTINGS[n][0], bundled()) for n in names}
    start = time.perf_counter()
    base = LocalBackend(parallel=max(SETTINGS[n][1] for n in names))
    base.llm  # noqa: B018  (load now: loading is not part of the throughput)
    print(f"model load and start-up check: {time.perf_counter() - start:.1f} s ({base.model})", file=sys.stderr)
    times: dict[str, list[float]] = {n: [] for n in names}
    cpus: dict[str, list[float]] = {n: [] for n in names}
    info: dict[str, dict] = {}
    for r in range(repeat):
        for name in names:
            settings, parallel, claims, threads = SETTINGS[name]
            backend = LocalBackend(settings=settings, parallel=parallel, claims=claims, rule=rules[name])
            backend.__dict__["_llm"] = base._llm  # one model in memory: the settings differ, not the weights
            base._llm.parallel = parallel
            local_llm.set_threads(base._llm, threads)
            patterns = dict(grammar_check.PATTERNS)
            if name in GRAMMAR_ONLY:
                grammar_check.PATTERNS.clear()
            with tempfile.TemporaryDirectory() as tmp:
                judge = Judge(backend, ledger=Ledger(Path(tmp) / "ledger.sqlite"))
                load = os.getloadavg()[0]
                t0, c0 = time.perf_counter(), time.process_time()
                try:
                    result = ragmeter.evaluate(answered, ["faithfulness", "context_recall"], judge=judge)
                finally:
                    grammar_check.PATTERNS.update(patterns)
                seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
                load_after = os.getloadavg()[0]
                by_prompt = _seconds_by_prompt(Path(tmp) / "ledger.sqlite")
            times[name].append(seconds)
            cpus[name].append(cpu)
            means = result.means()
            info[name] = {"faithfulness": means.get("faithfulness"), "context_recall": means.get("context_recall"),
                          "input_tokens": judge.stats.input_tokens, "seconds_by_prompt": by_prompt}
            print(f"  round {r + 1} {name}: {seconds:.1f} s wall, {cpu:.1f} s CPU (load average {load:.1f} before, "
                  f"{load_after:.1f} after; {by_prompt})", file=sys.stderr, flush=True)
    local_llm.set_threads(base._llm, None)
    return {n: {**info[n], "seconds": times[n], "median_s": statistics.median(times[n]), "cpu_s": cpus[n],
                "median_cpu_s": statistics.median(cpus[n]),
                "samples_per_s": len(answered) / statistics.median(times[n])} for n in names}


def extra_bufts(repeat: int) -> dict[str, dict]:
    """The default setting with llama.cpp's extra weight buffers (REPACK here; AMX on an AMX CPU
    in a native build) on and off at load, the same build, interleaved."""
    from ragmeter.judges import Judge
    from ragmeter.judges.local.backend import LocalBackend
    from ragmeter.ledger import Ledger

    data = ragmeter.load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl")
    answered = [s for s in data.samples if s.answer]
    backends = {}
    for on in (True, False):
        b = LocalBackend()
        b.__dict__["_llm"] = local_llm.LocalLLM(b.path, n_ctx=b.n_ctx, parallel=b.parallel, extra_bufts=on)
        backends[f"use_extra_bufts={on}"] = b
    times: dict[str, list[float]] = {n: [] for n in backends}
    for r in range(repeat):
        for name, b in backends.items():
            with tempfile.TemporaryDirectory() as tmp:
                judge = Judge(b, ledger=Ledger(Path(tmp) / "ledger.sqlite"))
                load, t0 = os.getloadavg()[0], time.perf_counter()
                ragmeter.evaluate(answered, ["faithfulness", "context_recall"], judge=judge)
                times[name].append(time.perf_counter() - t0)
            print(f"  round {r + 1} {name}: {times[name][-1]:.1f} s (load {load:.1f})", file=sys.stderr, flush=True)
    return {n: {"seconds": t, "median_s": statistics.median(t)} for n, t in times.items()}


def _seconds_by_prompt(ledger: Path) -> dict[str, float]:
    import sqlite3

    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT prompt_id, SUM(latency_s) FROM judgments GROUP BY prompt_id").fetchall()
    return {pid: round(float(sec), 1) for pid, sec in rows}


# ---- the other prompts ------------------------------------------------------------------------

def prompt_agreement() -> dict[str, dict]:
    from ragmeter.judges.local.backend import LocalBackend
    from ragmeter.judges.local.extract import ADDRESSES, ADDRESSES_SHORT, DECLINES, DECLINES_SHORT

    backend = LocalBackend()
    llm = backend.llm
    usage = local_llm.Usage()
    out = {}
    for suffix, (addresses, declines) in {"": (ADDRESSES, DECLINES),
                                          " (short)": (ADDRESSES_SHORT, DECLINES_SHORT)}.items():
        got, want = [], []
        before = usage.prompt_tokens
        for row in _jsonl(AGREEMENT / "addresses.jsonl"):
            probs = llm.ask(addresses, row["question"], [s["statement"] for s in row["statements"]], usage)
            got += [p["yes"] >= 0.5 for p in probs]
            want += [s["addresses"] for s in row["statements"]]
        out["claims.extract:addresses_question" + suffix] = {**_binary("addresses the question", got, want),
                                                            "tokens": usage.prompt_tokens - before}
        got, want = [], []
        before = usage.prompt_tokens
        for row in _jsonl(AGREEMENT / "declines.jsonl"):
            got.append(llm.ask(declines, row["question"], [row["answer"]], usage)[0]["yes"] >= 0.5)
            want.append(row["declines"])
        out["claims.extract:declines" + suffix] = {**_binary("declines to answer", got, want),
                                                  "tokens": usage.prompt_tokens - before}
    out["context.relevance"] = _context_relevance(backend)
    out["context.relevance (typed per sentence, not taken)"] = _context_relevance_typed(llm, usage)
    return out


def _context_relevance_typed(llm: Any, usage: Any) -> dict:
    """Per sentence, one typed yes/no question each (an alternative, measured and not taken: on the
    labeled set it finds 9 of 22 needed sentences where the generated list finds 15)."""
    needed_q = local_llm.TypedQuestion(
        "needed", "You judge whether a sentence from a retrieved context is needed to answer a question. A sentence "
        "is needed when the answer cannot be fully given without it; sentences about other products, other topics "
        "or padding are not needed.",
        "QUESTION: {context}\n\nSENTENCE: {claim}\n\nIs this sentence needed to answer the question? Answer yes or no.",
        local_llm.YES_NO_WORDS)
    got, want = [], []
    for r in _jsonl(AGREEMENT / "context_relevance.jsonl"):
        probs = llm.ask(needed_q, r["question"], r["sentences"], usage)
        needed = {i for i, p in enumerate(probs, start=1) if p["yes"] >= 0.5}
        got += [i in needed for i in range(1, len(r["sentences"]) + 1)]
        want += [i in set(r["needed"]) for i in range(1, len(r["sentences"]) + 1)]
    return _binary("sentence needed", got, want)


def _context_relevance(backend: Any) -> dict:
    """Per sentence: needed or not, from the generated list of needed sentence numbers (the
    context.relevance prompt under a JSON-Schema grammar, as any other prompt is served)."""
    from ragmeter.judges import Judge, JudgeRequest, schemas
    from ragmeter.judges.prompts import load_prompt

    rows = _jsonl(AGREEMENT / "context_relevance.jsonl")
    prompt = load_prompt("context.relevance")
    requests = [JudgeRequest(prompt, {"question": r["question"], "sentences": "\n".join(
        f"{i}. {t}" for i, t in enumerate(r["sentences"], start=1))}, schemas.NEEDED_SENTENCES, "needed_sentences")
        for r in rows]
    got, want = [], []
    for r, j in zip(rows, Judge(_Generated(backend)).run(requests)):
        needed = set(j.value["needed"]) if not isinstance(j, Exception) and j.ok else set()
        got += [i in needed for i in range(1, len(r["sentences"]) + 1)]
        want += [i in set(r["needed"]) for i in range(1, len(r["sentences"]) + 1)]
    return _binary("sentence needed", got, want)


class _Generated:
    """The local backend answering every prompt by grammar-constrained generation."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.model, self.key_extra, self.description = inner, "local", inner.model, None, {}

    def rescore(self, request: Any, value: Any, logprobs: Any) -> Any:
        return value

    async def complete(self, messages: list, schema: dict, schema_name: str, decoding: Any, request: Any = None) -> Any:
        from ragmeter.judges.backends import Reply

        usage = local_llm.Usage()
        text, cut = self.inner.llm.generate_json(messages, schema, max_tokens=decoding.max_tokens, seed=decoding.seed,
                                                 usage=usage)
        return Reply(text, usage.prompt_tokens, usage.output_tokens, usage.seconds, truncated=cut)

    async def aclose(self) -> None:
        return None


def _binary(what: str, got: list[bool], want: list[bool]) -> dict:
    g, w = np.array(got), np.array(want)
    majority = bool(w.mean() >= 0.5)
    base = float((w == majority).mean())
    return {"what": what, "n": len(w), "accuracy": round(float((g == w).mean()), 4),
            "baseline": {"rule": f"always {'yes' if majority else 'no'} (majority class)", "accuracy": round(base, 4)},
            "confusion": {"yes": [int((w & g).sum()), int((w & ~g).sum())],
                          "no": [int((~w & g).sum()), int((~w & ~g).sum())]}}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---- output -----------------------------------------------------------------------------------

def print_table(acc: dict[str, dict], spd: dict[str, dict]) -> None:
    print(f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print(f"{'setting':24} {'samples/s':>9} {'median s':>9} {'CPU s':>6} {'faith':>6} {'recall':>6} {'CV acc':>7} "
          f"{'95% interval':>13} {'C->S':>5} {'pairs':>6} {'yes/no':>6}")
    for name in SETTINGS:
        a, s = acc.get(name), spd.get(name)
        if a is None and s is None:
            continue
        sp = (f"{s['samples_per_s']:9.4f} {s['median_s']:9.1f} {s['median_cpu_s']:6.1f} {_f(s['faithfulness'])} "
              f"{_f(s['context_recall'])}" if s else f"{'':9} {'':9} {'':6} {'':6} {'':6}")
        interval = f"{a['interval95'][0]:.2f}-{a['interval95'][1]:.2f}" if a else ""
        ac = (f"{a['accuracy']:7.3f} {interval:>13} {a['contradicted_called_supported']:5.2f} {a['pairs']:6d} "
              f"{a['yes_no_asked']:6d}" if a else "")
        print(f"{name:24} {sp} {ac}")
    for name, a in acc.items():
        print(f"\n{name}: confusion (rows: label; columns: judged supported / contradicted / not found) "
              f"{a['confusion']}; rule fitted on all contexts {a['rule']}")


def _f(v: float | None) -> str:
    return f"{v:6.3f}" if v is not None else f"{'n/c':>6}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("accuracy", "speed", "prompts", "table", "bufts"))
    parser.add_argument("--settings", help="comma-separated names (default: all for accuracy, SPEED for speed)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--threads", type=int, help="threads for computing the accuracy probabilities")
    parser.add_argument("--pool", choices=("max", "passage"), default="max",
                        help="accuracy: how the three-way rule combines passages (VerdictRule.pool)")
    args = parser.parse_args()
    global COLLECT_THREADS, POOL
    COLLECT_THREADS, POOL = args.threads, args.pool
    default = SPEED if args.what == "speed" else tuple(SETTINGS)
    names = [n.strip() for n in args.settings.split(",") if n.strip()] if args.settings else list(default)
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings {unknown}; choose from {list(SETTINGS)}")
    out: dict[str, Any] = {}
    if args.what in ("accuracy", "table"):
        out["accuracy"] = accuracy_table(names)
    if args.what in ("speed", "table"):
        out["speed"] = speed([n for n in names if args.what == "speed" or n in SPEED], args.repeat)
        out["load_average"] = os.getloadavg()
    if args.what == "bufts":
        out["bufts"] = extra_bufts(args.repeat)
        print(json.dumps(out["bufts"], indent=2))
    elif args.what == "prompts":
        out["prompts"] = prompt_agreement()
        print(json.dumps(out["prompts"], indent=2))
    else:
        print_table(out.get("accuracy", {}), out.get("speed", {}))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()
