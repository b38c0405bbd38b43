"""Write the bundled judge price snapshot (``src/ragmeter/core/price_data/model_prices.json``) from
LiteLLM's price map, the file a LiteLLM wheel ships as
``litellm/model_prices_and_context_window_backup.json`` (MIT, ``LICENSE`` and ``NOTICE`` beside
the snapshot):

    python bench/price_snapshot.py PATH/TO/model_prices_and_context_window_backup.json DATE LITELLM_VERSION

Kept: the chat models of the providers ragmeter's judge strings reach (OpenAI, Anthropic,
Azure, Bedrock, Vertex AI, Gemini, Mistral, Ollama) that have both an input and an output price
per token; fine-tunes, audio, realtime, search, image and regional or provisioned variants are
dropped. Each entry keeps only its two prices, per million tokens (the map's per-token price
times 10^6, rounded to 6 decimals), and the provider.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "ragmeter" / "core" / "price_data" / "model_prices.json"
PROVIDERS = {"openai", "anthropic", "azure", "bedrock", "bedrock_converse", "vertex_ai-language-models",
             "vertex_ai-anthropic_models", "gemini", "mistral", "ollama"}
DROPPED = re.compile(r"ft:|audio|realtime|search|image|tts|transcri|embed|computer|deep-research|codex|/eu/|/us/"
                     r"|/global/|/apac/|us-gov|^eu\.|^us\.|^apac\.|^jp\.|^au\.|/\d+-month|provisioned|invoke/"
                     r"|commitment")


def snapshot(price_map: dict, date: str, version: str) -> dict:
    models = {}
    for name, entry in sorted(price_map.items()):
        if not isinstance(entry, dict) or entry.get("mode") != "chat" or DROPPED.search(name):
            continue
        if entry.get("litellm_provider") not in PROVIDERS:
            continue
        cost_in, cost_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        if cost_in is None or cost_out is None:
            continue
        models[name] = [round(float(cost_in) * 1e6, 6), round(float(cost_out) * 1e6, 6), entry["litellm_provider"]]
    return {"source": f"LiteLLM model_prices_and_context_window.json (litellm {version} wheel)",
            "licence": "MIT, Copyright (c) 2023 Berri AI (LICENSE beside this file)",
            "date": date, "unit": "USD per million tokens: [input, output, provider]", "models": models}


if __name__ == "__main__":
    source, date, version = sys.argv[1], sys.argv[2], sys.argv[3]
    data = snapshot(json.loads(Path(source).read_text()), date, version)
    head = {k: v for k, v in data.items() if k != "models"}
    lines = [json.dumps(head)[:-1] + ', "models": {']
    lines += [f"{json.dumps(name)}: {json.dumps(entry)}," for name, entry in data["models"].items()]
    lines[-1] = lines[-1].rstrip(",")
    OUT.write_text("\n".join(lines) + "\n}}\n")  # one model a line: a new snapshot diffs line by line
    print(f"{len(data['models'])} models -> {OUT}")
