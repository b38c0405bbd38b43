"""How ragmeter's HTTP clients (judges, the OpenAI embedder) reach the network: through the
standard proxy and CA variables, as corporate networks need; and one rule for credentials:
a server URL that holds a user and password (``http://user:pw@host``) and an API key at once
is refused (:func:`credentials_conflict`), since httpx sends the URL's userinfo as HTTP Basic
auth, which silently replaced the ``Authorization: Bearer`` key.

httpx with ``trust_env=True`` reads ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
``NO_PROXY`` (lower-case too) and trusts ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``; requests'
``REQUESTS_CA_BUNDLE`` (and curl's ``CURL_CA_BUNDLE``), which many such networks set instead,
is honoured here when ``SSL_CERT_FILE`` is not set. Nothing else is read from the environment.

>>> import os; sorted(http_options({"REQUESTS_CA_BUNDLE": ""}))
['trust_env']
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from typing import Any

CA_BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


def ca_bundle(environ: Mapping[str, str] | None = None) -> str | None:
    """The CA bundle requests or curl would use, when ``SSL_CERT_FILE`` (httpx's own) is not set."""
    env = os.environ if environ is None else environ
    if env.get("SSL_CERT_FILE"):
        return None
    return next((env[v] for v in CA_BUNDLE_VARIABLES if env.get(v)), None)


def http_options(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``httpx.Client`` / ``httpx.AsyncClient``: the environment's proxies
    and CA certificates."""
    options: dict[str, Any] = {"trust_env": True}
    bundle = ca_bundle(environ)
    if bundle:
        options["verify"] = ssl.create_default_context(cafile=bundle)
    return options


def credentials_conflict(base_url: str | None, api_key: str | None, key_setting: str) -> str | None:
    """Why ``base_url`` and ``api_key`` cannot be used together, or None: a URL with userinfo is
    sent as HTTP Basic auth (the ``Authorization`` header), so with a key as well one of the
    two credentials would be dropped or both sent. The message shows the URL without its
    password.

    >>> credentials_conflict("http://u:pw@judge.local/v1", "sk-1", "OPENAI_API_KEY")[:60]
    'the server URL http://***@judge.local/v1 holds a user and pa'
    >>> credentials_conflict("http://judge.local/v1", "sk-1", "OPENAI_API_KEY") is None
    True
    """
    from ragmeter.core.secrets import has_userinfo, redact_url

    if not api_key or not has_userinfo(base_url):
        return None
    return (f"the server URL {redact_url(base_url)} holds a user and password, and an API key is set too "
            f"({key_setting}): httpx would send the URL's credentials as HTTP Basic auth (the Authorization header), "
            f"in place of the key or beside it; give one: drop user:password@ from the URL, or unset {key_setting}")
