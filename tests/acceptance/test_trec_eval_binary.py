"""Differential test against the trec_eval 10.0 binary: ``ragmeter trec`` prints its bytes.

The oracle is built from ``../shared/reference/trec_eval-src/build`` (or taken from
``RAGMETER_TREC_EVAL``, which ``.ci/run`` exports). Hypothesis generates qrels and runs with
score ties, duplicate scores, graded, zero and negative labels, topics with no relevant or no
judged document, topics in the qrels only and in the run only, lists of one line and of more
than 1,000, lines grouped or shuffled, tabs or spaces, and run ids that change between lines;
and option sets drawn from ``-q -c -l -M -J -N -n`` with ``-m all_trec``, ``-m official`` or a
handful of single measures (with and without parameters). For every case both programs run:

- trec_eval exits 0: ``ragmeter trec`` exits 0 and its stdout is trec_eval's, byte for byte,
  with either engine (``--engine python``, what small files get, and ``--engine arrow``);
- trec_eval refuses (exit 1 to 8): ``ragmeter trec`` refuses with the same exit status;
- trec_eval crashes (a signal), or survives its own undefined behaviour on a topic whose
  grades are all <= -2 (which ragmeter refuses): the case says nothing and is discarded.

Each test forces one option on (the others drawn), so every family of differences fails on
its own. ``RAGMETER_TREC_EXAMPLES=2000`` runs a larger, freshly randomised search by hand;
the default budget (fixed examples, about a minute on two cores) is what CI runs.
"""

from __future__ import annotations

import difflib
import os
import random
import re
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.trec.catalog import NICKNAMES, ORDER
from tests.conftest import SHARED

BUILD = SHARED / "reference" / "trec_eval-src" / "build"
MANUAL = int(os.environ.get("RAGMETER_TREC_EXAMPLES", "0"))
EXAMPLES = MANUAL or 100  # per test below

TOPIC_IDS = ["1", "2", "10", "301", "q1", "Q2", "t-3", "a", "zz", "caf\u00e9"]
SINGLE = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
          "iprec_at_recall", "P", "recall", "gm_bpref", "Rprec_mult", "11pt_avg", "ndcg", "ndcg_cut", "map_cut",
          "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
          "num_nonrel_judged_ret", "unj", "P.1,2,1001", "recall.3,1200", "ndcg_cut.1,4", "map_cut.2,1005",
          "success.2,3", "relative_P.2,7", "unj.1,3", "iprec_at_recall.0,.33,1", "Rprec_mult.0.5,1.5",
          "ndcg.1=2,2=1", "11pt_avg.0.2,0.5,0.8", "relstring", "relstring.3", "utility", "utility.2,-1,0.5,0.1",
          "infAP", "binG", "G", "G.1=3,2=9", "G.0=1,3=0.5", "dcg", "ideal_dcg", "ndcg_rel", "ndcg_rel.1=0.5,2=4",
          "Rndcg", "Rndcg.2=1,1=2", "rbp", "rbp.p=0.5", "rbp.1=3,2=9", "rbp.-1=2,p=0.8", "rbp_resid",
          "rbp_resid.p=0.7", "yaap", "ndcg.1=0.5,0=0.2", "dcg.2=-1"]
ENGINES = ["python", "arrow"]


def _binary() -> str:
    given_path = os.environ.get("RAGMETER_TREC_EVAL")
    if given_path:
        if not os.access(given_path, os.X_OK):
            pytest.fail(f"RAGMETER_TREC_EVAL={given_path!r} is not an executable trec_eval")
        return given_path
    if BUILD.exists():
        built = subprocess.run([str(BUILD)], check=False, capture_output=True, text=True, timeout=600)
        if built.returncode != 0:
            pytest.fail(f"building trec_eval failed: {built.stderr.strip()}")
        return built.stdout.strip()
    reason = (f"trec_eval 10.0 is not available: {BUILD} is not there (it ships in the shared reference folder; "
              "or set RAGMETER_TREC_EVAL to a trec_eval 10.0 binary)")
    if os.environ.get("RAGMETER_CI") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def trec_eval() -> str:
    return _binary()


