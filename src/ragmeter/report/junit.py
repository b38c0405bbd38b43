"""The gate's verdict as JUnit XML, the test report every CI system renders (Jenkins, GitLab,
GitHub Actions reporters, Azure Pipelines): one ``<testsuite name="ragmeter gate">`` with one
``<testcase>`` per bar (``classname`` ``ragmeter.gate.floor`` or ``ragmeter.gate.ceiling``, named
``recall@5 >= 0.7``) and per metric compared with the baseline (``ragmeter.gate.baseline``, named
after the metric), a ``<failure>`` in each that failed (its message the gate's failure line),
``<skipped>`` for a metric no sample was scored on in both runs, and the gate's text output as
``<system-out>``. When the gate cannot decide (exit 2: runs not comparable, a run it cannot read,
a bad bar), one ``<testcase>`` ``ragmeter.gate`` / ``gate`` holding an ``<error>`` that says why,
so a CI report step still finds a report. The layout is the one Apache Ant's JUnit task writes,
as its schema gives it (Windy Road's ``JUnit.xsd``, which the tests validate against).

Built with :mod:`xml.etree.ElementTree`, which escapes every text and attribute; characters XML
1.0 cannot hold at all (control characters other than tab, newline and return) are written as
``\\xNN``.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from ragmeter.analysis.gate import GateResult
from ragmeter.io.writer import write_output

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(text: object) -> str:
    """``text`` with the characters XML 1.0 cannot hold written as ``\\xNN`` (``\\uNNNN``)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 256 else f"\\u{ord(m[0]):04x}", str(text))


def _suite(*, tests: int, failures: int, errors: int, skipped: int, properties: dict[str, object]) -> ET.Element:
    """The ``<testsuite>`` element with its counts and ``<properties>``."""
    suite = ET.Element("testsuite", {
        "name": "ragmeter gate", "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
        "hostname": _clean(socket.gethostname() or "localhost"), "tests": str(tests),
        "failures": str(failures), "errors": str(errors), "skipped": str(skipped), "time": "0"})
    props = ET.SubElement(suite, "properties")
    for name, value in properties.items():
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    return suite


def _document(suite: ET.Element, text: str) -> str:
    """``suite`` with ``text`` as its ``<system-out>``, as an XML document."""
    ET.SubElement(suite, "system-out").text = _clean(text)
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def junit_xml(result: GateResult, *, run: str, baseline: str | None, max_drop: float, alpha: float,
              text: str = "") -> str:
    """The JUnit XML document (see the module)."""
    cases = result.cases
    failed = sum(1 for c in cases if c.failures)
    skipped = sum(1 for c in cases if c.skipped and not c.failures)
    suite = _suite(tests=len(cases), failures=failed, errors=0, skipped=skipped, properties={
        "run": run, "baseline": baseline or "", "mode": "significant-only" if result.significant_only else "max-drop",
        "max_drop": max_drop, "alpha": alpha, "passed": str(result.passed).lower()})
    for case in cases:
        element = ET.SubElement(suite, "testcase", {"classname": f"ragmeter.gate.{case.kind}",
                                                    "name": _clean(case.name), "time": "0"})
        if case.failures:
            failure = ET.SubElement(element, "failure", {"message": _clean("; ".join(case.failures)),
                                                         "type": "regression" if case.kind == "baseline" else
                                                         f"{case.kind} missed"})
            failure.text = _clean("\n".join([case.line, *case.failures]))
        elif case.skipped:
            ET.SubElement(element, "skipped", {"message": _clean(case.skipped)})
    return _document(suite, text)


def junit_error_xml(reason: str, *, kind: str, run: str, baseline: str | None) -> str:
    """The document for a gate that could not decide (exit 2): one test case in error whose
    message is ``the gate could not decide: <reason on one line>`` and whose text is the reason as
    printed; ``kind`` (the error's class, e.g. ``SetupMismatch``) is the error's type."""
    one_line = " ".join(reason.split()) or kind
    suite = _suite(tests=1, failures=0, errors=1, skipped=0, properties={
        "run": run, "baseline": baseline or "", "passed": "false", "decided": "false"})
    case = ET.SubElement(suite, "testcase", {"classname": "ragmeter.gate", "name": "gate", "time": "0"})
    error = ET.SubElement(case, "error", {"message": _clean(f"the gate could not decide: {one_line}"),
                                          "type": _clean(kind)})
    error.text = _clean(reason)
    return _document(suite, f"error: {reason}")


def write_junit(result: GateResult, path: str, **kw) -> None:
    """Write :func:`junit_xml` atomically to ``path``; a folder that cannot be written is a
    ``StorageError`` naming the file and ``--junit``."""
    write_output(path, junit_xml(result, **kw), what="JUnit report", option="--junit")


def write_junit_error(reason: str, path: str, **kw) -> None:
    """Write :func:`junit_error_xml` atomically to ``path`` (a ``StorageError`` as for :func:`write_junit`)."""
    write_output(path, junit_error_xml(reason, **kw), what="JUnit report", option="--junit")
