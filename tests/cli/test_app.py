"""The command line is a thin, documented layer: every command and option is named in the manual
(README.md and the pages of docs/, by hand: the generated reference names them all by itself),
the command modules register on one app and never import each other, and the eval command's
options map onto the settings object (``--k 0`` is the whole list)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import typer

from ragmeter.cli.main import app
from ragmeter.core.settings import FIELDS, Settings
from tests import manual

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "src" / "ragmeter" / "cli"
README = manual.text()


def _named(text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(text)}(?![\w-])", README) is not None


def _commands(group=None, prefix=""):
    """Every command by its full name (``testset generate``), sub-commands of groups included."""
    out = {}
    for name, command in (group or typer.main.get_command(app)).commands.items():  # type: ignore[attr-defined]
        out[prefix + name] = command
        if hasattr(command, "commands"):
            out.update(_commands(command, f"{prefix}{name} "))
    return out


def _options():
    for name, command in _commands().items():
        for p in command.params:
            if p.param_type_name == "option" and p.name != "help":
                yield name, p


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_is_in_the_readme(name):
    assert _named(f"ragmeter {name}"), f"the manual never names `ragmeter {name}`"


@pytest.mark.parametrize("command,option", [(c, p.name) for c, p in _options()])
def test_every_option_is_in_the_readme(command, option):
    (p,) = [p for c, p in _options() if c == command and p.name == option]
    flags = [o for o in p.opts + p.secondary_opts if o.startswith("--")] or p.opts
    assert any(_named(f) for f in flags), f"the manual never names {' or '.join(flags)} (ragmeter {command})"


def test_the_readme_check_can_fail():
    assert not _named("--no-such-option") and not _named("--metric-") and _named("--metric")


def _cli_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names] if node.module == "ragmeter.cli" else [node.module]
            found.update(n for n in names if n.startswith("ragmeter.cli"))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ragmeter.cli"))
    return found


@pytest.mark.parametrize("module", sorted(p.name for p in CLI.glob("*.py") if p.name not in ("__init__.py", "main.py")))
def test_command_modules_import_only_the_app(module):
    allowed = set() if module == "app.py" else {"ragmeter.cli.app"}
    assert _cli_imports(CLI / module) <= allowed


def test_main_assembles_every_command_module():
    modules = {f"ragmeter.cli.{p.stem}" for p in CLI.glob("*_cmd.py")}
    assert _cli_imports(CLI / "main.py") == modules | {"ragmeter.cli.app"}


def test_eval_options_are_settings_fields():
    """Every option of ``eval`` is a Settings field, except the output format and --resume."""
    (command,) = [c for n, c in _commands().items() if n == "eval"]
    names = {p.name for p in command.params if p.name != "help"} - {"ctx"}
    assert names - set(FIELDS) == {"fmt", "resume"}


def test_k_0_is_the_whole_list_and_the_help_says_so(cli, warranty, runs_dir):
    out = cli("eval", warranty / "dataset.jsonl", "--k", "0", "-m", "recall,mrr", "--format", "json")
    assert out.exit_code == 0, out.output
    assert list(json.loads(out.stdout)["metrics"]) == ["recall", "reciprocal_rank"]  # no @k: the whole list
    (run,) = runs_dir.iterdir()
    assert json.loads((run / "setup.json").read_text())["options"]["k"] is None  # the library never sees 0
    assert "0 = the whole list" in cli("eval", "--help").stdout
    refused = cli("eval", warranty / "dataset.jsonl", "--k", "-1")
    said = re.sub(r"[\s│]+", " ", refused.output)  # the message as one line, out of its box
    assert refused.exit_code == 2 and "or 0 for the whole list; got -1" in said
    assert "None" not in said  # the library's spelling, which the command line cannot take
    with pytest.raises(ValueError, match="k: must be a positive integer"):
        Settings(k=0)


def test_help_shows_the_extras_in_brackets(cli):
    text = cli("eval", "--help").stdout
    assert "ragmeter[local]" in text and "'ragmeter[ray]'" in text  # not eaten as rich markup


def _extras_named(command, options: bool = True) -> set[str]:
    """The extras a command's help text (and its options' with ``options``) names
    (``ragmeter[mlflow]``, or ``ragmeter\\[ray]`` escaped for rich)."""
    texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params if options]
    return {m for t in texts for m in re.findall(r"ragmeter\\?\[(\w+)\]", t)}


@pytest.mark.parametrize("name", [""] + sorted(_commands()))
def test_every_help_shows_the_extras_in_brackets(name):
    """Rich reads ``[mlflow]`` as a markup tag and drops it: ``pip install 'ragmeter'`` would be
    the wrong command. Every extra a help text names must be printed with its brackets, in the
    command's own help and in the command list of its group."""
    from typer.testing import CliRunner

    command = _commands()[name] if name else typer.main.get_command(app)
    args = [*name.split(), "--help"]
    out = CliRunner().invoke(app, args, env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    subcommands = getattr(command, "commands", {}).values()
    for extra in _extras_named(command) | {e for c in subcommands for e in _extras_named(c, options=False)}:
        assert f"ragmeter[{extra}]" in text, f"ragmeter {name} --help eats [{extra}]"
    assert "pip install 'ragmeter')" not in text


@pytest.mark.parametrize("name", sorted(_commands()))
def test_usage_lines_name_arguments_in_capitals_without_braces(name):
    """Trial 2: ``ragmeter report --help`` printed ``Usage: ragmeter report [OPTIONS] {run}``,
    typer's braces read as literal ones. Arguments read as click writes them: ``RUN``, ``[DATASET]``."""
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, [*name.split(), "--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
    usage = next(line for line in out.output.splitlines() if "Usage:" in line)
    assert "{" not in usage and "}" not in usage, usage
    assert usage.split("[OPTIONS]")[1] == usage.split("[OPTIONS]")[1].upper(), usage


def test_report_usage_names_its_run_argument(cli):
    assert re.search(r"Usage: \S+ report \[OPTIONS\] RUN\s", cli("report", "--help").stdout)
    assert re.search(r"Usage: \S+ trec \[OPTIONS\] QRELS RUN\s", cli("trec", "--help").stdout)
