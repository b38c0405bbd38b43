"""``litellm:<provider>/<model>``: LiteLLM does the wire, ragmeter keeps the rest.

LiteLLM (``pip install 'ragmeter[litellm]'``, pinned) speaks each provider's protocol and reads
its credentials from the provider's own environment variables: ``azure/<deployment>``
(``AZURE_API_KEY``, ``AZURE_API_BASE``, ``AZURE_API_VERSION``), ``bedrock/<model>`` (the AWS
credentials), ``vertex_ai/<model>`` (Google's), ``ollama/<model>``, ``openai/<model>`` and the
rest of its providers; ``--judge-base-url`` is its ``api_base``. Everything around one call is
ragmeter's, as for the built-in backends: the ledger key (backend ``litellm``, the model
string, decoding, prompt, schema, inputs), the concurrency limit, the retries and back-off and
the 401/403/404 stop (:func:`ragmeter.judges.transport.send`: LiteLLM's own retries are off,
``max_retries=0``), the budget, and the reply's validation with bounded re-asks
(:class:`~ragmeter.judges.judge.Judge`). A LiteLLM error with an HTTP status is handed to the
transport as that status (Retry-After included); a LiteLLM timeout as a read timeout, a
connection error as one.

No traffic but the judge's: before LiteLLM is imported its price map is pinned to the copy in
its wheel (``LITELLM_LOCAL_MODEL_COST_MAP``, else it downloads the map as it is imported), and
its callbacks (logging integrations) are emptied before each call; LiteLLM's SDK has no usage
telemetry of its own (1.108's ``litellm.telemetry`` package serves its proxy only).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

import httpx

from ragmeter.core.errors import MissingExtraError
from ragmeter.core.privacy import telemetry_off
from ragmeter.core.secrets import redact
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends import envelope
from ragmeter.judges.backends.base import Backend, Reply
from ragmeter.judges.backends.openai import mentions_format, with_schema_hint
from ragmeter.judges.transport import AdaptiveLimiter, JudgeConfigError, JudgeReplyError, Limiter, RetryPolicy, send

PACKAGE = "litellm==1.108.0"
#: LiteLLM's lists of integrations that would send each call's data somewhere (emptied per call)
CALLBACK_LISTS = ("callbacks", "success_callback", "failure_callback", "input_callback", "service_callback",
                  "_async_success_callback", "_async_failure_callback")


def litellm_module() -> Any:
    """LiteLLM, imported with its price-map download off; :class:`MissingExtraError` naming the extra."""
    telemetry_off("litellm")
    try:
        import litellm
    except ImportError:
        raise MissingExtraError("the LiteLLM judge (litellm:<provider>/<model>)", "litellm", "litellm",
                                packages=PACKAGE) from None
    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner on stderr
    return litellm


def quiet(litellm: Any) -> None:
    """Empty LiteLLM's callback lists: no logging integration sees a judge call."""
    for name in CALLBACK_LISTS:
        if getattr(litellm, name, None):
            setattr(litellm, name, [])


