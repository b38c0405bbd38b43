"""Records over HTTP GET: a URL template per entity, a JSON Pointer per attribute.

``HttpSource("http://orders.internal/api/orders/{entity}", pointers={"status": "/status",
"product": "/items/0/sku"})`` sends ``GET http://orders.internal/api/orders/ORD-1042`` and reads
``/status`` from the JSON reply. Without ``pointers`` the attribute's pointer is
``/<attribute>``; a single string pointer may hold ``{attribute}``; the URL may hold
``{attribute}`` too. Both values are percent-encoded into the URL.

Read-only by construction: the only request this class can send is GET (there is no other
method in it), redirects are not followed (no call goes anywhere the user did not name),
and one reply serves every attribute of an entity. Proxy settings come from the
environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``). Headers (an API key) are sent
but never enter the identity, a reason, a cache or a log.

Replies: 200 with JSON -> the pointer's value; 404 or 410 -> no record (final); any other
status, a body that is not JSON, a refused connection or a timeout -> cannot verify, not
cached, so a rerun asks again. A reply is read as it streams and refused at
:data:`MAX_BODY` bytes (decoded), or at once when its Content-Length says it is larger: a
400 MB reply costs at most the limit in memory, never the whole body. A body of any other
status is never read.

The host is the template's own: ``{entity}`` or ``{attribute}`` in it is refused (a value
from the data would choose which server is asked). An entity or attribute is one path
segment: percent-encoded (``/`` is ``%2F``), and one that is ``.`` or ``..`` (which every URL
parser resolves as a step up the path: ``/orders/..`` is ``/``) is refused, never sent. A
reason names the URL as sent (credentials and query values hidden).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import string
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from ragmeter.core.errors import InvalidParameterError
from ragmeter.records.pointer import check_pointer, record_from_json, resolve
from ragmeter.records.types import CannotVerify, LookupOutcome

MAX_BODY = 10_000_000  # bytes of one reply; a larger one is an error, not a record


def _fields(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise InvalidParameterError(f"{template!r}: {exc} (write literal braces as '{{{{' and '}}}}')") from None


def public_url(url: str) -> str:
    """``url`` without credentials or query values: what reasons and the identity may show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port: int | str | None
    try:
        port = parts.port
    except ValueError:  # not a number (a template field): shown as written
        port = parts.netloc.rsplit(":", 1)[-1]
    if port:
        host = f"{host}:{port}"
    query = f"query-{hashlib.sha256(parts.query.encode()).hexdigest()[:8]}" if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def sent(url: str) -> str:
    """The URL as httpx sends it (its own normalisation applied), shown without credentials."""
    import httpx

    try:
        return public_url(str(httpx.URL(url)))
    except (httpx.InvalidURL, ValueError):
        return public_url(url)


async def _bounded_body(response: Any) -> bytes | None:
    """The reply's body, read as it streams; None once it passes :data:`MAX_BODY` (or its
    Content-Length says it will): nothing more is read."""
    declared = response.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > MAX_BODY:
        return None
    body = bytearray()
    async for chunk in response.aiter_bytes():  # decoded: a compressed reply is bounded as it expands
        body += chunk
        if len(body) > MAX_BODY:
            return None
    return bytes(body)


class HttpSource:
    """Records from JSON documents behind a GET-only URL template (see the module docstring)."""

    def __init__(self, template: str, *, pointers: Mapping[str, str] | str | None = None, timeout_s: float = 10.0,
                 headers: Mapping[str, str] | None = None, concurrency: int = 8) -> None:
        parts = urlsplit(template)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidParameterError(f"{public_url(template)!r}: an HTTP record source needs an http:// or "
                                        f"https:// URL template")
        fields = _fields(template)
        if "entity" not in fields or fields - {"entity", "attribute"}:
            raise InvalidParameterError(f"{public_url(template)!r}: the URL template must hold {{entity}} and may "
                                        f"hold {{attribute}}, nothing else (found {sorted(fields)})")
        if _fields(f"{parts.scheme}://{parts.netloc}"):  # the data would choose the server asked
            raise InvalidParameterError(f"{public_url(template)!r}: {{entity}} and {{attribute}} may fill the "
                                        f"URL's path or query, never its host: a value from the data must not "
                                        f"choose which server is asked")
        if isinstance(pointers, str):
            check_pointer(pointers.replace("{attribute}", "x"))
            if _fields(pointers) - {"attribute"}:
                raise InvalidParameterError(f"pointer {pointers!r}: only {{attribute}} may be filled in")
        elif pointers is not None:
            for p in pointers.values():
                check_pointer(p)
        if timeout_s <= 0 or concurrency < 1:
            raise InvalidParameterError("timeout_s must be > 0 and concurrency >= 1")
        self.template = template
        self.pointers = pointers
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self._headers = dict(headers or {})
        self._client: Any = None
        self._limit: asyncio.Semaphore | None = None
        self._documents: dict[str, Any] = {}  # url -> decoded JSON or a final CannotVerify (404)
        self._locks: dict[str, asyncio.Lock] = {}
        pointer_part = (pointers if isinstance(pointers, str) else
                        ",".join(f"{k}={v}" for k, v in sorted(pointers.items())) if pointers else "/{attribute}")
        self._identity = f"http:GET {public_url(template)}#{pointer_part}"

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def attributes(self) -> tuple[str, ...] | None:
        return tuple(sorted(self.pointers)) if isinstance(self.pointers, Mapping) else None

    def pointer_for(self, attribute: str) -> str | None:
        if self.pointers is None:
            return "/" + attribute.replace("~", "~0").replace("/", "~1")
        if isinstance(self.pointers, str):
            return self.pointers.replace("{attribute}", attribute.replace("~", "~0").replace("/", "~1"))
        return self.pointers.get(attribute)

    def url_for(self, entity: str, attribute: str) -> str:
        return self.template.format(entity=quote(str(entity).strip(), safe=""), attribute=quote(attribute, safe=""))

    def _refused(self, url: str, entity: str, attribute: str) -> CannotVerify | None:
        """Why ``url`` is not sent: a value that is a dot segment would leave the template's path."""
        for name, value in (("entity", str(entity).strip()), ("attribute", attribute)):
            if value in (".", "..") and value in urlsplit(url).path.split("/"):
                return CannotVerify(f"GET {public_url(self.template)}: the {name} {value!r} would be a {value!r} path "
                                    f"segment, which leaves the template's path; not sent", "refused")
        return None

    async def lookup(self, entity: str, attribute: str) -> LookupOutcome:
        pointer = self.pointer_for(attribute)
        if pointer is None:
            return CannotVerify(f"{self._identity}: no pointer is configured for attribute {attribute!r} "
                                f"(configured: {', '.join(sorted(self.pointers or {}))})", "no_record")
        url = self.url_for(entity, attribute)
        refused = self._refused(url, entity, attribute)
        if refused is not None:
            return refused
        document = await self._document(url)
        if isinstance(document, CannotVerify):
            return document
        return record_from_json(resolve(document, pointer), entity=entity, attribute=attribute,
                                where=f"GET {sent(url)}")

    async def _document(self, url: str) -> Any:
        """One GET per URL: lookups of one entity's attributes wait for the first one's reply."""
        lock = self._locks.setdefault(url, asyncio.Lock())
        async with lock:
            if url in self._documents:
                return self._documents[url]
            document = await self._get(url)
            if not isinstance(document, CannotVerify) or document.final:
                self._documents[url] = document
            return document

    async def _get(self, url: str) -> Any:
        import httpx

        if self._client is None or self._limit is None:
            self._client = httpx.AsyncClient(timeout=self.timeout_s, trust_env=True, follow_redirects=False,
                                             headers={"accept": "application/json", **self._headers})
            self._limit = asyncio.Semaphore(self.concurrency)
        client, limit = self._client, self._limit
        shown = f"GET {sent(url)}"
        try:
            async with limit, client.stream("GET", url) as response:  # the one request this class sends
                status = response.status_code
                body = await _bounded_body(response) if status == 200 else b""
        except httpx.TimeoutException:
            return CannotVerify(f"{shown} timed out after {self.timeout_s:g} s", "timeout")
        except httpx.HTTPError as exc:
            return CannotVerify(f"{shown} failed: {type(exc).__name__}", "error")
        if body is None:
            return CannotVerify(f"{shown}: the reply is over {MAX_BODY} bytes; not read further", "error")
        if status in (404, 410):
            return CannotVerify(f"{shown} answered {status}: no such record", "no_record")
        if status in (401, 403):
            return CannotVerify(f"{shown} answered {status}: the records server refused the request; check the "
                                f"headers (credentials) given to the source", "error")
        if 300 <= status < 400:
            return CannotVerify(f"{shown} answered {status} (a redirect); redirects are not followed: give the "
                                f"final URL in the template", "error")
        if status != 200:
            return CannotVerify(f"{shown} answered {status}", "error")
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return CannotVerify(f"{shown}: the reply is not JSON", "error")

    async def aclose(self) -> None:
        client, self._client, self._limit = self._client, None, None
        self._locks.clear()
        self._documents.clear()
        if client is not None:
            await client.aclose()
