"""Keeping secrets out of everything ragmeter stores or prints.

Three kinds of secret are redacted (replaced by ``***``): the userinfo of a URL
(``http://user:pass@host`` -> ``http://***@host``); any text equal to a credential the
process holds: the value (8 characters or more) of an environment variable whose name says it
is one (``*_API_KEY``, ``*_ACCESS_KEY``, ``*_SECRET_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_PASSWORD``), or a key passed in; and a credential written out as an assignment in text
from outside (a server's stderr, an error message): ``NAME=value`` where the name says it is
one (``TOKEN=...``, ``db_password=...``, ``?api_key=...``), and the credentials of an
``Authorization: Bearer ...`` or ``Basic ...`` header. Applied to
setup.json, results, summaries, ledger contents, logs and error messages.

>>> redact("POST http://alice:s3cret@judge.local/v1 failed", "sk-abcdef123456")
'POST http://***@judge.local/v1 failed'
>>> redact("echoed sk-abcdef123456 back", "sk-abcdef123456")
'echoed *** back'
>>> redact("starting with ORDERS_TOKEN=tok-123 and Authorization: Bearer abc.def.ghi")
'starting with ORDERS_TOKEN=*** and Authorization: Bearer ***'
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

MASK = "***"
MIN_SECRET = 8  # shorter values are not treated as secrets (they would mask ordinary words)
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|ACCESS_?KEY|SECRET_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$",
                          re.IGNORECASE)
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<info>[^/?#@\s]+)@")
# NAME=value with a credential's name (the value up to a space, quote, & or ;), and a header's credentials
_ASSIGNED = re.compile(r"(?i)(?<![A-Za-z0-9])([A-Za-z0-9_.-]*?(?:API[_-]?KEY|ACCESS[_-]?KEY|SECRET[_-]?KEY|TOKEN|"
                       r"SECRET|PASSWORD|PASSWD))=(?!\*\*\*)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'&;,]+)")
_HEADER = re.compile(r"(?i)\b(Bearer|Basic)[ \t]+(?!\*\*\*)[A-Za-z0-9._~+/=-]{6,}")
_HINT = re.compile(r"(?:key|token|secret|password|passwd)=|bearer[ \t]|basic[ \t]")  # on the lowered text


def _hinted(text: str) -> bool:
    """Whether ``text`` may hold a written-out credential (``TOKEN=``, ``Bearer ``, ``Basic ``, in
    any case): a cheap pre-check. The lowered text against a lowercase pattern (a case-insensitive
    alternation took 0.2 ms a line: a second for a 4,000-turn conversation's run files)."""
    if "=" not in text:
        low = text.lower()
        if "bearer" not in low and "basic" not in low:
            return False
        return _HINT.search(low) is not None
    return _HINT.search(text.lower()) is not None


def _masked(text: str) -> str:
    """``text`` with URL userinfo and written-out credentials (``TOKEN=...``, ``Bearer ...``) masked."""
    if "@" in text:
        text = _USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", text)
    if _hinted(text):
        text = _HEADER.sub(lambda m: f"{m.group(1)} {MASK}", _ASSIGNED.sub(lambda m: f"{m.group(1)}={MASK}", text))
    return text


def held_secrets(extra: tuple[str | None, ...] = ()) -> list[str]:
    """The credentials this process holds (longest first, so no key is half-masked)."""
    found = {v for name, v in os.environ.items() if _SECRET_NAME.search(name) and v and len(v) >= MIN_SECRET}
    found.update(x for x in extra if x and len(x) >= MIN_SECRET)
    return sorted(found, key=len, reverse=True)


def redact_url(url: str | None) -> str | None:
    """``url`` without its userinfo (``http://u:p@h/v1`` -> ``http://***@h/v1``)."""
    return None if url is None else _USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", url)


def has_userinfo(url: str | None) -> bool:
    return url is not None and _USERINFO.search(url) is not None


def redact(text: str, *keys: str | None) -> str:
    """``text`` with URL userinfo and every held credential (and ``keys``) masked."""
    if not text:
        return text
    text = _masked(text)
    for secret in held_secrets(keys):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_value(value: Any, *keys: str | None) -> Any:
    """A JSON-like value with every string in it redacted (a new value; the input is unchanged)."""
    return _walker(held_secrets(keys))(value)


def redacted_json_lines(rows: Iterable[Any], *keys: str | None) -> Iterator[str]:
    """``json.dumps(redact_value(row), ensure_ascii=False)`` for each row, the held secrets read
    once. A row's JSON text shows every string in it, "://", "@", ``NAME=`` and any secret
    without JSON escapes as written: a text without a URL's "://" and "@" (userinfo needs both),
    without a credential's ``NAME=`` or ``Bearer `` and without a secret has nothing to redact
    and is kept as it is; any other row (or every row, when a
    secret holds a character JSON escapes) is redacted value by value."""
    redacted = json_line_redactor(*keys)
    for row in rows:
        yield redacted(json.dumps(row, ensure_ascii=False), partial(_same, row))


def _same(value: Any) -> Any:
    return value


def json_line_redactor(*keys: str | None) -> Callable[[str, Callable[[], Any]], str]:
    """``redacted(text, row)``: ``text`` (``json.dumps(row(), ensure_ascii=False)``, however it
    was written) when it has nothing to redact (see :func:`redacted_json_lines`), else the JSON
    of the redacted ``row()`` (made only then); the held secrets read once."""
    secrets = held_secrets(keys)
    walk = _walker(secrets)
    exact = any(_JSON_ESCAPED.search(s) for s in secrets)  # such a secret is not in the text as written

    def redacted(text: str, row: Callable[[], Any]) -> str:
        if exact or ("://" in text and "@" in text) or _hinted(text) or any(s in text for s in secrets):
            return json.dumps(walk(row()), ensure_ascii=False)
        return text

    return redacted


_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')


def _walker(secrets: list[str]) -> Callable[[Any], Any]:
    """Redacts every string of a JSON-like value (a new value) with these secrets."""

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            if "@" in v or "=" in v or "earer" in v or "asic" in v or any(s in v for s in secrets):
                v = _masked(v)
                for s in secrets:
                    v = v.replace(s, MASK)
            return v
        if isinstance(v, dict):
            return {walk(k) if isinstance(k, str) else k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk
