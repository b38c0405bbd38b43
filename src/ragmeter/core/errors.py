"""Typed errors. Each message names where the problem is (file, line, record, field) and the fix.

The hierarchy mirrors what a caller can do about it:

- ``InvalidInputError``: the data is wrong (a file, a row, a field). Fix the data.
  ``UnsupportedInputError`` (also a ``TypeError``): data of a type ragmeter does not read.
- ``InvalidParameterError``: a metric name or option is wrong. Fix the call.
- ``JudgeUnavailableError``: a judge backend cannot be reached or is not configured.
- ``JudgeOutputError``: a judge's reply never validated; the judge records that item as
  failed (with the reply) and the run goes on.
- ``StorageError``: a file ragmeter writes or keeps (a run directory, the ledger) cannot be
  used: the disk is full, the folder is not writable, the SQLite file is damaged.
"""

from __future__ import annotations


class RagmeterError(Exception):
    """Base class of every error ragmeter raises on purpose."""


class InvalidInputError(RagmeterError, ValueError):
    """Malformed input data, with its location.

    >>> str(InvalidInputError("retrieved must be a list", file="d.jsonl", line=3, record="q9", field="retrieved"))
    'd.jsonl, line 3 (id "q9"), field "retrieved": retrieved must be a list'
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        row: int | None = None,
        record: str | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.file, self.line, self.row, self.record, self.field, self.fix = file, line, row, record, field, fix
        self.problem = message
        where = []
        if file is not None:
            where.append(str(file))
        if line is not None:
            where.append(f"line {line}")
        if row is not None:  # a record of an in-memory table (a DataFrame, a list): 1-based
            where.append(f"row {row}")
        head = ", ".join(where)
        if record is not None:
            head = f'{head} (id "{record}")' if head else f'record "{record}"'
        if field is not None:
            head = f'{head}, field "{field}"' if head else f'field "{field}"'
        text = f"{head}: {message}" if head else message
        if fix:
            text = f"{text}. Fix: {fix}"
        super().__init__(text)


class UnsupportedInputError(InvalidInputError, TypeError):
    """Data of a type ragmeter does not read, naming the argument and the types it takes.

    >>> str(UnsupportedInputError("data", 42, ("a path", "a list of dicts")))
    'data: got int; accepted: a path, a list of dicts'
    """

    def __init__(self, argument: str, value: object, accepted: tuple[str, ...]) -> None:
        self.argument, self.accepted = argument, accepted
        super().__init__(f"{argument}: got {type(value).__name__}; accepted: {', '.join(accepted)}")


class InvalidParameterError(RagmeterError, ValueError):
    """A metric name, parameter or option that cannot be used."""


class JudgeUnavailableError(RagmeterError):
    """A judge backend cannot be reached or is not configured."""


class JudgeOutputError(RagmeterError):
    """A judge reply that did not validate against its schema after the allowed re-asks.
    ``raw``: the last reply, kept for the record."""

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class StorageError(RagmeterError):
    """An OS or SQLite failure on a file ragmeter keeps, with the file and the fix.

    >>> str(StorageError("database disk image is malformed", file="runs/ledger.sqlite", fix="move it aside"))
    'runs/ledger.sqlite: database disk image is malformed. Fix: move it aside'
    """

    def __init__(self, message: str, *, file: str | None = None, fix: str | None = None) -> None:
        self.file, self.fix, self.problem = file, fix, message
        text = f"{file}: {message}" if file else message
        super().__init__(f"{text}. Fix: {fix}" if fix else text)


def os_error_fix(exc: OSError, option: str = "--runs-dir / --ledger") -> str:
    """What to do about an OS error writing a file, by its errno; ``option`` names the option
    that chooses the path (``--out`` for an import).

    >>> import errno
    >>> os_error_fix(OSError(errno.ENOENT, "No such file or directory"), "--out")
    'check that the path exists and can be written, or choose another with --out'
    """
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = "--runs-dir/--ledger" if option == "--runs-dir / --ledger" else option
        return f"free some disk space (or point {where} at a disk with room) and run again"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"make the folder writable, or choose another with {option}"
    return f"check that the path exists and can be written, or choose another with {option}"


class MissingExtraError(RagmeterError, ImportError):
    """A feature needs a package that ragmeter's light core install leaves out; the message
    names the ``pip install`` that brings it.

    >>> str(MissingExtraError("ragmeter trec", "trec", "pyarrow"))
    "ragmeter trec needs pyarrow, which the core install leaves out. Fix: pip install 'ragmeter[trec]'"
    """

    def __init__(self, feature: str, extra: str, module: str, *, packages: str | None = None) -> None:
        self.feature, self.extra, self.module = feature, extra, module
        self.install = f"pip install 'ragmeter[{extra}]'"
        alone = f" (or the packages alone: pip install {packages})" if packages else ""
        super().__init__(f"{feature} needs {module}, which the core install leaves out. Fix: {self.install}{alone}",
                         name=module)


class RagmeterWarning(UserWarning):
    """Base class of every warning ragmeter gives (filter them with ``warnings.filterwarnings``)."""


class LowCoverageWarning(RagmeterWarning):
    """A measure scored fewer of the samples than ``Settings.min_coverage``: its mean stands on
    the rest, and the message says why they were not scored."""


class NothingRetrievedWarning(RagmeterWarning):
    """No sample has a retrieved list (questions imported without a run, a generated test set),
    so every rank metric is 0, which is right for a retriever that returned nothing and almost
    never what was meant; the message says what to give."""
