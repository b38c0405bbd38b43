"""Common tests over the whole registry (after scikit-learn's test_common)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ragmeter
from ragmeter import InvalidParameterError, make_measure, parse_measure
from ragmeter.metrics import REGISTRY

NAMES = sorted(REGISTRY)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_rejects_bad_k(name, k):
    with pytest.raises(InvalidParameterError, match="k must be"):
        make_measure(name, k)


@pytest.mark.parametrize("name", NAMES)
def test_rejects_unknown_parameter(name):
    with pytest.raises(InvalidParameterError, match="unknown parameter 'bogus'"):
        parse_measure(f"{name}(bogus=1)@5")


@pytest.mark.parametrize("name", NAMES)
def test_rejects_k_below_one_in_a_string(name):
    with pytest.raises(InvalidParameterError, match="k must be >= 1"):
        parse_measure(f"{name}@0")


@pytest.mark.parametrize("name", NAMES)
def test_spec_is_documented(name):
    spec = REGISTRY[name]
    assert spec.definition and spec.source and spec.version >= 1
    module = importlib.import_module(spec.compute.__module__)
    assert module.__doc__ and ">>>" in module.__doc__, f"{module.__name__} needs a docstring example"


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_round_trips(name):
    spec = REGISTRY[name]
    for pname, param in spec.params.items():
        for value in param.choices or (param.default,):
            m = make_measure(name, 7 if spec.accepts_k else None, **{pname: value})
            assert str(parse_measure(str(m))) == str(m)
            assert parse_measure(str(m)).params == m.params


@pytest.mark.parametrize("name", [n for n in NAMES if not REGISTRY[n].accepts_k])
def test_judged_metrics_take_no_cutoff(name):
    with pytest.raises(InvalidParameterError, match="takes no cut-off"):
        parse_measure(f"{name}@5")


def test_unknown_metric_suggests_close_names():
    with pytest.raises(InvalidParameterError, match="did you mean 'ndcg'"):
        parse_measure("ndgc@5")


@pytest.mark.parametrize("bad", ["ndcg(discount='nope')", "ndcg(gain=3)", "__import__('os')", "ndcg(x=os)",
                                 "ndcg(discount='jk2002', base=1.0)", "", "a b"])
def test_rejects_malformed_strings(bad):
    with pytest.raises(InvalidParameterError):
        parse_measure(bad)


def _modules():
    for info in pkgutil.walk_packages(ragmeter.__path__, "ragmeter."):
        yield importlib.import_module(info.name)


@pytest.mark.parametrize("module", list(_modules()), ids=lambda m: m.__name__)
def test_docstring_examples_run(module, monkeypatch):
    monkeypatch.chdir(ragmeter.__path__[0] + "/../..")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


# the public API and its extension point, documented the numpy-doc way (issue 16): the sections
# each one must have, and a runnable example that test_docstring_examples_run runs
PUBLIC_API = {
    ("ragmeter", "evaluate"): ("Parameters", "Returns", "Raises", "Examples"),
    ("ragmeter", "load_dataset"): ("Parameters", "Returns", "Raises", "Examples"),
    ("ragmeter.trec", "evaluate_trec"): ("Parameters", "Returns", "Raises", "Examples"),
    ("ragmeter.judges", "Judge"): ("Parameters", "Examples"),
    ("ragmeter.judges", "Backend"): ("Examples",),
    ("ragmeter.judges.backends", "Backend.complete"): ("Parameters", "Returns", "Raises"),
    ("ragmeter", "EvaluationResult"): ("Parameters", "Raises", "Examples"),
    ("ragmeter.ledger", "Ledger"): ("Parameters", "Raises", "Examples"),
}


@pytest.mark.parametrize("home,name", list(PUBLIC_API), ids=lambda x: x)
def test_public_api_is_documented_numpy_style(home, name):
    obj = importlib.import_module(home)
    for part in name.split("."):
        obj = getattr(obj, part)
    doc = obj.__doc__ or ""
    lines = [line.strip() for line in doc.splitlines()]
    for section in PUBLIC_API[(home, name)]:
        at = lines.index(section) if section in lines else -1
        assert at >= 0 and set(lines[at + 1]) == {"-"}, f"{home}.{name}: no numpydoc section {section!r}"
    if "Examples" in PUBLIC_API[(home, name)]:
        found = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name) if t.examples]
        assert found, f"{home}.{name}: no runnable example"
        assert obj.__module__ in {m.__name__ for m in _modules()}, "the doctest test does not visit it"
