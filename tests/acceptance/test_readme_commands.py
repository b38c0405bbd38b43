"""Every command the manual shows (README.md, examples/warranty/README.md and every page of the
documentation site, docs/**/*.md), run as written in a temporary folder, its output checked against
what the page says it prints.

The commands are read from the pages themselves: each line of a code block that runs ragmeter, and
each inline `ragmeter ...` span. A ``console`` block is run as it stands, line by line
(``test_console_blocks_print_what_the_pages_say``): each ``$ ragmeter ...`` line in a fresh folder
per page holding the bundled sample, and the lines shown under it must be printed, in that order,
each as the start of a printed line (``...`` skips lines; a run directory's timestamp matches any
other; a trailing ``# exit N`` says the exit status, 0 otherwise; a run directory named
``runs/<timestamp>-NAME`` is the page's latest run of that name; a fenced block with a title,
```` ```json title="my-data.jsonl" ````, is written to that file first). Every other command must be
classified below, either run here (with concrete files in place of DATA, RUN, ...) or covered by a
named test elsewhere (checked to exist): a command added to a page and not classified fails
``test_every_command_readme_shows_is_run_or_covered``, so nothing is skipped silently.
The judge, where one is needed, is the test HTTP judge answering as the seed article does
(``tests/seed_judge.py``); the bundled local judge's run of README's first command is
``test_local_judge_model.py::test_cli_local_judge`` (it needs the 1.1 GB model).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from ragmeter.runs import list_runs, load_run
from tests import judge_server, manual, seed_judge
from tests.conftest import ROOT

FIRST = ("examples/warranty/dataset.jsonl --corpus examples/warranty/corpus.jsonl -m precision,recall,hit_rate,"
         "mrr,ndcg,faithfulness,context_recall,factual_correctness,answer_relevancy,semantic_similarity")
CONSOLE = "test_console_blocks_print_what_the_pages_say"
STAMP = re.compile(r"\d{8}T\d{6}Z")


def fenced_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Each fenced code block of a page: its language and its lines."""
    return [(language, lines) for language, lines, _ in fenced_blocks_titled(text)]


