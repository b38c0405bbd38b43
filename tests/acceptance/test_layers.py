"""The package layering, checked on every module's imports (module level, inside functions, under
``TYPE_CHECKING``, and ``importlib.import_module`` / ``__import__`` of a literal name or of an
f-string's literal prefix): a module imports only from its own layer or below, packages form no
cycle, and no module imports another module's private name.

The layer order is written here, once (DESIGN.md: core <- io, judges, ledger, embeddings, records,
actions <- evidence <- metrics, trec <- engine <- analysis, trust <- report, runs, live, label, testset <- cli).
``ragmeter/__init__.py`` is the facade that names the public API and is left out.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import ragmeter

LAYERS = (
    ("_version", "_lazy", "core"),
    ("io", "judges", "ledger", "embeddings", "records", "actions"),
    ("evidence",),
    ("metrics", "trec"),
    ("engine",),
    ("analysis", "trust"),
    ("report", "runs", "live", "label", "testset", "testing", "pytest_plugin"),
    ("cli", "__main__"),
)
LAYER = {package: level for level, packages in enumerate(LAYERS) for package in packages}

PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str]] = set()

SRC = Path(ragmeter.__file__).parent


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str | None:
    """``ragmeter.engine.planner`` -> ``engine``; the facade ``ragmeter`` -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _dynamic_target(node: ast.Call) -> str | None:
    """The module an ``import_module(...)`` / ``__import__(...)`` call names: a string literal, or
    an f-string's literal prefix up to its last dot (``f"ragmeter.records.{home}"``)."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        prefix = str(arg.values[0].value)
        if prefix.endswith("."):
            return prefix + "*"  # some module of that package
        return prefix.rpartition(".")[0] if "." in prefix else None
    return None


def _imports(path: Path, here: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names imported from it, line) for every ragmeter import in the file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            target = _dynamic_target(node)
            if target is not None and target.split(".")[0] == "ragmeter":
                out.append((target, [], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.split(".")[0] == "ragmeter"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                package = here.split(".")[: len(here.split(".")) - (path.name != "__init__.py")]
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] == "ragmeter":
                out.append((module, [a.name for a in node.names], node.lineno))
    return out


def _graph(root: Path = SRC) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """Package -> imported package -> where; and every private name imported from another module."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    private: list[str] = []
    for path in sorted(root.rglob("*.py")):
        here = _module_name(path, root)
        source = _package(here)
        if source is None:
            continue  # the facade
        for module, names, line in _imports(path, here):
            targets = [_package(module)] if module != "ragmeter" else [n for n in names if n in LAYER]
            for target in targets:  # ``from ragmeter import engine`` imports the package engine
                if target is not None and target != source:
                    edges[source][target].append(f"{here}:{line}")
            for name in names:
                if name.startswith("_") and not name.startswith("__") and module != here \
                        and (here, name) not in PRIVATE_IMPORTS_ALLOWED:
                    private.append(f"{here}:{line} imports {module}.{name}")
    return edges, private


def _module_edges(root: Path = SRC) -> dict[str, set[str]]:
    """Module -> the ragmeter modules it imports (``from pkg import sub`` is the submodule ``sub``;
    ``from pkg import name`` is the package's ``__init__``)."""
    paths = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    edges: dict[str, set[str]] = defaultdict(set)
    for here, path in paths.items():
        if _package(here) is None:
            continue  # the facade
        for module, names, _ in _imports(path, here):
            if module.endswith(".*"):  # an f-string's prefix (``f"ragmeter.metrics.{family}"``): a plug-in
                continue  # module of that package, not its __init__; the layer check still sees the package
            subs = {f"{module}.{n}" for n in names} & set(paths)
            targets = subs | ({module} if module in paths and (not names or len(subs) < len(names)) else set())
            edges[here] |= targets - {here}
    return edges


