"""The manual as the tests read it: README.md, the bundled sample's README and every page of the
documentation site (``docs/**/*.md``, hand-written; the references ``docs/gen/`` writes at build
time are the code's own words and are checked by building the site).

A fact the tests hold the manual to may sit on any page: ``text()`` is all of them, ``section()``
finds a heading on whichever page has it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    """README.md, docs/ page by page (sorted), then examples/warranty/README.md."""
    return [README, *sorted((ROOT / "docs").rglob("*.md")), ROOT / "examples" / "warranty" / "README.md"]


def name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def text() -> str:
    """Every page, one after the other."""
    return "\n\n".join(p.read_text(encoding="utf-8") for p in pages())


def section(heading: str) -> str:
    """The section under the heading that starts with ``heading`` (``## Your data`` ...), on
    whichever page holds it, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    for page in pages():
        lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
        fenced = _in_fence(lines)
        for i, line in enumerate(lines):
            if line.startswith(heading) and not fenced[i]:
                end = next((j for j in range(i + 1, len(lines))
                            if not fenced[j] and re.match(rf"#{{1,{level}}} ", lines[j])), len(lines))
                return "".join(lines[i:end])
    raise AssertionError(f"no page of the manual has the heading {heading!r}")


def _in_fence(lines: list[str]) -> list[bool]:
    """Whether each line is inside a fenced code block (a comment there is no heading)."""
    inside, out = False, []
    for line in lines:
        fence = line.lstrip().startswith("```")
        out.append(inside or fence)
        if fence:
            inside = not inside
    return out
