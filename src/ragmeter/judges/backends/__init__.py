"""Judge backends, one module per wire protocol: :mod:`~ragmeter.judges.backends.openai`
(chat completions), :mod:`~ragmeter.judges.backends.anthropic` (Messages), and
:mod:`~ragmeter.judges.backends.scripted` (no model: tests and dry runs). The extension point
is :class:`~ragmeter.judges.backends.base.Backend`; :mod:`~ragmeter.judges.backends.factory`
builds one from a judge spec through its ``{prefix: builder}`` table. The bundled offline judge's
backend is :mod:`ragmeter.judges.local.backend`.
"""

from ragmeter.judges.backends.anthropic import AnthropicBackend
from ragmeter.judges.backends.base import Backend, Decoding, Reply
from ragmeter.judges.backends.factory import BUILDERS, make_backend
from ragmeter.judges.backends.openai import OpenAIBackend
from ragmeter.judges.backends.scripted import NoCallBackend, ScriptedBackend

__all__ = ["Backend", "Reply", "Decoding", "OpenAIBackend", "AnthropicBackend", "ScriptedBackend", "NoCallBackend",
           "BUILDERS", "make_backend"]