def fenced_blocks_titled(text: str) -> list[tuple[str, list[str], str | None]]:
    """Each fenced code block of a page: its language, its lines and its ``title="..."``."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r"\s*```(\w*)(.*)", lines[i])
        if opening:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), len(lines))
            title = re.search(r'title="([^"]+)"', opening.group(2))
            blocks.append((opening.group(1), lines[i + 1:end], title.group(1) if title else None))
            i = end
        i += 1
    return blocks


def console_commands(lines: list[str]) -> list[tuple[str, int, list[str]]]:
    """A console block's commands: (command, exit status said, the lines shown under it)."""
    out: list[tuple[str, int, list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            said = re.search(r"\s+#\s*exit (\d+)\s*$", line)
            command = line[2:said.start()] if said else line[2:]
            out.append((" ".join(command.split()), int(said.group(1)) if said else 0, []))
        elif out:
            out[-1][2].append(line)
    return out


def shown_commands() -> list[str]:
    """Each ragmeter command the manual shows, whitespace-normalised, in order, once."""
    found: list[str] = []
    for page in manual.pages():
        text = page.read_text()
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("    "):
                continue
            command = line.strip()
            while command.endswith("\\") and i + 1 < len(lines):  # a continued line
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            if re.match(r"(ragmeter |python3 -m venv )", command) and not lines[i - 1].rstrip().endswith("\\"):
                found.append(command)
        for language, block in fenced_blocks(text):
            if language == "console":
                found += [c for c, _, _ in console_commands(block)]
            elif language != "python":
                found += [b.strip() for b in block if re.match(r"(ragmeter |python3 -m venv )", b.strip())]
        found += [m.group(1) for m in re.finditer(r"`(ragmeter(?: [^`]*)?)`", text)]
    found = [re.sub(r"\s+#\s.*$", "", c) for c in found]  # a shell comment after a command is no part of it
    normalised = [" ".join(c.replace("\\|", "|").split()) for c in found]
    return list(dict.fromkeys(normalised))


def console_pages() -> dict[str, list[tuple[str, int, list[str]]]]:
    """page -> the commands of its console blocks, in order."""
    return {page: [step for step in steps if step[0] != FILE] for page, steps in page_steps().items()}


FILE = "<file>"  # a step that writes a file a page shows with a title, for the commands after it


def page_steps() -> dict[str, list[tuple[str, int, list[str]]]]:
    """page -> its console commands in order, and before them the files its titled blocks show
    (```` ```json title="my-data.jsonl" ````: (FILE, 0, [name, *lines]))."""
    out = {}
    for page in manual.pages():
        steps: list[tuple[str, int, list[str]]] = []
        for language, block, title in fenced_blocks_titled(page.read_text()):
            if language == "console":
                steps += console_commands(block)
            elif title:
                steps.append((FILE, 0, [title, *block]))
        if any(step[0] != FILE for step in steps):
            out[manual.name(page)] = steps
    return out


INNER_LOOP = 'pytest -q -m "not slow"'  # README's test command: the tests not marked slow


# command as README shows it -> a test elsewhere that runs it ("path::test_name"), with why not here
ELSEWHERE = {
    # the CI workflow (docs/guides/ci-gate.md shows examples/ci/rag-eval.yml as it is): its steps' commands
    "ragmeter eval eval/dataset.jsonl --corpus eval/corpus.jsonl":
        "tests/cli/test_eval_cmd.py::test_eval_with_an_openai_compatible_judge",
    "ragmeter gate eval/runs/*-pr-${{ github.event.number }} --baseline eval/baseline \\":
        "tests/analysis/test_gate.py::test_gate_cli_exit_codes",
    "ragmeter eval ... --runs-dir eval --name baseline":
        "tests/cli/test_analysis_cmd.py::test_commands_that_read_runs_look_names_up_under_runs_dir",
    "ragmeter gate runs/new --baseline runs/base --max-drop 0.02 --min recall@5=0.7 --max contradiction_rate=0.1":
        "tests/analysis/test_gate.py::test_gate_cli_exit_codes",
    "ragmeter gate runs/new --baseline runs/base --min recall@5=0.7 --junit gate.xml":
        "tests/report/test_junit.py::test_gate_junit_is_valid_and_has_a_case_per_bar_and_metric",
    "ragmeter gate RUN": "tests/analysis/test_gate.py::test_gate_checks_floors_and_ceilings_without_a_baseline",
    "ragmeter compare runs/base runs/new":
        "tests/analysis/test_compare.py::test_compare_names_the_metrics_only_one_run_holds",
    "ragmeter gate runs/new --baseline runs/base --max-drop 0.02":
        "tests/analysis/test_gate.py::test_six_samples_fail_the_plain_gate_on_the_size_of_the_drop_and_it_says_it_is_not_"
        "significant",
    "ragmeter report RUN --html report.html":
        "tests/report/test_html_pages.py::test_a_large_run_is_a_page_and_its_pages",
    "ragmeter watch LOG --judge none --once":
        "tests/cli/test_watch_cmd.py::test_watch_without_judge_and_without_the_local_one_says_what_to_pass",
    "ragmeter eval DATA --engine ray [--address auto|HOST:PORT]":
        "tests/engine/test_distributed.py::test_identical_to_the_local_engine_on_the_bundled_sample",
    "ragmeter pairwise A B --judge ... [--examples FILE]":
        "tests/analysis/test_pairwise.py::test_pairwise_command_takes_an_examples_file",
    "ragmeter turns RUN [--svg F]": "tests/analysis/test_turns.py::test_turns_command_and_plot",
    "ragmeter watch LOG --judge ...": "tests/cli/test_watch_cmd.py::test_exit_on_alert_cli",
    "ragmeter watch --otlp [HOST:]PORT [--statsd HOST:PORT] [--to-phoenix URL]":
        "tests/live/test_trace_intake.py::test_1000_traces_at_a_steady_rate_through_two_kill_9s_each_acknowledged_"
        "one_scored_once",
    'ragmeter watch LOG --judge ... --sample-rate 0.1 --alert "faithfulness<0.8" --baseline RUN':
        "tests/live/test_watch.py::test_drift_from_a_baseline_alerts",
    "ragmeter judge-check [--judge ...] [--split heldout|tune|all]":
        "tests/judges/local/test_model.py::test_judge_check_reports_accuracy_interval_and_the_cross_validated_rule",
    "ragmeter judge-check --judge local":
        "tests/judges/local/test_model.py::test_judge_check_reports_accuracy_interval_and_the_cross_validated_rule",
    "ragmeter judge-check --set mtrag-dev":
        "tests/trust/test_mtrag_check.py::test_judge_check_on_mtrag_dev_with_an_api_judge",
    "ragmeter label DATA [--corpus C] [--k 10] [--labeler NAME] [--labels F]":
        "tests/label/test_server.py::test_two_labelers_reload_adjudication_and_export",
    "ragmeter label questions.jsonl --corpus corpus.jsonl --labeler alice":
        "tests/label/test_server.py::test_two_labelers_reload_adjudication_and_export",
    "ragmeter label": "tests/label/test_server.py::test_two_labelers_reload_adjudication_and_export",
    "ragmeter label DATA --agreement": "tests/cli/test_label_cmd.py::test_cli_export_writes_a_new_dataset_and_qrels",
    "ragmeter label questions.jsonl --export labeled.jsonl --qrels labeled.qrels":
        "tests/cli/test_label_cmd.py::test_cli_export_writes_a_new_dataset_and_qrels",
    "ragmeter testset generate --corpus C --judge ... -n N [--kinds ...]":
        "tests/testset/test_generate.py::test_generation_kinds_labels_duplicates_rejects_and_a_free_rerun",
    "ragmeter testset generate --corpus corpus.jsonl --judge openai:<model> -n 100 -o testset.jsonl":
        "tests/testset/test_generate.py::test_generation_kinds_labels_duplicates_rejects_and_a_free_rerun",
    "ragmeter testset generate":
        "tests/testset/test_generate.py::test_generation_kinds_labels_duplicates_rejects_and_a_free_rerun",
    "ragmeter import beir|trec|msmarco ... --out DIR":
        "tests/io/collections/test_collection.py::test_beir_folder_imports_to_the_hand_counted_labels",
    "ragmeter import": "tests/io/collections/test_collection.py::test_beir_folder_imports_to_the_hand_counted_labels",
    "ragmeter import beir scifact/ --split test --out scifact-eval":
        "tests/io/collections/test_collection.py::test_beir_folder_imports_to_the_hand_counted_labels",
    "ragmeter import trec --topics topics.301-350 --qrels qrels.txt --run run.txt --docs docs.sgml --out trec-eval":
        "tests/io/collections/test_trec.py::test_a_trec_run_scored_through_the_import_equals_ragmeter_trec",
    "ragmeter --version": "tests/cli/test_main.py::test_version_flag",
    "ragmeter runs [--runs-dir DIR]": "tests/cli/test_runs_cmd.py::test_runs_takes_runs_dir_as_the_other_commands_do",
    "ragmeter runs DIR": "tests/cli/test_runs_cmd.py::test_runs_takes_runs_dir_as_the_other_commands_do",
    # the times table: the label metrics alone on the sample, as the resume test runs it
    "ragmeter eval examples/warranty/dataset.jsonl":
        "tests/acceptance/test_readme_commands.py::test_resume_block_and_the_run_commands",
    # the label-path speed table's column head (bench/label_bench.py runs it)
    "ragmeter eval --format json":
        "tests/embeddings/test_backends.py::test_criteria_file_applies_to_the_streamed_path_too",
    "ragmeter eval --no-save --format json": "tests/judges/local/test_backend.py::test_cli_local_judge",
    "ragmeter diagnose": "tests/cli/test_eval_cmd.py::test_stale_fact_through_the_judge_and_the_table",
    "ragmeter eval DATA --records SOURCE [--records-timeout 10] [--action-criteria FILE]":
        "tests/cli/test_eval_cmd.py::test_stale_fact_through_the_judge_and_the_table",
    # the install-size table names the core package, not a command
    "ragmeter": "tests/core/test_extras.py::test_the_same_run_works_with_every_extra_blocked",
    "ragmeter mlflow-log RUN [--tracking-uri URI] [--experiment NAME] [--run-name NAME]":
        "tests/runs/test_mlflow_log.py::test_cli_logs_a_run_directory",
    "ragmeter mlflow-log RUN": "tests/runs/test_mlflow_log.py::test_cli_logs_a_run_directory",
    "ragmeter mlflow-log": "tests/runs/test_mlflow_log.py::test_cli_logs_a_run_directory",  # README install sizes
    "ragmeter gate RUN --min recall@5=0.7":
        "tests/analysis/test_gate.py::test_gate_checks_floors_and_ceilings_without_a_baseline",
    "ragmeter gate RUN --baseline B --max-drop 0.02 --min recall@5=0.7 --max contradiction_rate=0.1":
        "tests/test_testing.py::test_gate_cli_refuses_a_floor_on_a_lower_is_better_metric",
    "ragmeter eval trec-eval/dataset.jsonl --k 0 -m map,ndcg@10,precision@5":
        "tests/io/collections/test_trec.py::test_a_trec_run_scored_through_the_import_equals_ragmeter_trec",
    "ragmeter import msmarco --collection collection.tsv --queries queries.dev.tsv --qrels qrels.dev.tsv "
    "--run run.tsv --out marco-eval": "tests/io/collections/test_msmarco.py::test_msmarco_tsvs",
    "ragmeter eval examples/warranty/q1_views.jsonl --view context --metrics "
    "precision,recall,reciprocal_rank,ndcg,average_precision,rank_weighted_precision":
        "tests/acceptance/test_seed_tables.py::test_step2_three_conditions_cli",
    "ragmeter eval examples/warranty/dataset.jsonl --only q1 --metrics \"hit_rate,hit_rate(granular=True),"
    "reciprocal_rank,reciprocal_rank(granular=True),ndcg,ndcg(discount='jk2002')\"":
        "tests/acceptance/test_seed_tables.py::test_other_definitions_on_q1",
}

# commands the site's pages show (docs/), covered elsewhere: kept apart from README's so that a
# page added by one change and a README line by another do not touch the same lines
ELSEWHERE.update({
    # docs/architecture.md's path of one evaluation with a judge (the first command runs it over HTTP)
    "ragmeter eval DATA -m ndcg@5,faithfulness --judge openai:m":
        "tests/acceptance/test_readme_commands.py::test_first_command_prints_the_table_readme_shows",
    "ragmeter COMMAND --help": "tests/cli/test_app.py::test_every_help_shows_the_extras_in_brackets",
    "ragmeter eval -m demo_recall":
        "tests/metrics/test_custom.py::test_an_installed_package_metric_is_listed_scored_compared_and_reported",
    "ragmeter judge-check":
        "tests/judges/local/test_model.py::test_judge_check_reports_accuracy_interval_and_the_cross_validated_rule",
    "ragmeter watch": "tests/cli/test_watch_cmd.py::test_exit_on_alert_cli",
    "ragmeter turns": "tests/analysis/test_turns.py::test_turns_command_and_plot",
    # docs/traces.md: the OTLP receiver, trace exports, events back (the local judge's runs are the tests'
    # scripted judge there)
    "ragmeter watch --otlp 4318 --judge local --metrics faithfulness,answer_relevancy --sample-rate 0.1":
        "tests/live/test_trace_intake.py::test_the_watcher_scores_a_request_per_trace_with_its_retrievals",
    "ragmeter watch --otlp 4318 --judge local --to-phoenix http://127.0.0.1:6006":
        "tests/live/test_phoenix.py::test_scores_show_as_annotations_through_phoenixs_own_client_with_its_telemetry_off",
    "ragmeter watch --otlp": "tests/cli/test_watch_cmd.py::test_watch_otlp_once_reads_the_spool_and_exits",
    "ragmeter eval traces.jsonl --judge local -m faithfulness,context_relevance":
        "tests/io/formats/test_trace_exports.py::test_the_cli_reads_the_export_and_groups_the_request",
    "ragmeter eval TRACES":
        "tests/io/formats/test_trace_exports.py::test_the_cli_reads_the_export_and_groups_the_request",
    "ragmeter eval traces.jsonl --judge local -m faithfulness --format otlp > events.json":
        "tests/report/test_otlp_events.py::test_eval_and_show_print_the_events",
    "ragmeter show RUN --format otlp": "tests/report/test_otlp_events.py::test_eval_and_show_print_the_events",
    # docs/offline-judge.md
    "ragmeter eval data.jsonl -m k_precision,\"k_precision(stop_words='drop')\" --judge none":
        "tests/metrics/generation/test_kprecision.py::test_the_metric_through_evaluate",
    "ragmeter eval checking_outputs.json --judge given "
    "-m \"faithfulness(evidence='per_chunk')\",claim_recall,hallucination":
        "tests/io/formats/test_ragchecker.py::test_the_given_judge_reproduces_ragcheckers_published_numbers_with_no_call",
    "ragmeter judge-check --set mtrag-dev --judge local":
        "tests/trust/test_mtrag_check.py::test_judge_check_on_mtrag_dev_with_an_api_judge",
    "ragmeter eval data.jsonl -m faithfulness,contradiction_rate --judge local:model":
        "tests/judges/local/test_backend.py::test_cli_offline_judge_with_its_model_stage",
    # docs/judged-variants.md, docs/records-mcp.md
    "ragmeter eval requests.jsonl -m response_context_precision --judge openai:gpt-4o-mini":
        "tests/metrics/context/test_judged_context.py::"
        "test_seed_q1_response_based_precision_equals_the_reference_based_one",
    "ragmeter pairwise runs/A runs/B --judge openai:gpt-4o-mini --examples pairs.json":
        "tests/analysis/test_pairwise.py::test_pairwise_command_takes_an_examples_file",
    'ragmeter eval answers.jsonl -m record_accuracy --records "mcp:python server.py#lookup_order#safe"':
        "tests/records/test_mcp_source.py::test_a_read_tool_named_safe_is_called_and_its_answers_are_the_same",
    # docs/robustness.md: the load trial, a budget across --resume, long conversations
    "ragmeter eval -m faithfulness":
        "tests/judges/test_transport.py::test_a_load_of_faults_is_run_to_the_end_paid_once_and_completed_by_retry_failed",
    "ragmeter eval --resume runs/20261202T101500Z-eval --budget N (or --budget-usd) with a larger cap":
        "tests/runs/test_resume.py::test_the_budget_is_stored_and_holds_across_resume",
    "ragmeter eval -m recall@5,ndcg@5":
        "tests/core/test_history.py::test_a_run_writes_each_history_line_once_and_reads_the_histories_back",
})

# commands run below (by the test named), with concrete files for the placeholders
RUN_HERE = {
    "python3 -m venv .venv && .venv/bin/pip install": "test_first_command_prints_the_table_readme_shows",
    "ragmeter eval examples/warranty/dataset.jsonl --corpus examples/warranty/corpus.jsonl":
        "test_first_command_prints_the_table_readme_shows",
    "ragmeter eval": "test_first_command_prints_the_table_readme_shows",
    "ragmeter eval DATA [--corpus F] [--k 5] [-m METRICS] [--view retrieved|context|both] [--judge ...]":
        "test_eval_options_and_the_run_directory",
    "ragmeter eval --resume RUN": "test_resume_block_and_the_run_commands",
    "ragmeter eval DATA --block N": "test_resume_block_and_the_run_commands",
    "ragmeter eval DATA.jsonl --block N": "test_resume_block_and_the_run_commands",
    "ragmeter runs": "test_resume_block_and_the_run_commands",
    "ragmeter show RUN": "test_resume_block_and_the_run_commands",
    "ragmeter show": "test_resume_block_and_the_run_commands",
    "ragmeter report RUN --html out.html": "test_resume_block_and_the_run_commands",
    "ragmeter report RUN --html F": "test_resume_block_and_the_run_commands",
    "ragmeter report": "test_resume_block_and_the_run_commands",
    "ragmeter diagnose RUN": "test_resume_block_and_the_run_commands",
    "ragmeter correlate RUN": "test_resume_block_and_the_run_commands",
    "ragmeter compare A B": "test_compare_gate_and_agreement",
    "ragmeter compare": "test_compare_gate_and_agreement",
    "ragmeter gate": "test_compare_gate_and_agreement",
    "ragmeter gate RUN --baseline B": "test_compare_gate_and_agreement",
    "ragmeter gate RUN --baseline B --max-drop 0.02 --min recall@5=0.7": "test_compare_gate_and_agreement",
    "ragmeter agreement RUN --labels F": "test_compare_gate_and_agreement",
    "ragmeter metrics": "test_metrics_lists_every_metric",
    "ragmeter trec": "test_trec_prints_trec_evals_bytes",
    "ragmeter trec QRELS RUN [-m ...] [-q] [-c] [-l] [-M] [-J] [-n] [-N]": "test_trec_prints_trec_evals_bytes",
    "ragmeter trec QRELS RUN [-m MEASURE ...] [-q] [-c] [-l LEVEL] [-M DEPTH] [-J] [-n] [-N NUM]":
        "test_trec_prints_trec_evals_bytes",
    "ragmeter trec QRELS RUN --memory-limit MB": "test_trec_prints_trec_evals_bytes",
    "ragmeter trec --skip-missing": "test_trec_prints_trec_evals_bytes",
}


def _classified(command: str) -> str | None:
    if any(command == c for commands in console_pages().values() for c, _, _ in commands):
        return f"tests/acceptance/test_readme_commands.py::{CONSOLE}"
    if command in ELSEWHERE:
        return ELSEWHERE[command]
    if command.startswith("python3 -m venv .venv && .venv/bin/pip install"):
        here = "tests/acceptance/test_readme_commands.py::"
        return here + ("test_the_test_command_is_the_one_ci_runs" if command.endswith(
            INNER_LOOP) else "test_first_command_prints_the_table_readme_shows")
    for shown, test in RUN_HERE.items():
        if command == shown or (shown.startswith("ragmeter eval examples") and command.startswith(shown)):
            return f"tests/acceptance/test_readme_commands.py::{test}"
    return None


def test_every_command_readme_shows_is_run_or_covered():
    commands = shown_commands()
    assert len(commands) >= 40, commands  # the reader found them
    unclassified = [c for c in commands if _classified(c) is None]
    assert unclassified == [], "classify these commands of the manual in tests/acceptance/test_readme_commands.py"
    for command in commands:
        path, name = _classified(command).split("::")  # type: ignore[union-attr]
        assert f"def {name}(" in (ROOT / path).read_text(), (command, path, name)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A temporary folder holding examples/warranty and examples/traces, as a fresh clone has them;
    runs go to ./runs."""
    for sample in ("warranty", "traces"):
        shutil.copytree(ROOT / "examples" / sample, tmp_path / "examples" / sample)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGMETER_RUNS_DIR", "runs")
    return tmp_path


@pytest.fixture
def run_cli(here):
    from typer.testing import CliRunner

    from ragmeter.cli.main import app

    def invoke(*args: str):
        return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke


def _readme_block_after(marker: str) -> list[str]:
    """The indented block that follows the paragraph containing ``marker`` in the manual."""
    lines = manual.text().splitlines()
    start = next(i for i, line in enumerate(lines) if marker in line)
    block, i = [], start + 1
    while i < len(lines) and not lines[i].startswith("    "):
        i += 1
    while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
        block.append(lines[i][4:])
        i += 1
    return block


def _latest_runs(command: str, here: Path) -> str:
    """``runs/<timestamp>-NAME`` in a command: the page's latest run of that name."""
    def latest(match: re.Match) -> str:
        found = sorted((here / "runs").glob(f"*-{match.group(1)}"))
        assert found, f"no run named {match.group(1)!r} before `{command}`"
        return found[-1].relative_to(here).as_posix()

    return re.sub(r"runs/\d{8}T\d{6}Z-([\w.-]+)", latest, command)


def _first_not_printed(shown: list[str], printed: list[str]) -> str | None:
    """The first line shown that is not printed (in order, each the start of a printed line)."""
    printed = [STAMP.sub("T", line) for line in printed]
    at = 0
    for line in shown:
        want = STAMP.sub("T", line.rstrip())
        if not want.strip() or want.strip() == "...":
            continue
        if want.endswith(" ..."):  # the rest of the line left out
            want = want[:-4]
        hit = next((i for i in range(at, len(printed)) if printed[i].startswith(want)), None)
        if hit is None:
            return line
        at = hit + 1
    return None


def test_the_console_check_can_fail():
    printed = ["a 1", "b 2", "run saved: runs/20261202T094838Z-eval"]
    assert _first_not_printed(["a", "...", "run saved: runs/20250101T000000Z-eval"], printed) is None
    assert _first_not_printed(["b 2", "a 1"], printed) == "a 1"  # out of order
    assert _first_not_printed(["c"], printed) == "c"
    assert _first_not_printed(["run saved: ...", "b 2 ..."], printed) == "b 2 ..."  # a cut line, in order
    assert console_commands(["$ ragmeter gate R --min x=1   # exit 1", "gate failed:"]) == [
        ("ragmeter gate R --min x=1", 1, ["gate failed:"])]


def _said(value: object, said: str) -> bool:
    """``value`` is what a page's comment says it is (``0.6284...``: digits left out)."""
    return re.fullmatch(re.escape(said).replace(re.escape("..."), r"\d*"), repr(value)) is not None


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_python_examples_give_what_they_say(page, monkeypatch):
    """The Python example of README and of the site's home page, run from the repository root; each
    line whose comment is a value (``result.means()  # {...}``) gives that value."""
    monkeypatch.chdir(ROOT)
    (block,) = [b for language, b in fenced_blocks((ROOT / page).read_text()) if language == "python"]
    scope: dict = {}
    exec("\n".join(block), scope)  # noqa: S102  (the page's own example)
    checked = 0
    for line in block:
        expression, _, said = line.partition("  # ")
        if said[:1] in ("{", "(", "[", "'") or said[:1].isdigit():
            assert _said(eval(expression, scope), said), (page, line, eval(expression, scope))  # noqa: S307
            checked += 1
    assert checked >= 1
    assert _said({"a": 0.61666}, "{'a': 0.6166...}") and not _said({"a": 0.62}, "{'a': 0.6166...}")


@pytest.mark.parametrize("page", sorted(console_pages()))
def test_console_blocks_print_what_the_pages_say(page, run_cli, here):
    """Each ``$ ragmeter ...`` line of the page's console blocks, in order, in one folder (holding
    the files the page shows with a title before them)."""
    for command, status, shown in page_steps()[page]:
        if command == FILE:
            (here / shown[0]).write_text("".join(line + "\n" for line in shown[1:]))
            continue
        args = shlex.split(_latest_runs(command, here))
        assert args[0] == "ragmeter", f"{page}: a console block shows ragmeter commands only, not `{command}`"
        out = run_cli(*args[1:])
        assert out.exit_code == status, f"{page}: `{command}` exited {out.exit_code}:\n{out.output}"
        missing = _first_not_printed(shown, out.output.splitlines())
        assert missing is None, f"{page}: `{command}` did not print {missing!r}; it printed:\n{out.output}"


@pytest.mark.slow
def test_first_command_prints_the_table_readme_shows(run_cli, here):
    """README's first command (its `ragmeter eval` part; the seed judge over HTTP in place of the
    local one) prints the table README shows, row by row (the claim and embedding columns follow
    on the same rows), the mean line and the coverage lines, then writes a run directory."""
    install = next(c for c in shown_commands() if c.startswith("python3 -m venv") and "[local]" in c)
    assert install.endswith(".venv/bin/ragmeter eval " + FIRST)
    srv, state = judge_server.start(seed_judge.over_http)
    try:
        out = run_cli("eval", *FIRST.split(), "--judge", "openai:m", "--judge-base-url", state.url + "/v1")
    finally:
        srv.shutdown()
    assert out.exit_code == 0, out.output
    printed = out.stdout.splitlines()
    shown = [line for line in _readme_block_after("The first command prints") if line.strip()]
    assert shown[-1] == "..."
    for line in shown[:-1]:
        match = [p for p in printed if p.startswith(line.rstrip())]
        assert match, f"README shows {line!r}; the command printed:\n{out.stdout}"
    (run,) = list_runs("runs")
    assert f"run saved: runs/{run.name}" in out.stdout and run.complete


def test_the_test_command_is_the_one_ci_runs():
    """README's second command installs and runs the inner loop (the tests not marked slow); the
    whole suite, the command after it, is what .ci/run runs (it is this test suite, so it is not
    re-run here); and neither compiles anything: llama.cpp comes as a prebuilt wheel, so no
    CMAKE_ARGS."""
    command = next(c for c in shown_commands() if c.startswith("python3 -m venv") and c.endswith(INNER_LOOP))
    readme = manual.text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert command == ('python3 -m venv .venv && .venv/bin/pip install -e ".[test,local]" '
                       '&& .venv/bin/python -m pytest -q -m "not slow"')
    assert "\n    .venv/bin/python -m pytest -q\n" in readme  # the whole suite, as its own block (docs/contributing.md)
    assert '.venv/bin/pip install --quiet -e ".[test,local]"' in ci
    assert ci.rstrip().splitlines()[-1] == ".venv/bin/python -m pytest -q"
    assert "CMAKE_ARGS" not in ci and "CMAKE_ARGS" not in readme


def test_eval_options_and_the_run_directory(run_cli, here):
    out = run_cli("eval", "examples/warranty/dataset.jsonl", "--corpus", "examples/warranty/corpus.jsonl",
                  "--k", "5", "-m", "ndcg,recall", "--view", "both", "--judge", "none")
    assert out.exit_code == 0, out.output
    (run,) = list_runs("runs")
    assert re.fullmatch(r"\d{8}T\d{6}Z-eval", run.name)  # runs/<timestamp>-<name>/
    assert {p.name for p in run.path.iterdir()} >= {"setup.json", "samples.jsonl", "results.jsonl", "summary.json"}


def test_resume_block_and_the_run_commands(run_cli, here):
    data = "examples/warranty/dataset.jsonl"
    assert run_cli("eval", data, "--name", "streamed", "--block", "2").exit_code == 0
    out = run_cli("eval", data)
    assert out.exit_code == 0
    streamed, run = list_runs("runs")
    assert streamed.summary == run.summary  # --block N gives the same summary
    # an interrupted run (status left running by a process that is gone) is finished by --resume
    setup = json.loads((run.path / "setup.json").read_text())
    (run.path / "setup.json").write_text(json.dumps({**setup, "status": "running", "pid": 2 ** 22 + 1}))
    (run.path / "summary.json").unlink()
    listed = run_cli("runs").stdout
    assert "interrupted" in listed and f"--resume {run.name}" in listed
    assert run_cli("eval", "--resume", run.path).exit_code == 0 and load_run(run.path).complete
    # runs: the runs with status and headline means
    listed = run_cli("runs").stdout
    assert run.name in listed and "complete" in listed and "recall@5 0.778" in listed
    # show RUN: setup, means, 95% intervals and coverage, by the name `runs` lists
    shown = run_cli("show", run.name)
    assert shown.exit_code == 0 and "95% CI" in shown.stdout and "ndcg@5" in shown.stdout
    # report RUN --html out.html: a self-contained page
    report = run_cli("report", run.name, "--html", "out.html")
    assert report.exit_code == 0 and report.stdout.strip() == "report written: out.html"
    page = (here / "out.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "https://" not in page
    # diagnose RUN: failure points per query, with the evidence
    diag = run_cli("diagnose", run.name)
    assert diag.exit_code == 0 and "q5: missed_top_ranked" in diag.stdout and "queries per failure point" in diag.stdout
    # correlate RUN: Spearman between metrics
    corr = run_cli("correlate", run.name)
    assert corr.exit_code == 0 and "recall@5" in corr.stdout


def test_compare_gate_and_agreement(run_cli, here):
    data = "examples/warranty/dataset.jsonl"
    assert run_cli("eval", data, "--name", "a").exit_code == 0
    assert run_cli("eval", data, "--name", "b").exit_code == 0
    a, b = list_runs("runs")
    cmp = run_cli("compare", a.path, b.path)
    assert cmp.exit_code == 0 and "B - A" in cmp.stdout and "p (Holm)" in cmp.stdout
    gate = run_cli("gate", b.path, "--baseline", a.path)
    assert gate.exit_code == 0 and gate.stdout.startswith("gate passed")  # exit codes 0/1/2
    floors = run_cli("gate", b.path, "--baseline", a.path, "--max-drop", "0.02", "--min", "recall@5=0.7")
    assert floors.exit_code == 0
    assert run_cli("gate", b.path, "--baseline", a.path, "--min", "recall@5=0.8").exit_code == 1  # 0.778 < 0.8
    labels = here / "labels.csv"
    labels.write_text("id,hit_rate@5\nq1,1\nq2,1\nq3,0\n")
    agree = run_cli("agreement", b.path, "--labels", labels)
    assert agree.exit_code == 0 and "hit_rate@5: 3 labeled" in agree.stdout and "PPI-corrected" in agree.stdout


def test_metrics_lists_every_metric(run_cli):
    from ragmeter.metrics import REGISTRY

    out = run_cli("metrics")
    assert out.exit_code == 0
    for spec in REGISTRY.values():  # "every metric with its formula, parameters and source"
        assert f"{spec.name} (v{spec.version}, " in out.stdout and spec.source in out.stdout


def test_trec_prints_trec_evals_bytes(run_cli, here):
    ref = ROOT / "tests" / "data" / "trec_eval"
    out = run_cli("trec", ref / "qrels.test", ref / "results.test")
    assert out.exit_code == 0 and out.stdout == (ref / "out.test").read_text()
    # in-process, pytest itself holds most of a small limit: give room
    limited = run_cli("trec", ref / "qrels.test", ref / "results.test", "--memory-limit", "4096")
    assert limited.exit_code == 0 and limited.stdout == out.stdout
    qrels = here / "qrels.extra"
    qrels.write_text((ref / "qrels.test").read_text() + "999 0 doc-x 1\n")  # a topic the run does not answer
    assert run_cli("trec", qrels, ref / "results.test").exit_code == 4
    skipped = run_cli("trec", qrels, ref / "results.test", "--skip-missing")
    assert skipped.exit_code == 0 and "999" in skipped.stderr and skipped.stdout == out.stdout


def test_readme_says_where_the_second_copy_of_the_model_is_and_how_to_remove_it():
    """The model is installed as parts and assembled into the cache: README names the file the
    loader writes and the command that removes it."""
    from ragmeter.judges.local.model import BUNDLED_NAME, BUNDLED_SIZE, PART_PACKAGE

    readme = " ".join(manual.text().split())
    assert f"~/.cache/ragmeter/models/{BUNDLED_NAME}" in readme
    assert "rm -r ~/.cache/ragmeter/models" in readme and PART_PACKAGE.split("{")[0] in readme
    assert f"{BUNDLED_SIZE / 1e9:.1f} GB assembled" in readme and "2.2 GB in all" in readme
