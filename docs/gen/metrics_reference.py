"""The metric reference, written at build time from the registry (``ragmeter.metrics.REGISTRY``,
what ``ragmeter metrics`` lists): for every metric its name and aliases, formula, source,
parameters and variants, range and direction, the evidence it needs, and when it is undefined.
A metric registered in the code (built in, or one's own through the ``ragmeter.metrics`` entry
points) has its entry here by itself.

Run by mkdocs-gen-files (``mkdocs.yml``); ``page()`` is what the docs test reads.
"""

from __future__ import annotations

from typing import Any

PATH = "reference/metrics.md"

KINDS = {
    "LabelSpec": "label metric: relevance labels and ranks, no model",
    "EmbeddingSpec": "embedding metric: texts through an embedding model",
}
# the parts of the claim matrix a judged metric can read (ragmeter.evidence.matrix names them)
NEEDS = {
    "answer_claims": "the answer split into claims",
    "reference_claims": "the reference answer split into claims (or its `reference_claims` as given)",
    "context_sentences": "which sentences of the context the question needs",
    "answer_questions": "questions generated back from the answer",
    "turn_standalone": "whether the turn's question stands without the earlier turns",
    "rubric": "the rubric's score for the named criterion",
    "facts": "the answer's facts checked against the system of record (`--records`)",
    "actions": "the sample's tool calls graded against criteria (`--action-criteria`)",
}
SIDES = {"answer": "answer", "reference": "reference answer", "context": "context"}


def need_words(need: str) -> str:
    """One need of a judged metric, in words (an unknown one by its name)."""
    kind, _, arg = need.partition(":")
    if "@" in kind:
        claims, source = kind.split("@")
        return f"the {SIDES.get(claims, claims)}'s claims verified against the {SIDES.get(source, source)}"
    words = NEEDS.get(kind, kind)
    return f"{words} ({arg})" if arg else words


def _default_measure(spec: Any) -> Any:
    from ragmeter.core.measure import build_measure

    try:
        return build_measure(spec, 5 if spec.accepts_k else None, {})
    except Exception:  # noqa: BLE001 - a metric whose parameter has no default (rubric's criterion)
        return None


def evidence(spec: Any) -> list[str]:
    """What a metric reads, in words."""
    kind = type(spec).__name__
    if kind == "LabelSpec":
        return ["the ranked chunk ids (`retrieved`, or `context` in the context view)",
                "relevance labels (`relevant`)"]
    if kind == "EmbeddingSpec":
        return ["the answer and the reference answer as texts",
                "an embedder (`--embedder`, the bundled MiniLM by default)"]
    measure = _default_measure(spec)
    needs = sorted(spec.needs(measure) if measure is not None else spec.evidence, key=lambda n: ("@" in n, n))
    words = [need_words(n) for n in needs] or ["the sample's own fields"]
    try:
        prompts = spec.prompts(measure) if measure is not None else ()
    except Exception:  # noqa: BLE001
        prompts = ()
    if prompts:
        words.append("judge prompts: " + ", ".join(f"`{p}`" for p in prompts))
    return words


def _value(v: Any) -> str:
    return f"`{v!r}`"


def _param_rows(spec: Any) -> list[str]:
    rows = []
    for name, p in spec.params.items():
        allowed = ", ".join(_value(c) for c in p.choices) if p.choices else (
            f">= {p.ge:g}" if p.ge is not None else p.type.__name__)
        rows.append(f"| `{name}` | {_value(p.default) if p.default is not None else 'required'} | {allowed} | "
                    f"{' '.join((p.doc or '').split())} |")
    return rows


def entry(spec: Any) -> str:
    """One metric's entry."""
    kind = type(spec).__name__
    kind_words = KINDS.get(kind, "judged metric: read from the judge's claim matrix")
    low, high = spec.range
    direction = "higher is better" if spec.higher_is_better else "lower is better"
    per_sample = "0 or 1 per sample" if spec.binary else f"{low:g} to {high:g} per sample"
    example = spec.name + ("@5" if spec.accepts_k else "")
    lines = [f"### `{spec.name}` {{#{spec.name}}}", "",
             f"*{spec.family}, version {spec.version}; {kind_words}.*", "",
             f"- **Formula**: `{' '.join(spec.definition.split())}`",
             f"- **Source**: {spec.source}"]
    if spec.aliases:
        lines.append("- **Aliases**: " + ", ".join(f"`{a}`" for a in spec.aliases))
    lines += [f"- **Range and direction**: {per_sample}, {direction}; the run's figure is the mean over "
              "the samples scored",
              "- **Cut-off**: " + (f"takes `@k` (`{example}`; `--k` sets it, `--k 0` the whole list)"
                                    if spec.accepts_k else "none (the whole list or the whole answer)")
              + ("; the order of the list counts" if spec.rank_aware else ""),
              "- **Evidence needed**: " + "; ".join(evidence(spec)),
              "- **Undefined (not computed) when**: " + (spec.undefined or "never: every sample with the "
                                                          "fields above is scored")]
    if spec.origin:
        lines.append(f"- **Defined by**: {spec.origin}")
    if spec.params:
        lines += ["", "Parameters (a variant is named by them: "
                  f"`{spec.name}({next(iter(spec.params))}=...)`):", "",
                  "| parameter | default | allowed | meaning |", "|---|---|---|---|", *_param_rows(spec)]
    return "\n".join(lines) + "\n"


def page() -> str:
    from ragmeter.metrics import REGISTRY

    specs = list(REGISTRY.values())
    families: dict[str, list[Any]] = {}
    for spec in specs:
        families.setdefault(spec.family, []).append(spec)
    lines = ["# Metrics", "",
             f"Every metric `ragmeter metrics` lists ({len(specs)} in this build), written from the "
             "registry when this site is built. A metric is asked for by name, alias or variant "
             "(`-m \"ndcg(discount='jk2002')@5\"`, `evaluate(data, [\"mrr@10\"])`); the name with its "
             "parameters is its identity in every result. How each kind gets its evidence: "
             "[the evidence each metric needs](../concepts/evidence.md).", "",
             "| metric | family | formula |", "|---|---|---|"]
    for spec in specs:
        lines.append(f"| [`{spec.name}`](#{spec.name}) | {spec.family} | "
                     f"{' '.join(spec.definition.split()).replace('|', chr(92) + '|')} |")
    lines.append("")
    for family, members in families.items():
        lines += [f"## {family}", ""]
        lines += [entry(s) for s in members]
    return "\n".join(lines)


def main() -> None:
    import mkdocs_gen_files

    with mkdocs_gen_files.open(PATH, "w") as f:
        f.write(page())


if __name__ in ("__main__", "<run_path>"):
    main()
