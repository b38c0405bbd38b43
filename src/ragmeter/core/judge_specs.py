"""The judge specs ``--judge`` and ``judge=`` take, as one table.

The backend factory builds each kind through its ``{prefix: builder}`` table
(:data:`ragmeter.judges.backends.factory.BUILDERS`; ``make_backend`` refuses what :data:`KINDS`
does not list), and every help text and message that names the judges is written from it, so a
new backend is its module in ``judges/backends/``, one row here and one builder there. It sits
in core, with the other settings' vocabulary (``auto``, ``none``), so that a command's help can
list the judges without loading any judge code.

>>> judge_specs()
'openai:<model>, anthropic:<model>, local, local:<file.gguf> or given'
>>> judge_specs(remote=True, quoted=True)
"'openai:<model>' or 'anthropic:<model>'"
>>> judge_specs(notes={"local": "offline"}, last=",")
'openai:<model>, anthropic:<model>, local (offline), local:<file.gguf>, given'
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
    JudgeKind("local", "<file.gguf>", bare=True, remote=False),  # the offline judge (a GGUF file for its model)
    JudgeKind("given", "", bare=True, remote=False),  # the verdicts the data already holds (RAGChecker's outputs)
)


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