@dataclass
class Case:
    qrels: bytes
    run: bytes
    options: list[str]
    measures: list[str]

    def args(self, qrels: Path, run: Path) -> list[str]:
        return [*self.options, *(a for m in self.measures for a in ("-m", m)), str(qrels), str(run)]


# (relevant retrieved, retrieved, relevant) whose exact ratio rr^2 / (ret * rel) lies on a midpoint of
# the fourth decimal while rr / ret or rr / rel is not exact in binary: the printed value then
# depends on the order of the arithmetic (set_map, set_F).
MIDPOINTS = [(a, r, n) for r in range(1, 41) for n in range(1, 41) for a in range(1, min(r, n) + 1)
             if 20000 * a * a % (r * n) == 0 and 20000 * a * a // (r * n) % 2 == 1
             and not (Fraction(a, r).denominator.bit_count() == 1 and Fraction(a, n).denominator.bit_count() == 1)]


def _docno(rng: random.Random, i: int) -> str:
    return rng.choice(["d{}", "D{}", "doc-{:03d}", "x{}y", "\u00e9{}"]).format(i)


def _labels(rng: random.Random, mix: str, n: int) -> list[int]:
    choices = {"graded": [0, 0, 1, 1, 2, 3, 4], "binary": [0, 1], "all_zero": [0],
               "negatives": [-2, -1, 0, 1, 2], "all_negative": [-1], "all_very_negative": [-2, -3]}[mix]
    return [rng.choice(choices) for _ in range(n)]


def _score(rng: random.Random, style: str) -> float:
    if style == "int":
        return float(rng.randint(0, 3))
    if style == "one_decimal":
        return round(rng.uniform(-1, 2), 1)
    if style == "negative":
        return -rng.randint(0, 5) / 4
    if style == "equal":
        return 1.0
    return rng.random() * 10


def _score_text(rng: random.Random, s: float) -> str:
    return rng.choice([repr(s), f"{s:.4f}", f"{s:e}", repr(s)])


@st.composite
def topics(draw):
    return {
        "where": draw(st.sampled_from(["both"] * 6 + ["qrels_only", "run_only"])),
        "length": draw(st.sampled_from(["one"] * 2 + ["short"] * 4 + ["medium"] * 3 + ["long"] + ["midpoint"] * 3)),
        "midpoint": draw(st.integers(0, 2**16)),
        "labels": draw(st.sampled_from(["graded"] * 3 + ["binary"] * 2 + ["all_zero", "negatives", "negatives",
                                                                            "all_negative", "all_very_negative"])),
        "scores": draw(st.sampled_from(["int", "int", "one_decimal", "negative", "equal", "unique", "unique"])),
        "judged": draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])),
        "duplicate": draw(st.sampled_from([False] * 15 + [True])),
    }