class LiteLLMBackend(Backend):
    """``litellm:<provider>/<model>`` through ``litellm.acompletion`` (see the module)."""

    name = "litellm"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, *,
                 concurrency: int = DEFAULTS.concurrency, policy: RetryPolicy | None = None,
                 limiter: Limiter | None = None) -> None:
        provider, _, bare = model.partition("/")
        if not provider or not bare:
            raise JudgeConfigError(f"litellm: {model!r} names no provider: use litellm:<provider>/<model>, e.g. "
                                   f"litellm:openai/gpt-4o-mini, litellm:azure/<deployment>, "
                                   f"litellm:bedrock/<model id>, litellm:vertex_ai/<model>, litellm:ollama/<model>")
        if importlib.util.find_spec("litellm") is None:  # said now, not at the first call (nothing imported)
            raise MissingExtraError("the LiteLLM judge (litellm:<provider>/<model>)", "litellm", "litellm",
                                    packages=PACKAGE)
        self.model = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self._key = api_key
        self.policy = policy or RetryPolicy()
        self.limiter: Limiter = limiter if limiter is not None else AdaptiveLimiter(concurrency)
        self.stats: dict[str, int] = {}
        self.json_mode = False

    @property
    def description(self) -> dict:
        return {"wire": f"litellm {_version()}"}

    def _redact(self, text: str) -> str:
        return redact(text, self._key)

    async def _call(self, kwargs: dict[str, Any]) -> httpx.Response:
        """One LiteLLM call as the transport sees a server's answer: a 200 with the OpenAI-style
        completion, an error status with its Retry-After, or an httpx transport error."""
        litellm = litellm_module()
        quiet(litellm)
        try:
            reply = await litellm.acompletion(**kwargs)
        except litellm.exceptions.Timeout:
            raise httpx.ReadTimeout("litellm: timed out") from None
        except litellm.exceptions.APIConnectionError as exc:
            raise httpx.ConnectError(f"litellm: {self._redact(str(exc))[:200]}") from None
        except Exception as exc:  # noqa: BLE001 -- LiteLLM's mapped errors carry the provider's HTTP status
            status = getattr(exc, "status_code", None)
            if not isinstance(status, int):
                raise
            kept = {}
            for headers in (getattr(exc, "litellm_response_headers", None), getattr(exc, "headers", None),
                            getattr(getattr(exc, "response", None), "headers", None)):
                kept.update({k: v for k, v in dict(headers or {}).items() if str(k).lower() == "retry-after"})
            return httpx.Response(status, headers=kept, text=self._redact(str(exc))[:1000])
        return httpx.Response(200, content=json.dumps(_plain(reply)).encode())

    async def complete(self, messages, schema, schema_name, decoding, request=None) -> Reply:
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": messages, "temperature": decoding.temperature,
            "max_tokens": decoding.max_tokens, "timeout": self.policy.timeout, "max_retries": 0, "num_retries": 0,
            "drop_params": True,  # a setting the provider does not take (a seed) is left out, not an error
        }
        if decoding.seed is not None:
            kwargs["seed"] = decoding.seed
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self._key:
            kwargs["api_key"] = self._key
        timing: dict[str, float] = {}
        for _ in range(2):
            if self.json_mode:
                kwargs["response_format"] = {"type": "json_object"}
                kwargs["messages"] = with_schema_hint(messages, schema)
            else:
                kwargs["response_format"] = {"type": "json_schema",
                                             "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
            response = await send(lambda: self._call(kwargs), limiter=self.limiter, policy=self.policy,
                                  backend=self.name, stats=self.stats, timing=timing)
            if response.status_code == 400 and not self.json_mode and mentions_format(response.text):
                self.json_mode = True  # the provider has no structured output: JSON mode, the schema in the prompt
                continue
            break
        if response.status_code == 400:
            raise JudgeConfigError(f"litellm: the provider rejected the request (HTTP 400): "
                                   f"{self._redact(response.text[:300])}")
        try:
            env = envelope.openai(response.content, self.name)
        except JudgeReplyError as exc:
            raise JudgeReplyError(self._redact(str(exc))) from None
        return Reply(env.text, env.input_tokens, env.output_tokens, timing.get("wire_s", 0.0),
                     truncated=env.truncated, queue_s=timing.get("queue_s", 0.0))

    async def aclose(self) -> None:
        """LiteLLM caches its HTTP clients; each belongs to the event loop that made it, so they
        are closed and forgotten when a run's loop ends."""
        if "litellm" not in sys.modules:  # never called: nothing to close
            return
        litellm = litellm_module()
        try:
            await litellm.close_litellm_async_clients()
        finally:
            cache = getattr(litellm, "in_memory_llm_clients_cache", None)
            if cache is not None and hasattr(cache, "flush_cache"):
                cache.flush_cache()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("litellm")
    except PackageNotFoundError:
        return "not installed"


def _plain(reply: Any) -> Any:
    """LiteLLM's ModelResponse as plain JSON (the OpenAI chat-completion shape)."""
    dump = getattr(reply, "model_dump", None)
    return dump() if callable(dump) else reply