def _reachable_cycles(graph: dict[str, set[str]]) -> list[str]:
    cycles = set()
    for start in graph:  # a node that can reach itself is on a cycle
        seen, stack = set(), [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    cycles.add(" -> ".join(trail + [start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, trail + [nxt]))
    return sorted(cycles)


def module_cycles(root: Path = SRC) -> list[str]:
    return _reachable_cycles(_module_edges(root))


def upward_imports(root: Path = SRC) -> list[str]:
    edges, _ = _graph(root)
    return [f"{source} -> {target} ({', '.join(where[:3])})" for source, targets in edges.items()
            for target, where in targets.items() if LAYER[target] > LAYER[source]]


def package_cycles(root: Path = SRC) -> list[str]:
    edges, _ = _graph(root)
    return _reachable_cycles({source: set(targets) for source, targets in edges.items()})


def test_every_package_has_a_layer():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    assert packages | modules <= set(LAYER), f"no layer for {sorted((packages | modules) - set(LAYER))}"
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and any(p.rglob("*.py"))}
    assert folders <= packages, f"Python folders without __init__.py: {sorted(folders - packages)}"


@pytest.mark.slow
def test_imports_only_look_down():
    found = upward_imports()
    assert not found, "imports that look up:\n" + "\n".join(found)


@pytest.mark.slow
def test_no_cycle_between_packages():
    found = package_cycles()
    assert not found, "package cycles:\n" + "\n".join(found)


def test_no_cycle_between_modules():
    """Inside a package too (a package's ``__init__`` and a module it imports, two modules that
    import each other lazily): a cycle is one job split in two places."""
    found = module_cycles()
    assert not found, "module cycles:\n" + "\n".join(found)


@pytest.mark.slow
def test_no_private_name_crosses_modules():
    _, private = _graph()
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def test_the_checks_see_what_they_look_for(tmp_path):
    """Not vacuous: a planted tree with an upward import (also lazy and type-only), a cycle
    between two packages of one layer, and a private import is reported on each count."""
    root = tmp_path / "ragmeter"
    files = {
        "__init__.py": "from ragmeter.cli import app\n",  # the facade may name anything
        "core/__init__.py": "",
        "metrics/__init__.py": "def f():\n    from ragmeter.engine import evaluate\n",
        "engine/__init__.py": "",
        "io/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragmeter.evidence import x\n",
        "judges/__init__.py": "from ragmeter.ledger.sqlite import _private\n",
        "ledger/__init__.py": "from tests import sqlite\n",
        "ledger/sqlite.py": "from ..judges import y\n",
        # the calls that hide an import from import statements: a literal name, an f-string, __import__
        "core/evaluation.py": "import importlib\ndef f():\n    return importlib.import_module('ragmeter.runs.x')\n",
        "core/lazy.py": "from importlib import import_module\nimport_module(f'ragmeter.report.{name}')\n",
        "records/__init__.py": "def g():\n    return __import__('ragmeter.cli')\n",
        "records/facade.py": "import importlib\nimportlib.import_module(f'ragmeter.records.{home}')\n",  # its own
        "runs/__init__.py": "",
        "runs/a.py": "from ragmeter.runs.b import f\n",
        "runs/b.py": "def f():\n    from ragmeter.runs import a\n",  # lazily: a cycle still
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    up = upward_imports(root)
    assert sorted(u.split(" (")[0] for u in up) == ["core -> report", "core -> runs", "io -> evidence",
                                                    "metrics -> engine", "records -> cli"]
    assert package_cycles(root) == ["judges -> ledger -> judges", "ledger -> judges -> ledger"]
    assert "ragmeter.runs.a -> ragmeter.runs.b -> ragmeter.runs.a" in module_cycles(root)
    assert _graph(root)[1] == ["ragmeter.judges:1 imports ragmeter.ledger.sqlite._private"]


def test_the_architecture_page_draws_every_package_and_this_order():
    """docs/architecture.md (the tree as it is) names each package and draws LAYERS as they are."""
    page = (SRC.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted(p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert not [p for p in packages if f"`{p}/`" not in page], "packages docs/architecture.md does not name"
    shown = [[p for p in layer if not p.startswith("_") and p != "pytest_plugin"] for layer in LAYERS]
    order = "  <-  ".join(", ".join(layer) for layer in shown if layer)
    assert " ".join(order.split()) in " ".join(page.split()), "docs/architecture.md draws another layer order"
