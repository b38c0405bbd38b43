"""The documentation site builds with ``mkdocs build --strict`` (a broken link, anchor or page left
out of the navigation fails), with the network cut off (``unshare -n``: a build that fetched a font,
a social card or a repository's star count would fail), and what it built holds the references the
code defines: an entry for every metric ``ragmeter metrics`` lists, a page for every command with
each of its options, the three pictures, and no page that asks for anything beyond the site.

The commands the pages show are run by ``test_readme_commands.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

ENV = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}  # two notices printed at every build


def _needs(what: str, why: str) -> None:
    if os.environ.get("RAGMETER_CI"):
        pytest.fail(f"{what} is missing: {why}")
    pytest.skip(f"{what} is missing: {why}")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        _needs("mkdocs", "pip install -e '.[docs]' (the [test] extra holds it)")
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        _needs("chromium", "apt-get install chromium: the build takes the docs' screenshots with it")
    out = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    # a network namespace of its own with only the loopback up (the labeling page's screenshot is
    # served on 127.0.0.1): a fetch from anywhere else fails the build
    offline = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    if shutil.which("unshare") and shutil.which("ip") and subprocess.run(
            [*offline, "true"], capture_output=True).returncode == 0:
        cmd = [*offline, *cmd]
    elif os.environ.get("RAGMETER_CI"):
        pytest.fail("unshare -n (util-linux) or ip (iproute2) is missing: the docs build cannot be checked offline")
    built = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, env={**os.environ, **ENV})
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-6000:]
    assert "WARNING" not in built.stderr, built.stderr[-6000:]
    return out


@pytest.mark.slow
def test_every_metric_has_its_entry(site):
    from ragmeter.metrics import REGISTRY

    page = (site / "reference" / "metrics.html").read_text()
    for spec in REGISTRY.values():
        entry = page.split(f'<h3 id="{spec.name}">', 1)
        assert len(entry) == 2, f"{spec.name} has no entry in the metric reference"
        text = entry[1].split("<h3 ", 1)[0]
        for said in ("Formula", "Source", "Range and direction", "Evidence needed", "Undefined (not computed) when"):
            assert f"<strong>{said}</strong>" in text, (spec.name, said)
        for param in spec.params:
            assert f"<code>{param}</code>" in text, (spec.name, param)
        for alias in spec.aliases:
            assert f"<code>{alias}</code>" in text, (spec.name, alias)


@pytest.mark.slow
def test_every_command_has_its_page_with_every_option(site):
    from tests.cli.test_app import _commands

    for name, command in _commands().items():
        page = site / "reference" / "cli" / f"{name.replace(' ', '-')}.html"
        assert page.is_file(), f"ragmeter {name} has no page"
        text = page.read_text()
        for p in command.params:
            if p.param_type_name == "option" and p.name != "help":
                assert any(f"<code>{o}</code>" in text for o in p.opts), (name, p.opts)


@pytest.mark.slow
def test_the_api_reference_is_written_from_the_docstrings(site):
    import ragmeter

    page = (site / "reference" / "api.html").read_text()
    first_line = ragmeter.evaluate.__doc__.strip().splitlines()[0]
    assert first_line in page and 'id="ragmeter.engine.evaluate.evaluate"' in page


@pytest.mark.slow
def test_the_pictures_are_made_from_the_bundled_sample(site):
    for name in ("report.png", "label.png"):
        data = (site / "images" / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000, name  # a screenshot, not the placeholder
    svg = (site / "images" / "turns.svg").read_text()
    assert svg.startswith("<svg") and "turn 3+" in svg and "ndcg@5" in svg


# what a page would fetch from elsewhere: a stylesheet, script, image, frame or font, or a CSS url()
FETCH = re.compile(r"""<(?:link|script|img|iframe|source|embed)\b[^>]*\b(?:href|src)=["']?(?:https?:)?//"""
                   r"""|url\(\s*["']?(?:https?:)?//|fonts\.(?:googleapis|gstatic)\.com""", re.IGNORECASE)


@pytest.mark.slow
def test_no_page_fetches_anything_beyond_the_site(site):
    offending = []
    for path in site.rglob("*"):
        if path.suffix in (".html", ".css"):
            offending += [f"{path.relative_to(site)}: {m.group(0)}" for m in FETCH.finditer(path.read_text())]
    assert offending == []
    assert FETCH.search('<link rel="stylesheet" href="https://fonts.googleapis.com/css">')  # the check can fail
    assert not FETCH.search('<a href="https://github.com/Arize-ai/openinference">')  # a link is no fetch


def test_the_site_config_keeps_the_build_offline():
    """What the offline build rests on, said in mkdocs.yml: no web fonts, no social or analytics
    plugins, no repository link (Material's header would fetch its star count), the offline plugin."""
    import yaml

    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # no !!python tags read
    assert config["theme"]["font"] == "false"
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]]
    assert "offline" in plugins and not {"social", "privacy", "blog"} & set(plugins)
    assert "repo_url" not in config and "analytics" not in config.get("extra", {})
    assert config["use_directory_urls"] == "false"  # pages open from file://
    # the offline plugin's search shim from the site, not from unpkg.com
    assert config["extra"]["polyfills"] == ["assets/iframe-worker-shim.js"]
    assert (ROOT / "docs" / "assets" / "iframe-worker-shim.js").read_text().count("http") == 0


def test_readme_links_lead_to_pages_that_exist():
    """README is read on its own (a repository's front page, PyPI): each link to a page of the
    manual names a file that exists, and an anchor one of its headings."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#([^)\s]+))?\)", readme)
    assert len(links) >= 10
    for path, anchor in links:
        target = ROOT / path
        assert target.is_file(), path
        if anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(), re.MULTILINE)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, (path, anchor)


def test_the_ci_guide_shows_the_workflow_file_as_the_repository_holds_it():
    """The guide is read as Markdown in the repository too, where an include (``--8<--``) shows
    as itself: it holds the file's text, and this keeps the two the same."""
    page = (ROOT / "docs" / "guides" / "ci-gate.md").read_text()
    workflow = (ROOT / "examples" / "ci" / "rag-eval.yml").read_text()
    assert "--8<--" not in page
    assert f"```yaml\n{workflow.rstrip()}\n```" in page
