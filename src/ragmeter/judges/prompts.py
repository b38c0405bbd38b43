"""Named, versioned prompts kept as text files under ``ragmeter/prompts/``.

A prompt file has a small header, then a system and a user section::

    id: claims.verify
    version: 1
    --- system
    You check claims against evidence ...
    --- user
    EVIDENCE:
    {{evidence}}

``{{name}}`` placeholders are filled from the inputs (no other templating, so JSON braces in
a prompt are safe). The sha256 of the file's text is the prompt's hash: it goes into every
judgment's ledger key and every score's provenance, so editing a prompt can never reuse
old judgments silently.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ragmeter.core.errors import InvalidParameterError

_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Prompt:
    id: str
    version: int
    system: str
    user: str
    hash: str

    @classmethod
    def from_text(cls, text: str) -> Prompt:
        header, _, body = text.partition("--- system\n")
        meta = dict(line.split(":", 1) for line in header.strip().splitlines() if ":" in line)
        system, _, user = body.partition("--- user\n")
        if "id" not in meta or "version" not in meta or not user:
            raise InvalidParameterError("a prompt needs 'id:' and 'version:' lines, then '--- system' and '--- user'")
        return cls(id=meta["id"].strip(), version=int(meta["version"]), system=system.strip(), user=user.strip(),
                   hash=hashlib.sha256(text.encode()).hexdigest()[:16])

    @property
    def placeholders(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.system + self.user))

    def render(self, inputs: Mapping[str, Any]) -> tuple[str, str]:
        missing = self.placeholders - set(inputs)
        if missing:
            raise InvalidParameterError(f"prompt {self.id}: missing inputs {sorted(missing)}")

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(inputs[m.group(1)]), text)

        return fill(self.system), fill(self.user)


def load_prompt(prompt_id: str) -> Prompt:
    """Load ``prompts/<id>.txt`` shipped with ragmeter."""
    try:
        text = resources.files("ragmeter").joinpath("prompts").joinpath(f"{prompt_id}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidParameterError(f"no prompt named {prompt_id!r}") from None
    prompt = Prompt.from_text(text)
    if prompt.id != prompt_id:
        raise InvalidParameterError(f"prompts/{prompt_id}.txt declares id {prompt.id!r}")
    return prompt
