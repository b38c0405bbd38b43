"""The bundled offline judge: a small model run in process by llama.cpp (``ragmeter[local]``).

``backend`` is its :class:`~ragmeter.judges.backends.base.Backend`; ``model`` finds and checks the
bundled model file, ``runtime`` and ``llm`` load and run it (``probe`` first, in a subprocess),
``extract`` and ``verify`` answer the claim prompts in small typed steps (``preselect`` chooses the
passages, ``verdict_rule`` decides), ``grammar_check`` constrains its JSON, and ``agreement`` says what
it was measured to do and what it therefore refuses. Until the local judge is asked for, only
``model`` is imported (to tell whether ``ragmeter[local]`` is installed).
"""

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # imported from its home on first use, so ``model`` alone stays light
    from ragmeter.judges.local.backend import LocalBackend
