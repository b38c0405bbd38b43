"""A small configuration file (criteria, examples) read as JSON, or YAML with PyYAML installed,
into a value; every problem a located ``InvalidInputError``.

>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "pairs.json"); _ = open(p, "w").write('{"examples": []}')
>>> read_document(p, "examples")
{'examples': []}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.json_text import decode_json
from ragmeter.io.text import read_text


def read_document(path: str | Path, what: str) -> Any:
    """The file's JSON (any suffix but ``.yaml`` / ``.yml``) or YAML document; ``what`` (``criteria``,
    ``examples``) names its content in the messages."""
    path = Path(path)
    text = read_text(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        return decode_json(text, file=str(path))
    try:
        import yaml  # an optional dependency without stubs
    except ImportError:
        raise InvalidInputError(f"reading YAML {what} needs PyYAML", file=str(path),
                                fix=f"pip install pyyaml, or write the {what} as JSON") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InvalidInputError(f"not valid YAML ({getattr(exc, 'problem', None) or exc})", file=str(path),
                                line=mark.line + 1 if mark is not None else None) from None
    except (RecursionError, ValueError) as exc:
        raise InvalidInputError(f"YAML that cannot be read ({type(exc).__name__})", file=str(path),
                                fix=f"write a flat list of {what}") from None
