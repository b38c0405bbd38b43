"""The installed ragmeter version, stamped into every score's provenance."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragmeter")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