@st.composite
def cases(draw, force: str):
    options = []
    if draw(st.sampled_from([True, True, True, False])):
        options.append("-q")
    if force == "c" or draw(st.booleans()):
        options.append("-c")
    if force == "J" or draw(st.booleans()):
        options.append("-J")
    if draw(st.sampled_from([False] * 5 + [True])):
        options.append("-n")
    level = 2 if force == "l" else draw(st.sampled_from([1, 1, 1, 2, 3, 0, -1, -2]))
    if level != 1 or draw(st.booleans()):
        options += ["-l", str(level)]
    depth = draw(st.sampled_from([1, 2, 3, 5, 10, 50, 1000])) if force == "M" else draw(
        st.sampled_from([None, None, None, 0, 1, 2, 3, 5, 10, 50, 1000]))
    if depth is not None:
        options += ["-M", str(depth)]
    if draw(st.sampled_from([False, False, True])):
        options += ["-N", str(draw(st.integers(0, 10**6)))]
    ids = draw(st.lists(st.sampled_from(TOPIC_IDS), min_size=1, max_size=6, unique=True))
    specs = [draw(topics()) for _ in ids]
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    qrels_lines, run_lines = [], []
    for qid, spec in zip(ids, specs):
        if spec["length"] == "midpoint":  # its qrels are written here, whatever "where" says
            # every retrieved document judged and the relevant ones graded 3 or 4, so that the
            # counts survive -J, -M (no longer than the depth) and -l up to 3
            fitting = [t for t in MIDPOINTS if depth is None or t[1] <= depth] or MIDPOINTS
            rel_ret, n, rel = fitting[spec["midpoint"] % len(fitting)]
            pool = list(dict.fromkeys(_docno(rng, i) for i in range(n + rel)))
            retrieved = rng.sample(pool, n)
            relevant = rng.sample(retrieved, rel_ret) + [d for d in pool if d not in set(retrieved)][:rel - rel_ret]
            qrels_lines += [f"{qid} 0 {d} {rng.choice([3, 4])}" for d in relevant]
            qrels_lines += [f"{qid} 0 {d} 0" for d in retrieved if d not in set(relevant)]
        else:
            n = {"one": 1, "short": rng.randint(1, 5), "medium": rng.randint(6, 60),
                 "long": rng.randint(1001, 1300)}[spec["length"]]
            pool = list(dict.fromkeys(_docno(rng, i) for i in range(n + rng.randint(0, 5))))
            retrieved = rng.sample(pool, min(n, len(pool)))
        if spec["where"] != "run_only" and spec["length"] != "midpoint":
            chosen = set(retrieved)
            judged = [d for d in retrieved if rng.random() < spec["judged"]] + [d for d in pool if d not in chosen]
            judged += [f"unret{i}" for i in range(rng.randint(0, 3))]
            if not judged:
                judged = [pool[0]]
            if spec["duplicate"] and rng.random() < 0.3:
                judged.append(judged[0])  # judged twice
            for doc, rel in zip(judged, _labels(rng, spec["labels"], len(judged))):
                qrels_lines.append(f"{qid} {rng.choice(['0', 'Q0', '1'])} {doc} {rel}")
        if spec["where"] != "qrels_only":
            rows = [(doc, _score(rng, spec["scores"])) for doc in retrieved]
            if spec["duplicate"] and rng.random() < 0.7:
                rows.append((rng.choice(retrieved), _score(rng, spec["scores"])))
            run_lines.extend((qid, doc, s) for doc, s in rows)
    assume(qrels_lines and run_lines)
    layout = draw(st.sampled_from(["ranked", "grouped", "shuffled"]))
    if layout == "ranked":
        run_lines.sort(key=lambda r: (ids.index(r[0]), -r[2]))
    elif layout == "shuffled":
        rng.shuffle(run_lines)
    sep = draw(st.sampled_from([" ", " ", "\t", "  "]))
    runids = draw(st.sampled_from([["run1"], ["run1"], ["run1", "other"]]))
    run_text = "".join(f"{q}{sep}Q0{sep}{d}{sep}{rank}{sep}{_score_text(rng, s)}{sep}{rng.choice(runids)}\n"
                       for rank, (q, d, s) in enumerate(run_lines))
    rng.shuffle(qrels_lines)
    qrels_text = "".join(line.replace(" ", sep) + "\n" for line in qrels_lines)

    measures = draw(st.one_of(st.just(["all_trec"]), st.just(["all_trec"]), st.just(["official"]), st.just(["set"]),
                              st.lists(st.sampled_from(SINGLE), min_size=1, max_size=5, unique=True)))
    return Case(qrels_text.encode(), run_text.encode(), options, measures)


