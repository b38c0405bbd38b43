"""A small configuration file (criteria, examples) read as JSON, or YAML with PyYAML installed,
into a value, its size and YAML aliases bounded; every problem a located ``InvalidInputError``.

>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "pairs.json"); _ = open(p, "w").write('{"examples": []}')
>>> read_document(p, "examples")
{'examples': []}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.yaml_file import check_size, has_yaml, load_yaml
from ragmeter.io.json_text import decode_json
from ragmeter.io.text import read_text


def read_document(path: str | Path, what: str) -> Any:
    """The file's JSON (any suffix but ``.yaml`` / ``.yml``) or YAML document; ``what`` (``criteria``,
    ``examples``) names its content in the messages. The file's size and a YAML document's aliases
    and what they expand to are bounded (:mod:`ragmeter.core.yaml_file`)."""
    path = Path(path)
    check_size(path, f"{what} file")
    text = read_text(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        return decode_json(text, file=str(path))
    if not has_yaml():
        raise InvalidInputError(f"reading YAML {what} needs PyYAML", file=str(path),
                                fix=f"pip install pyyaml, or write the {what} as JSON")
    return load_yaml(text, file=str(path), what=f"{what} file")  # bounded: size, aliases, expansion
