"""How ragmeter's HTTP clients (judges, the OpenAI embedder) reach the network: through the
standard proxy and CA variables, as corporate networks need.

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
