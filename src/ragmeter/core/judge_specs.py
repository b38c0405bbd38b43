"""The judge specs ``--judge`` and ``judge=`` take, as one table.

The backend factory builds each kind through its ``{prefix: builder}`` table
(:data:`ragmeter.judges.backends.factory.BUILDERS`; ``make_backend`` refuses what :data:`KINDS`
does not list), and every help text and message that names the judges is written from it, so a
new backend is its module in ``judges/backends/``, one row here and one builder there. It sits
in core, with the other settings' vocabulary (``auto``, ``none``), so that a command's help can
list the judges without loading any judge code.

>>> judge_specs()
'openai:<model>, anthropic:<model>, ollama:<model>, litellm:<provider>/<model>, local, local:<file.gguf> or given'
>>> judge_specs(remote=True, quoted=True)
"'openai:<model>', 'anthropic:<model>', 'ollama:<model>' or 'litellm:<provider>/<model>'"
>>> judge_specs(notes={"local": "offline"}, last=",").split(", ")[-3:]
['local (offline)', 'local:<file.gguf>', 'given']

A spec the table lacks gets what would work (:func:`suggestion`):

>>> suggestion("gpt-4o-mini")
"'openai:gpt-4o-mini'"
>>> suggestion("ollama/llama3")
"'ollama:llama3' (the local Ollama server) or 'litellm:ollama/llama3'"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class JudgeKind:
    """A spec's prefix and what follows its colon; ``bare``: the prefix alone is a spec too
    (``local``: the bundled model); ``remote``: a server the user names, not an in-process model."""

    prefix: str
    argument: str
    bare: bool = False
    remote: bool = True

    def forms(self) -> tuple[str, ...]:
        if not self.argument:
            return (self.prefix,)
        full = f"{self.prefix}:{self.argument}"
        return (self.prefix, full) if self.bare else (full,)


KINDS = (
    JudgeKind("openai", "<model>"),  # the chat-completions protocol: OpenAI, vLLM, Ollama, llama.cpp, LiteLLM
    JudgeKind("anthropic", "<model>"),  # the Messages API
    JudgeKind("ollama", "<model>"),  # openai:<model> at the local Ollama server's URL ($OLLAMA_HOST)
    JudgeKind("litellm", "<provider>/<model>"),  # LiteLLM's providers: azure/, bedrock/, vertex_ai/ ... ([litellm])
    JudgeKind("local", "<file.gguf>", bare=True, remote=False),  # the bundled model, or a GGUF file, in process
    JudgeKind("given", "", bare=True, remote=False),  # the verdicts the data already holds (RAGChecker's outputs)
)

#: LiteLLM's provider prefixes that a judge string written LiteLLM's way (``azure/gpt-4o``) most
#: often starts with; any other ``<word>/<model>`` is offered as ``litellm:`` too
LITELLM_PROVIDERS = ("azure", "azure_ai", "bedrock", "vertex_ai", "gemini", "mistral", "groq", "together_ai",
                     "openrouter", "huggingface", "cohere", "deepseek", "fireworks_ai", "hosted_vllm", "watsonx")


def kind_of(spec: str) -> JudgeKind | None:
    """The kind a spec names (``"openai:gpt-4o"`` -> openai), or None when no kind has the
    prefix or the spec lacks the argument its kind needs."""
    prefix, _, argument = spec.partition(":")
    kind = next((k for k in KINDS if k.prefix == prefix), None)
    if kind is None or not (argument or kind.bare):
        return None
    return kind


def listed(items: Sequence[str], last: str = "or") -> str:
    """``["a", "b", "c"]`` -> ``"a, b or c"`` (``last=","``: ``"a, b, c"``)."""
    if len(items) < 2:
        return "".join(items)
    joint = ", " if last == "," else f" {last} "
    return ", ".join(items[:-1]) + joint + items[-1]


def judge_specs(*, remote: bool = False, quoted: bool = False, notes: Mapping[str, str] | None = None,
                last: str = "or") -> str:
    """The specs, listed for a help text or a message. ``remote``: the API judges only;
    ``notes``: said in parentheses after a spec (``{"local": "offline"}``)."""
    out = []
    for kind in KINDS:
        if remote and not kind.remote:
            continue
        for form in kind.forms():
            shown = f"'{form}'" if quoted else form
            note = (notes or {}).get(form)
            out.append(f"{shown} ({note})" if note else shown)
    return listed(out, last)


_OPENAI_NAMES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "text-davinci")


def suggestion(spec: str) -> str | None:
    """What a refused judge string most likely meant, or None: a bare model name gets its
    provider's prefix, LiteLLM's ``provider/model`` the ``litellm:`` (or ``ollama:``) prefix, a
    provider written as a prefix (``azure:gpt-4o``) the LiteLLM form.

    >>> suggestion("claude-haiku-4-5"), suggestion("azure/my-deployment"), suggestion("bedrock:m")
    ("'anthropic:claude-haiku-4-5'", "'litellm:azure/my-deployment'", "'litellm:bedrock/m'")
    >>> suggestion("llama3")
    "'ollama:llama3' (a local Ollama server) or 'openai:llama3' with --judge-base-url (vLLM, LM Studio, llama.cpp)"
    """
    spec = spec.strip()
    prefix, colon, rest = spec.partition(":")
    if colon and rest and "/" not in prefix:
        return f"'litellm:{prefix}/{rest}'" if prefix in LITELLM_PROVIDERS else None
    provider, slash, model = spec.partition("/")
    if slash and provider and model and ":" not in provider:
        if provider == "ollama":
            return f"'ollama:{model}' (the local Ollama server) or 'litellm:ollama/{model}'"
        if provider in ("openai", "anthropic"):
            return f"'{provider}:{model}'"
        return f"'litellm:{spec}'"
    if colon or slash or not spec:
        return None
    if spec.startswith(_OPENAI_NAMES):
        return f"'openai:{spec}'"
    if spec.startswith("claude"):
        return f"'anthropic:{spec}'"
    return (f"'ollama:{spec}' (a local Ollama server) or 'openai:{spec}' with --judge-base-url "
            f"(vLLM, LM Studio, llama.cpp)")
