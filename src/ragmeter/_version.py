"""The ragmeter version, stamped into every score's provenance.

A literal (pyproject.toml reads it from here), not ``importlib.metadata``: that import
alone costs 60 ms at every start. tests/test_version.py checks it against the installed
package's metadata.
"""

__version__ = "0.1.0"
