"""MkDocs hooks (``mkdocs.yml``: ``hooks``).

The command-line reference's ``reference/cli/SUMMARY.md`` (written by ``cli_reference.py``) is
the navigation literate-nav reads for that folder, not a page: once read, it is left out of the
built site (it was built as ``reference/cli/SUMMARY.html``, a page nobody links to)."""

from __future__ import annotations

from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import InclusionLevel

NAV_FILES = ("reference/cli/SUMMARY.md",)


@event_priority(-200)  # after literate-nav (-100) has read the navigation from it
def on_files(files: Any, config: Any) -> Any:
    for path in NAV_FILES:
        found = files.get_file_from_path(path)
        if found is not None:
            found.inclusion = InclusionLevel.EXCLUDED
    return files