def _ragmeter(args: list[str]) -> tuple[int, bytes, str]:
    from ragmeter.cli.main import app

    result = CliRunner().invoke(app, ["trec", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout_bytes, result.stderr


def check(binary: str, case: Case, tmp: Path) -> None:
    qrels, run = tmp / "qrels.txt", tmp / "run.txt"
    qrels.write_bytes(case.qrels)
    run.write_bytes(case.run)
    args = case.args(qrels, run)
    note(f"trec_eval {' '.join(args)}\n--- qrels\n{case.qrels.decode()}--- run\n{case.run.decode()[:4000]}")
    compare(binary, args)


def rbp_reads_the_stack(args: list[str]) -> bool:
    """m_rbp.c compares the gains with ``min`` and ``max`` left uninitialised: they hold what the
    measure computed just before rbp left in that stack slot (``-m ndcg_rel -m rbp``: ndcg_rel's
    ideal DCG). ragmeter starts them at 0, which is what trec_eval prints when rbp comes first
    (or after all_trec's measures, as its quicktest has it); other company makes rbp's lines
    undefined behaviour, not a reference."""
    measures = [args[i + 1].partition(".")[0] for i, a in enumerate(args) if a == "-m"]
    named = [n for m in measures for n in (NICKNAMES.get(m, [m]) if m != "all_trec" else [m])]
    before = [m for m in named if m in ORDER and ORDER.index(m) < ORDER.index("rbp")]
    return "rbp" in measures and "all_trec" not in measures and any(m not in ("runid", "num_q") for m in before)


def _without_rbp(text: bytes) -> bytes:
    return b"".join(line for line in text.splitlines(keepends=True)
                    if not re.match(rb"Z?rbp(_[^r]|\s)", line))


def compare(binary: str, args: list[str]) -> None:
    """trec_eval and ``ragmeter trec`` (each engine) on the same arguments: the same exit status,
    and on success the same bytes (rbp's lines aside where they are undefined: see
    :func:`rbp_reads_the_stack`)."""
    theirs = subprocess.run([binary, *args], check=False, capture_output=True, timeout=120)
    assume(theirs.returncode >= 0)  # a crash (segmentation fault, abort) is no reference
    if rbp_reads_the_stack(args):
        theirs = subprocess.CompletedProcess(theirs.args, theirs.returncode, _without_rbp(theirs.stdout), theirs.stderr)
    for engine in ENGINES:
        code, stdout, stderr = _ragmeter(["--engine", engine, *args])
        # a topic whose grades are all <= -2 after a judged one makes trec_eval memset a negative
        # size (form_res_rels.c): it crashes, or with a lucky heap prints on; ragmeter refuses it
        assume(not (theirs.returncode == 0 and code == 4 and "(it crashes)" in stderr))
        if theirs.returncode != 0:
            assert code == theirs.returncode, (f"trec_eval refused with exit {theirs.returncode} "
                                               f"({theirs.stderr.decode().strip()}); ragmeter ({engine}) exited "
                                               f"{code}: {stderr}")
            continue
        assert code == 0, f"trec_eval exit 0, ragmeter ({engine}) exit {code}: {stderr}"
        if rbp_reads_the_stack(args):
            stdout = _without_rbp(stdout)
        if stdout != theirs.stdout:
            diff = difflib.unified_diff(theirs.stdout.decode().splitlines(), stdout.decode().splitlines(),
                                        "trec_eval", f"ragmeter trec --engine {engine}", lineterm="", n=1)
            pytest.fail("output differs:\n" + "\n".join(list(diff)[:60]))


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=not MANUAL, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])


@pytest.mark.slow
@pytest.mark.parametrize("force", ["", "c", "J", "M", "l"])
def test_ragmeter_prints_what_trec_eval_prints(trec_eval, tmp_path, force):
    @SETTINGS
    @given(cases(force))
    def compare(case: Case) -> None:
        check(trec_eval, case, tmp_path)

    compare()


