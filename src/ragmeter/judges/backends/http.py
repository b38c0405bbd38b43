"""What every HTTP judge backend shares: the client, the concurrency limit, retries through
:func:`ragmeter.judges.transport.send`, credentials kept out of messages, the envelope read."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from ragmeter.core.network import credentials_conflict, http_options
from ragmeter.core.secrets import redact
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends import envelope
from ragmeter.judges.backends.base import Backend
from ragmeter.judges.transport import (
    AdaptiveLimiter,
    JudgeConfigError,
    JudgeReplyError,
    Limiter,
    RetryPolicy,
    client_for,
    endpoint,
    post,
    send,
)


class HTTPBackend(Backend):
    """An HTTP backend. ``limiter``: a shared concurrency limit and back-off (e.g. one for a
    whole cluster); by default the backend's own ``AdaptiveLimiter(concurrency)``."""

    KEY_SETTING = "the API key"

    def __init__(self, model: str, base_url: str, api_key: str | None, *, concurrency: int = DEFAULTS.concurrency,
                 policy: RetryPolicy | None = None, limiter: Limiter | None = None) -> None:
        conflict = credentials_conflict(base_url, api_key, self.KEY_SETTING)
        if conflict is not None:  # Basic auth from the URL would replace the key (core.network)
            raise JudgeConfigError(f"{self.name}: {conflict}")
        self.model, self._key = model, api_key
        self.base_url: str = base_url.rstrip("/")
        self.policy = policy or RetryPolicy()
        self.limiter: Limiter = limiter if limiter is not None else AdaptiveLimiter(concurrency)
        self.connections = max(concurrency, getattr(self.limiter, "max_limit", 0))  # the pool: one per slot
        self.stats: dict[str, int] = {}
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = client_for(self.policy, self.connections, **http_options())
        return self._client

    async def _post(self, path: str, payload: dict, headers: dict,
                    timing: dict[str, float] | None = None) -> httpx.Response:
        url = endpoint(self.base_url, path)  # a query in the base URL (?api-version=...) stays at the end
        return await send(lambda: post(self.client, url, payload=payload, headers=headers, timeout=self.policy.timeout),
                          limiter=self.limiter, policy=self.policy, backend=self.name, stats=self.stats,
                          timing=timing)

    def _redact(self, text: str) -> str:
        return redact(text, self._key)

    def _envelope(self, read: Callable[[bytes, str], envelope.Envelope], response: httpx.Response) -> envelope.Envelope:
        """The envelope read by ``read``; a broken one fails this item (redacted message)."""
        try:
            return read(response.content, self.name)
        except JudgeReplyError as exc:
            raise JudgeReplyError(self._redact(str(exc))) from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
