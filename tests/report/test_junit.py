"""``ragmeter gate --junit``: JUnit XML that the published JUnit schema (Apache Ant's, as Windy Road's
JUnit.xsd gives it, vendored in tests/reference/junit) accepts, one test case per bar and per
metric compared, a failure in each that failed, whatever strings the runs hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.analysis.gate import GateCase, GateResult
from ragmeter.report.junit import junit_error_xml, junit_xml
from tests.analysis.test_compare import make_run
from tests.hostile import FUZZ, HOSTILE_TEXT

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parents[1] / "reference" / "junit" / "JUnit.xsd")


def test_gate_junit_is_valid_and_has_a_case_per_bar_and_metric(cli, tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.9] * 40, "recall@5": [0.8] * 40, "mrr@5": [1.0] * 40})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.5] * 40, "recall@5": [0.8] * 40, "mrr@5": [1.0] * 40})
    out = tmp_path / "gate.xml"
    done = cli("gate", b.path, "--baseline", a.path, "--min", "recall@5=0.9", "--min", "mrr@5=0.5",
               "--junit", out)
    assert done.exit_code == 1, done.output
    SCHEMA.validate(str(out))
    suite = ET.parse(out).getroot()
    assert suite.tag == "testsuite" and suite.get("name") == "ragmeter gate"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "2", "0")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert set(cases) == {("ragmeter.gate.baseline", "ndcg@5"), ("ragmeter.gate.baseline", "recall@5"),
                          ("ragmeter.gate.baseline", "mrr@5"), ("ragmeter.gate.floor", "recall@5 >= 0.9"),
                          ("ragmeter.gate.floor", "mrr@5 >= 0.5")}
    ndcg = cases[("ragmeter.gate.baseline", "ndcg@5")].find("failure")
    assert ndcg is not None and ndcg.get("message").startswith("ndcg@5 dropped 0.400 (0.900 -> 0.500), more than "
                                                               "the allowed 0.02; significant (p=")
    assert cases[("ragmeter.gate.floor", "recall@5 >= 0.9")].find("failure").get("message") == \
        "recall@5 0.800 is below its floor 0.9 (higher is better)"
    assert cases[("ragmeter.gate.floor", "mrr@5 >= 0.5")].find("failure") is None
    assert suite.find("system-out").text.startswith("gate failed:")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["mode"] == "max-drop" and props["max_drop"] == "0.02" and props["passed"] == "false"
    passed = cli("gate", a.path, "--baseline", a.path, "--junit", out, "--significant-only")
    assert passed.exit_code == 0
    SCHEMA.validate(str(out))
    suite = ET.parse(out).getroot()
    assert suite.get("failures") == "0" and not list(suite.iter("failure"))
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["mode"] == "significant-only"


def test_a_metric_not_compared_is_skipped(cli, tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [None, None]})
    b = make_run(tmp_path / "b", {"ndcg@5": [None, None]})
    out = tmp_path / "gate.xml"
    assert cli("gate", b.path, "--baseline", a.path, "--junit", out).exit_code == 0
    SCHEMA.validate(str(out))
    (case,) = ET.parse(out).getroot().iter("testcase")
    assert case.find("skipped").get("message") == "no sample scored in both runs (n=0), not compared"


def test_junit_that_cannot_be_written_is_a_usage_error(cli, tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.5]})
    done = cli("gate", a.path, "--baseline", a.path, "--junit", tmp_path / "no" / "such" / "gate.xml")
    assert done.exit_code == 2 and "--junit" in done.output and "Traceback" not in done.output



def _error_case(out):
    """The one test case of a gate that could not decide, after checking the document."""
    SCHEMA.validate(str(out))
    suite = ET.parse(out).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")
    (case,) = suite.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("ragmeter.gate", "gate")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["passed"] == "false"
    return case.find("error")


def test_runs_not_comparable_still_leave_a_junit_error(cli, tmp_path):
    """Exit 2 (the runs differ in their testset) writes one test case in error saying why, over
    whatever report an earlier gate left."""
    a = make_run(tmp_path / "a", {"ndcg@5": [0.5, 0.6]}, testset="t1")
    b = make_run(tmp_path / "b", {"ndcg@5": [0.5, 0.6]}, testset="t2")
    out = tmp_path / "gate.xml"
    assert cli("gate", a.path, "--baseline", a.path, "--junit", out).exit_code == 0
    done = cli("gate", b.path, "--baseline", a.path, "--junit", out)
    assert done.exit_code == 2 and "not comparable" in done.output, done.output
    error = _error_case(out)
    assert error.get("type") == "SetupMismatch"
    assert error.get("message").startswith("the gate could not decide: the runs are not comparable: ")
    assert "--allow-setup-change" in error.text
    assert not list(tmp_path.glob(".gate.xml.*"))  # written through a temporary file, none left behind


def test_an_unreadable_run_leaves_a_junit_error(cli, tmp_path):
    out = tmp_path / "gate.xml"
    done = cli("gate", tmp_path / "missing", "--junit", out)
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    error = _error_case(out)
    assert "not a ragmeter run directory" in error.get("message")


@pytest.mark.parametrize("args, option", [(["--min", "recall@5"], "--min"), (["--max-drop", "-1"], "--max-drop")])
def test_a_usage_error_in_the_bars_leaves_a_junit_error(cli, tmp_path, args, option):
    """A usage error found after the options are parsed keeps its usage line and exit 2, and the
    report names the option."""
    a = make_run(tmp_path / "a", {"ndcg@5": [0.5]})
    out = tmp_path / "gate.xml"
    done = cli("gate", a.path, *args, "--junit", out)
    assert done.exit_code == 2 and "Usage:" in done.output, done.output
    error = _error_case(out)
    assert error.get("type") == "BadParameter" and option in error.get("message")


def test_a_junit_error_cannot_be_written_either(cli, tmp_path):
    """Exit 2 with a --junit in no folder: both errors are said, no traceback."""
    done = cli("gate", tmp_path / "missing", "--junit", tmp_path / "no" / "gate.xml")
    assert done.exit_code == 2 and "--junit" in done.output and "not a ragmeter run" in done.output
    assert "Traceback" not in done.output


def test_the_error_document_escapes_any_reason():
    doc = junit_error_xml("\x00<b>&\"'\n  second line", kind="<Kind>", run="<r>", baseline=None)
    SCHEMA.validate(doc)
    error = ET.fromstring(doc.encode()).find("testcase/error")
    assert error.get("message") == "the gate could not decide: \\x00<b>&\"' second line"
    assert error.text == "\\x00<b>&\"'\n  second line"


@FUZZ
@given(st.lists(st.one_of(HOSTILE_TEXT, st.text(max_size=12)), min_size=1, max_size=4))
def test_any_string_is_escaped_into_valid_junit(names):
    """Names and messages from the data (a metric's name, a criterion's text) with markup, quotes,
    control characters and lone surrogates: the document stays valid and says them."""
    cases = [GateCase("floor", f"{name} >= 0.5", f"<b>{name}</b>", failures=[f'"{name}" & <x>']) for name in names]
    result = GateResult(False, [f for c in cases for f in c.failures], None, cases=cases)
    doc = junit_xml(result, run="<run>&", baseline=None, max_drop=0.02, alpha=0.05, text="\x00</system-out>")
    SCHEMA.validate(doc)
    suite = ET.fromstring(doc.encode())
    assert suite.get("failures") == str(len(names)) and "</system-out>" in suite.find("system-out").text


@pytest.mark.parametrize("bad", ["\x00", "\x1b", "\ud800", "\uffff"])
def test_characters_xml_cannot_hold_are_written_as_escapes(bad):
    case = GateCase("ceiling", f"m{bad} <= 0.1", "line", failures=[f"m{bad}"])
    doc = junit_xml(GateResult(False, case.failures, None, cases=[case]), run="r", baseline="b", max_drop=0.0,
                    alpha=0.05)
    SCHEMA.validate(doc)
    assert bad not in doc and ("\\x" in doc or "\\u" in doc)
