"""Write the bundled MTRAG development half (``src/ragmeter/trust/mtrag/dev.jsonl``) from the
shared reference file: one line per task (its three rated responses inside), with what
``judge-check --set mtrag-dev`` reads and nothing else.

    python bench/mtrag_dev_trim.py [../shared/reference/mtrag-human-dev/human_evaluations_dev.json]

Kept per task: its id, collection, turn, answerability, the conversation so far (the last user
turn is the question), the reference passages shown to the models (id, text) and the reference
answer; per response: which model wrote it, the text, each annotator's faithfulness and completeness
rating (1-4), the paper's RougeL, Bert-Rec and Bert-KPrec, and ``rl_f``, the benchmark's own
RAGAS-style LLM faithfulness judge (its "composite" value). Dropped: naturalness,
appropriateness, win-rate, the other algorithmic scores, timestamps and annotator ids. The
records' text is unchanged (Apache-2.0, ``LICENSE`` and ``NOTICE`` beside the data).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "reference" / "mtrag-human-dev" / "human_evaluations_dev.json"
OUT = ROOT / "src" / "ragmeter" / "trust" / "mtrag" / "dev.jsonl"


def ratings(annotations: dict, name: str) -> list[int]:
    return sorted(int(float(a["value"])) for a in annotations.get(name, {}).values())


def score(annotations: dict, name: str) -> float | None:
    got = annotations.get(name, {})
    v = got.get("system", got.get("composite", {})).get("value")
    return None if v is None else round(float(v), 6)


def main(source: Path = SOURCE) -> None:
    data = json.loads(source.read_text(encoding="utf-8"))
    documents = {d["document_id"]: d["text"] for d in data["documents"]}
    tasks = {t["task_id"]: t for t in data["tasks"]}
    by_task: dict[str, list[dict]] = {}
    for e in data["evaluations"]:
        a = e["annotations"]
        by_task.setdefault(e["task_id"], []).append({
            "model": e["model_id"], "response": e["model_response"],
            "faithfulness": ratings(a, "faithfulness"), "completeness": ratings(a, "completeness"),
            "RougeL": score(a, "RougeL"), "Bert-Rec": score(a, "Bert-Rec"), "Bert-KPrec": score(a, "Bert-KPrec"),
            "rl_f": score(a, "rl_f")})
    lines = []
    for task_id, responses in by_task.items():
        t = tasks[task_id]
        lines.append({
            "task": task_id, "collection": "clapnq" if "clapnq" in t["Collection"] else "govt", "turn": int(t["Turn"]),
            "answerability": t["Answerability"][0], "conversation": [[m["speaker"], m["text"]] for m in t["input"]],
            "passages": [[c["document_id"], documents[c["document_id"]]] for c in t["contexts"]],
            "reference": t["targets"][0]["text"], "responses": responses})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    tmp.replace(OUT)
    n = sum(len(x['responses']) for x in lines)
    print(f"{len(lines)} tasks, {n} responses -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE)
