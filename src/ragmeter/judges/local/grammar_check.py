"""Which texts a generation grammar accepts as a prefix, read in Python: the local judge's fast
path for grammar-constrained greedy decoding.

llama.cpp's grammar sampler scores every token of the vocabulary against the grammar before the
greedy pick (85 ms per token for Qwen2.5's 151,936 tokens on 2 busy cores; the pick alone takes
0.5 ms). Greedy decoding under a grammar chooses the highest-scoring token the grammar allows,
so where the unconstrained argmax is allowed it *is* the constrained choice. ``PrefixCheck``
says whether a text is a prefix of some sentence of the grammar (``regex``'s partial matching of
a pattern equal to the grammar); the runtime takes the unconstrained argmax when the check
accepts it, advances the grammar with it, and asks the grammar sampler only otherwise. The
output is token for token what the grammar sampler alone gives, as long as the pattern accepts
no text the grammar refuses: a pattern is used only for the exact grammar text it was written
for (``checker``), and any doubt (an incomplete UTF-8 character, an empty piece) goes to the
grammar sampler.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex  # type: ignore[import-untyped]

_SPACE = r'(?:[ ]|\n{1,2}[ \t]{0,20})?'
_CHAR = r'(?:[^"\\\x7F\x00-\x1F]|\\(?:["\\bfnrt]|u[0-9a-fA-F]{4}))'
_STRING = rf'"{_CHAR}*"{_SPACE}'


def _string_list(key: str) -> str:
    items = rf'\[{_SPACE}(?:{_STRING}(?:,{_SPACE}{_STRING})*)?\]{_SPACE}'
    return rf'\{{{_SPACE}"{key}"{_SPACE}:{_SPACE}{items}\}}{_SPACE}'


# The GBNF that llama.cpp's JSON-Schema converter (cyllama 0.2.18) writes for
# {"claims": [string, ...]} (extract.CLAIM_LIST), and the same language as a pattern.
CLAIM_LIST_GBNF = (
    'char ::= [^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})\n'
    'claims ::= "[" space (string ("," space string)*)? "]" space\n'
    'claims-kv ::= "\\"claims\\"" space ":" space claims\n'
    'root ::= "{" space claims-kv "}" space\n'
    'space ::= | " " | "\\n"{1,2} [ \\t]{0,20}\n'
    'string ::= "\\"" char* "\\"" space')
PATTERNS = {CLAIM_LIST_GBNF: _string_list("claims")}


@dataclass
class PrefixCheck:
    """The bytes generated so far, and whether a next piece keeps them inside the grammar."""

    pattern: regex.Pattern
    raw: bytes = b""

    def allows(self, piece: bytes) -> bool:
        """Is ``raw + piece`` a prefix of a sentence of the grammar? False where unsure (an empty
        piece, a NUL, bytes that are not whole UTF-8 characters yet)."""
        if not piece or b"\x00" in piece:
            return False
        try:
            text = (self.raw + piece).decode("utf-8")
        except UnicodeDecodeError:
            return False
        return self.pattern.fullmatch(text, partial=True) is not None

    def complete(self) -> bool:
        """Is ``raw`` a whole sentence (so that the end of generation is allowed)?"""
        try:
            return self.pattern.fullmatch(self.raw.decode("utf-8")) is not None
        except UnicodeDecodeError:
            return False

    def take(self, piece: bytes) -> None:
        """Append a piece the grammar took."""
        self.raw += piece


def checker(grammar: str) -> PrefixCheck | None:
    """A fresh check for ``grammar`` where a pattern was written for exactly that text, else None."""
    pattern = PATTERNS.get(grammar.strip())
    return PrefixCheck(_compiled(pattern)) if pattern is not None else None


_CACHE: dict[str, regex.Pattern] = {}


def _compiled(pattern: str) -> regex.Pattern:
    if pattern not in _CACHE:
        _CACHE[pattern] = regex.compile(pattern, regex.DOTALL)
    return _CACHE[pattern]
