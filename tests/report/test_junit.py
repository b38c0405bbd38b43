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
from ragmeter.report.junit import junit_xml
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
