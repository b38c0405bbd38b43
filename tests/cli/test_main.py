"""Start-up: what each entry point loads (cli/main.py, the lazy package names, the metric
families registered as they are looked up). ``--version`` loads no command code, ``--help``
no library code, a label-only ``eval`` and ``trec`` only what they run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

import ragmeter

SCRIPT = """
import json, sys
sys.argv = ['ragmeter', *json.loads(sys.argv[1])]
from ragmeter.cli.main import run
try:
    run()
except SystemExit as exc:
    assert not exc.code, exc.code
print('MODULES', json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(list(args))], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return done.stdout, set(json.loads(line[len("MODULES "):]))


def ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "ragmeter" or m.startswith("ragmeter.")}


def test_version_loads_no_command_code() -> None:
    out, modules = loaded("--version")
    assert out == f"ragmeter {ragmeter.__version__}\n"
    assert ours(modules) == {"ragmeter", "ragmeter._lazy", "ragmeter._version", "ragmeter.cli", "ragmeter.cli.main"}
    assert "typer" not in modules and "numpy" not in modules


@pytest.mark.slow
def test_help_loads_the_commands_and_their_defaults_only() -> None:
    out, modules = loaded("--help")
    assert "eval" in out and "trec" in out
    library = {m for m in ours(modules) if not m.startswith("ragmeter.cli")}
    # the settings the options default to, and the judge names they check
    assert library == {"ragmeter", "ragmeter._lazy", "ragmeter._version", "ragmeter.core", "ragmeter.core.errors",
                       "ragmeter.core.judge_specs", "ragmeter.core.settings"}
    assert "numpy" not in modules and "pydantic" not in modules


NOT_FOR_LABELS = ("pydantic", "ragmeter.judges", "ragmeter.ledger", "ragmeter.records", "ragmeter.actions",
                  "ragmeter.evidence.matrix", "ragmeter.evidence.provider", "ragmeter.evidence.claims",
                  "ragmeter.embeddings", "ragmeter.analysis", "ragmeter.metrics.generation",
                  "ragmeter.metrics.context", "ragmeter.metrics.beyond", "ragmeter.metrics.conversation",
                  "ragmeter.report.html", "ragmeter.report.results_csv",
                  "ragmeter.runs.store", "ragmeter.runs.result_lines", "ragmeter.io.shapes", "ragmeter.io.rows",
                  "httpx", "asyncio")  # label measures alone are scored without an event loop


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_label_only_eval_loads_what_it_runs(fmt: str, tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "?", "retrieved": ["a", "b"],
                                        "relevant": {"b": 1}}) + "\n" for i in range(3)))
    out, modules = loaded("eval", str(data), "-m", "ndcg@10,mrr@10", "--no-save", "--format", fmt)
    assert "ndcg@10" in out
    assert not {m for m in modules if m.startswith(NOT_FOR_LABELS)}


@pytest.mark.slow
def test_trec_loads_the_label_kernels_only() -> None:
    pytest.importorskip("pyarrow")
    ref = Path(__file__).resolve().parent.parent / "data" / "trec_eval"
    out, modules = loaded("trec", str(ref / "qrels.test"), str(ref / "results.test"))
    assert out.startswith("runid")
    assert not {m for m in modules if m.startswith(NOT_FOR_LABELS + ("ragmeter.io.dataset", "ragmeter.engine"))}


def test_version_flag(cli):
    from ragmeter._version import __version__

    out = cli("--version")
    assert out.exit_code == 0 and out.stdout.strip() == f"ragmeter {__version__}"


def test_help_keeps_the_extras_brackets_and_every_option_has_help(cli):
    """Rich markup would read `[local]` as a style tag and print `ragmeter` alone."""
    text = " ".join(cli("eval", "--help").stdout.split())
    assert "ragmeter[local]" in text and "ragmeter[ray]" in text
    from ragmeter.cli.main import app

    command = typer.main.get_command(app)
    undocumented = [(name, p.opts) for name, sub in command.commands.items()  # type: ignore[attr-defined]
                    for p in sub.params if p.param_type_name == "option" and not getattr(p, "help", None)]
    assert undocumented == []


def test_a_format_the_command_does_not_have_is_a_usage_error(cli, tmp_path, runs_dir, warranty):
    """compare, gate and diagnose printed their table for ``--format markdwon`` and exited 0 (a typo
    in CI passed unseen); every --format now names its choices."""
    assert cli("eval", warranty / "dataset.jsonl", "--judge", "none").exit_code == 0
    (run,) = [p for p in runs_dir.iterdir() if (p / "setup.json").is_file()]
    for args in (["compare", run, run], ["gate", run, "--baseline", run], ["diagnose", run], ["correlate", run]):
        r = cli(*args, "--format", "markdwon")
        assert r.exit_code == 2 and "markdwon" in r.output, (args, r.output)
    assert cli("gate", run, "--baseline", run, "--format", "markdown").exit_code == 0


def test_a_multi_line_error_keeps_its_lines(cli, runs_dir, warranty):
    """compare's setup-mismatch error printed its line breaks as a literal \\x0a."""
    for k in ("3", "5"):
        assert cli("eval", warranty / "dataset.jsonl", "--judge", "none", "--k", k, "--name", f"k{k}").exit_code == 0
    a, b = sorted(p for p in runs_dir.iterdir() if (p / "setup.json").is_file())
    r = cli("compare", a, b)
    assert r.exit_code == 2 and "not comparable" in r.output, r.output
    assert "\\x0a" not in r.output and len(r.output.strip().splitlines()) > 1, r.output
