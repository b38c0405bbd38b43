"""The watcher scores at the settings' cut-off (it was k=5 whatever the settings said)."""

from __future__ import annotations

from ragmeter.core.settings import Settings, WatchSettings
from ragmeter.live.loop import make_watcher


def test_the_watcher_resolves_its_measures_at_the_settings_k(tmp_path):
    log = tmp_path / "requests.jsonl"
    log.write_text("")
    for k, names in ((3, ["ndcg@3", "recall@3"]), (None, ["ndcg", "recall"])):
        settings = Settings(k=k, judge="none", watch=WatchSettings(log=str(log), state=str(tmp_path / f"s{k}"),
                                                                    metrics=("ndcg", "recall"), port=0))
        assert make_watcher(settings).names == names
