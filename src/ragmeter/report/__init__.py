"""Rendering results: plain tables and JSON. (Names imported on first use: see
:mod:`ragmeter.core.lazy_names`.)"""

from typing import TYPE_CHECKING

from ragmeter.core.lazy_names import lazy_names

__all__ = ["render_table"]
__getattr__, __dir__ = lazy_names(__name__, {"render_table": "ragmeter.report.table"}, globals())

if TYPE_CHECKING:
    from ragmeter.report.table import render_table
