"""Differential tests against the trec_eval 10.0 binary for its other inputs: preference judgments
(``-R prefs``, ``-R qrels_prefs``), judgment groups (``-R qrels_jg``) and z-scores (``-Z``).

Hypothesis writes the files (several judgment groups and sub-groups per topic, levels that tie,
documents judged in several groups, runs with score ties, topics the run misses; z-score files
with zero deviations, values equal to the mean, measures and topics they lack), and both
programs run with the same options: the same exit status and, on success, the same bytes, with
either engine. Cases where trec_eval crashes (an inconsistent preference makes it abort) are
discarded, as in tests/acceptance/test_trec_eval_binary.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from tests.acceptance.test_trec_eval_binary import SETTINGS, _binary, cases, compare

TOPICS = ["1", "2", "10", "q7", "caf\u00e9"]


@pytest.fixture(scope="module")
def trec_eval() -> str:
    return _binary()


def _run_text(rng: random.Random, topics: list[str], pool: dict[str, list[str]]) -> str:
    rows = []
    for t in topics:
        docs = rng.sample(pool[t], rng.randint(1, len(pool[t]))) + [f"un{i}" for i in range(rng.randint(0, 3))]
        if rng.random() < 0.05:
            docs.append(docs[0])  # listed twice: trec_eval refuses it (exit 4)
        rows += [(t, d, rng.choice([1.0, 2.0, 0.5, round(rng.random(), 2)])) for d in docs]
    rng.shuffle(rows)
    return "".join(f"{t} Q0 {d} {i} {s} run{rng.randint(1, 2)}\n" for i, (t, d, s) in enumerate(rows))


@st.composite
def prefs_cases(draw):
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    qrels_layout = draw(st.booleans())
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
    pool = {t: [f"d{i}" for i in range(rng.randint(2, 9))] for t in topics}
    lines = []
    for t in topics:
        for g in range(rng.randint(1, 3)):
            truth = {d: rng.choice([0, 0, 1, 2, 3, 4.5]) for d in pool[t]}  # one order per group: consistent
            for s in range(1 if qrels_layout else rng.randint(1, 3)):
                chosen = rng.sample(pool[t], rng.randint(1, len(pool[t])))
                for d in chosen:
                    level = truth[d] if rng.random() < 0.95 else rng.choice([0, 1, 2])
                    level_text = rng.choice([str(level), f"{float(level):.1f}"])
                    if qrels_layout:
                        lines.append(f"{t} u{g} {d} {level_text}")
                    else:
                        lines.append(f"{t} u{g} s{s} {d} {level_text}")
    rng.shuffle(lines)
    if not qrels_layout and rng.random() < 0.3:
        lines.insert(rng.randint(0, len(lines)), "# a comment")
    run_topics = [t for t in topics if rng.random() < 0.9] or topics[:1]
    options = ["-R", "qrels_prefs" if qrels_layout else "prefs"]
    options += draw(st.sampled_from([["-q"], ["-q"], [], ["-q", "-n"]]))
    if draw(st.booleans()):
        options.append("-c")
    depth = draw(st.sampled_from([None, None, 1, 2, 5]))
    if depth is not None:
        options += ["-M", str(depth)]
    measures = draw(st.sampled_from([["all_prefs"], ["all_prefs"], ["prefs"], ["prefs_pair", "prefs_simp_imp"],
                                     ["prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret", "num_q", "runid"]]))
    return "".join(line + "\n" for line in lines), _run_text(rng, run_topics, pool), options, measures


@st.composite
def group_cases(draw):
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
    pool = {t: [f"d{i}" for i in range(rng.randint(2, 12))] for t in topics}
    lines = []
    for t in topics:
        for g in rng.sample(["0", "1", "2", "10"], rng.randint(1, 3)):
            for d in rng.sample(pool[t], rng.randint(1, len(pool[t]))):
                lines.append(f"{t} {g} {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
    if rng.random() < 0.05:
        lines.append(lines[0])  # judged twice in one group: trec_eval cannot read the file (exit 2)
    rng.shuffle(lines)
    run_topics = [t for t in topics if rng.random() < 0.9] or topics[:1]
    options = ["-R", "qrels_jg"] + draw(st.sampled_from([["-q"], ["-q"], [], ["-q", "-n"]]))
    for flag in ("-c", "-J"):
        if draw(st.booleans()):
            options.append(flag)
    level = draw(st.sampled_from([1, 1, 2, 0]))
    if level != 1:
        options += ["-l", str(level)]
    depth = draw(st.sampled_from([None, None, 1, 3, 8]))
    if depth is not None:
        options += ["-M", str(depth)]
    measures = draw(st.sampled_from([["qrels_jg"], ["qrels_jg"], ["P_avgjg.1,3", "Rprec_mult_avgjg.0.5,1,3"],
                                     ["map_avgjg", "num_q"]]))
    return "".join(line + "\n" for line in lines), _run_text(rng, run_topics, pool), options, measures


ZMEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "P_5", "P_10",
             "iprec_at_recall_0.10", "ndcg", "relstring", "num_q", "set_F", "infAP", "rbp"]


@st.composite
def zscore_files(draw):
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    ids = ["1", "2", "10", "301", "q1", "Q2", "t-3", "a", "zz", "caf\u00e9"]
    lines = []
    for t in rng.sample(ids, rng.randint(0, len(ids))):
        for m in rng.sample(ZMEASURES, rng.randint(1, len(ZMEASURES))):
            mean = rng.choice([0.0, 0.5, 1.0, 3.0, round(rng.random(), 4)])
            stddev = rng.choice([0.0, 0.0, 0.25, 1.0, round(rng.random() + 0.01, 4)])
            lines.append(f"{t} {m} {mean} {stddev}")
    return "".join(line + "\n" for line in lines) or "zz map 0.5 0.1\n"


def _write(tmp: Path, files: dict[str, str]) -> dict[str, Path]:
    out = {}
    for name, text in files.items():
        out[name] = tmp / name
        out[name].write_text(text)
        note(f"--- {name}\n{text[:3000]}")
    return out


@pytest.mark.slow
def test_preference_judgments_print_what_trec_eval_prints(trec_eval, tmp_path):
    @SETTINGS
    @given(prefs_cases())
    def check(case) -> None:
        prefs, run, options, measures = case
        files = _write(tmp_path, {"prefs.txt": prefs, "run.txt": run})
        compare(trec_eval, [*options, *(a for m in measures for a in ("-m", m)), str(files["prefs.txt"]),
                            str(files["run.txt"])])

    check()


@pytest.mark.slow
def test_judgment_groups_print_what_trec_eval_prints(trec_eval, tmp_path):
    @SETTINGS
    @given(group_cases())
    def check(case) -> None:
        qrels, run, options, measures = case
        files = _write(tmp_path, {"qrels.txt": qrels, "run.txt": run})
        compare(trec_eval, [*options, *(a for m in measures for a in ("-m", m)), str(files["qrels.txt"]),
                            str(files["run.txt"])])

    check()


@pytest.mark.slow
def test_zscores_print_what_trec_eval_prints(trec_eval, tmp_path):
    @SETTINGS
    @given(cases(""), zscore_files())
    def check(case, zscores) -> None:
        files = _write(tmp_path, {"qrels.txt": case.qrels.decode(), "run.txt": case.run.decode(), "z.txt": zscores})
        compare(trec_eval, ["-Z", str(files["z.txt"]), *case.args(files["qrels.txt"], files["run.txt"])])

    check()
