"""Reading text files strictly: UTF-8 or a clear error naming the line; empty files refused."""

from __future__ import annotations

from pathlib import Path

from ragmeter.core.errors import InvalidInputError


def read_text(path: str | Path) -> str:
    """Return the file's text, or raise ``InvalidInputError`` naming the file and line.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt"); _ = open(p, "wb").write(b"ok\\n\\xff\\n")
    >>> read_text(p)
    Traceback (most recent call last):
    ...
    ragmeter.core.errors.InvalidInputError: ...x.txt, line 2: not valid UTF-8 (byte 0xff at column 1). Fix: save...
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InvalidInputError("file not found", file=str(path), fix="check the path") from None
    except IsADirectoryError:
        raise InvalidInputError("is a directory, not a file", file=str(path)) from None
    except PermissionError:
        raise InvalidInputError("permission denied", file=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InvalidInputError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column})",
            file=str(path), line=line, fix="save the file as UTF-8",
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InvalidInputError("the file is empty", file=str(path), fix="give a file with at least one record")
    return text
