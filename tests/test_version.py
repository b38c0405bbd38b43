"""The version literal is the one the package was installed with, and the top level is lazy."""

import subprocess
import sys
from importlib.metadata import version

import pytest

import ragmeter


def test_version_literal_matches_the_installed_metadata():
    assert ragmeter.__version__ == version("ragmeter")


def test_the_ci_example_pins_this_version():
    """The article: "pin the library version in CI"; the example installed an unpinned ragmeter."""
    from pathlib import Path

    workflow = (Path(__file__).parent.parent / "examples" / "ci" / "rag-eval.yml").read_text()
    installs = [line.strip() for line in workflow.splitlines() if "pip install" in line]
    assert installs == [f'- run: pip install "ragmeter=={ragmeter.__version__}"']


def test_public_names_resolve_and_unknown_names_fail():
    for name in ragmeter.__all__:
        assert getattr(ragmeter, name) is not None
    assert ragmeter.evaluate is ragmeter.engine.evaluate
    try:
        _ = ragmeter.no_such_name
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown attribute resolved")


@pytest.mark.parametrize("entry", ["ragmeter.trec.evaluate", "ragmeter.cli.main"])
def test_trec_entry_points_do_not_import_the_engine_or_embedders(entry):
    code = (f"import sys, {entry}; "
            "print(sorted(m for m in sys.modules if m.startswith(('ragmeter.engine', 'ragmeter.embeddings', "
            "'ragmeter.judges', 'onnxruntime', 'httpx'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