GOOD_QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
GOOD_RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.0 r\n"
REFUSALS = [  # (qrels, run, extra options, what ragmeter's message says, which file it names)
    ("1 0 a 1 x\n" + GOOD_QRELS, GOOD_RUN, [], "line 1: expected 4 fields", "qrels"),
    (GOOD_RUN, GOOD_RUN, [], "(is this a run file?)", "qrels"),
    ("1 0 a 1\n\n2 0 c 1\n", GOOD_RUN, [], "line 2: a blank line", "qrels"),
    ("1 0 a\n" + GOOD_QRELS, GOOD_RUN, [], "line 1: expected 4 fields", "qrels"),
    ("# one\n# two\n" + GOOD_QRELS, GOOD_RUN, [], "line 2: expected 4 fields", "qrels"),
    (GOOD_QRELS + "  # x a 1\n", GOOD_RUN, [], "have no results in the run: '#'", "run"),
    (GOOD_QRELS, "1 Q0 a 1 2.0\n", [], "line 1: expected 6 fields", "run"),
    (GOOD_QRELS, GOOD_RUN + "2 Q0 c 9 0.5 r\n", [], "document 'c' appears twice for topic '2'", "run"),
    (GOOD_QRELS + "2 0 c 0\n", GOOD_RUN, [], "document 'c' is judged twice for topic '2'", "qrels"),
    (GOOD_QRELS + "3 0 z 1\n", GOOD_RUN, [], "have no results in the run: '3'", "run"),
    ("0 0 z -1\n" + GOOD_QRELS, GOOD_RUN + "0 Q0 z 1 1 r\n", [], "topic '0' has no judgment >= 0", "qrels"),
    (GOOD_QRELS, GOOD_RUN, ["-m", "mapp"], "unknown trec_eval measure 'mapp'", None),
    (GOOD_QRELS, GOOD_RUN, ["-m", "P_5"], "unknown trec_eval measure 'P_5' (trec_eval: illegal measure); did you "
                                          "mean 'P.5'?", None),
    (GOOD_QRELS, GOOD_RUN, ["-m", "P."], "empty parameter list", None),
    (GOOD_QRELS, GOOD_RUN, ["-m", "P.5,5"], "given twice", None),
    (GOOD_QRELS, GOOD_RUN, ["-m", "P.0,3"], "must be positive", None),
]


@pytest.mark.slow
@pytest.mark.parametrize("qrels,run,extra,words,names", REFUSALS, ids=[
    'fifth-qrels-field', 'run-as-qrels', 'blank-qrels-line', 'three-qrels-fields', 'two-comments', 'indented-hash',
    'short-run-line', 'run-duplicate', 'qrels-duplicate', 'missing-topic', 'all-negative-first', 'unknown-measure',
    'printed-name', 'empty-parameters', 'duplicate-cutoffs', 'zero-cutoff'])
def test_refuses_what_trec_eval_refuses_with_its_exit_status(trec_eval, tmp_path, qrels, run, extra, words, names):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(qrels)
    r.write_text(run)
    theirs = subprocess.run([trec_eval, *extra, str(q), str(r)], check=False, capture_output=True, timeout=60)
    assert theirs.returncode > 0, theirs.stdout  # trec_eval refuses it (and does not crash)
    code, _, stderr = _ragmeter([*extra, str(q), str(r)])
    assert code == theirs.returncode, stderr
    assert words in stderr and "Traceback" not in stderr
    if names:
        assert f"{tmp_path / (names + '.txt')}" in stderr


def test_the_duplicate_error_names_the_run_file_in_memory_and_streamed(tmp_path):
    from ragmeter.trec.errors import TrecInputError
    from ragmeter.trec.partitioned import evaluate_trec_streaming

    q, r = tmp_path / "judgments.qrels", tmp_path / "system-a.run"
    q.write_text(GOOD_QRELS)
    r.write_text(GOOD_RUN + "2 Q0 c 9 0.5 r\n")
    code, _, stderr = _ragmeter([str(q), str(r)])
    assert code == 4 and f"{r}: document 'c' appears twice for topic '2'" in stderr
    with pytest.raises(TrecInputError, match=f"{r}: document 'c' appears twice for topic '2'"):
        evaluate_trec_streaming(q, r, ["map"], max_part_rows=1)  # one topic per part
