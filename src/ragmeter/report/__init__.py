"""Rendering results: plain tables and JSON."""

from ragmeter.report.table import render_table

__all__ = ["render_table"]
