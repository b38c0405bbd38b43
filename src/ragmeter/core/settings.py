"""Every default of a ragmeter run, stated once: the typed settings the CLI parses into.

The command line parses its options into :class:`Settings`; the library reads them: the
judge factory (:func:`ragmeter.judges.judge_factory.make_judge`), the run driver
(:func:`ragmeter.runs.driver.run_evaluation`), the Ray engine and the watch loop
(:func:`ragmeter.live.loop.watch`). Library functions that take one of these values as a
keyword take their default from :data:`DEFAULTS`, so ``--concurrency``'s default, the
backends' and the Ray limiter's are one number.

The module sits in ``core/`` (the bottom layer) because every layer that reads a setting
(judges, embeddings, engine, runs, live, cli) may import only from its own layer or below.
It is pure data: the standard library only, no I/O but reading ``RAGMETER_RUNS_DIR``
when a :class:`Settings` is made (and the bundled price snapshot, :mod:`ragmeter.core.prices`,
when a budget in dollars is checked or the judge's prices are read).

>>> s = Settings(dataset="d.jsonl", metrics=("ndcg@10",), judge="openai:m")
>>> s.k, s.concurrency, s.timeout, s.max_reasks, s.embedder, s.engine
(5, 8, 60.0, 2, 'minilm', 'local')
>>> Settings(k=0)
Traceback (most recent call last):
...
ragmeter.core.settings.InvalidSettingError: k: must be a positive integer, or None for the whole list; got 0
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.core.errors import InvalidParameterError

if TYPE_CHECKING:  # the price snapshot is read only when a price is (``--help`` stays lean)
    from ragmeter.core.prices import Price


def _has_both(judge: str | None, price_in: float | None, price_out: float | None) -> bool:
    from ragmeter.core.prices import has_both

    return has_both(judge, price_in, price_out)


RUNS_DIR_ENV = "RAGMETER_RUNS_DIR"
AUTO_JUDGE = "auto"  # the bundled local judge when ragmeter[local] is installed and a judged metric needs one
NO_JUDGE = "none"
ENGINES = ("local", "ray")
PROGRESS_MODES = ("auto", "rich", "plain", "none")  # auto: rich on a terminal, plain lines otherwise

#: The settings a run directory stores (``setup.json`` ``options``), in the order they are written;
#: ``--resume`` takes them from the run, never from the command line.
STORED = ("dataset", "corpus", "k", "metrics", "view", "only", "judge", "judge_base_url", "ledger", "max_reasks",
          "concurrency", "timeout", "criteria", "price_in", "price_out", "embedder", "records", "records_timeout",
          "action_criteria", "budget_tokens", "budget_usd")


class InvalidSettingError(InvalidParameterError):
    """A setting that cannot be used. ``setting`` names the :class:`Settings` field (the CLI
    shows it as the option it came from); ``message`` says what is wrong and the fix."""

    def __init__(self, setting: str, message: str) -> None:
        self.setting, self.message = setting, message
        super().__init__(f"{setting}: {message}")


def default_runs_dir() -> str:
    """``$RAGMETER_RUNS_DIR``, else ``runs`` (relative to the working directory)."""
    return os.environ.get(RUNS_DIR_ENV, "runs")


@dataclass(frozen=True)
class WatchSettings:
    """``ragmeter watch``: which live traffic is scored, how often, and when it alerts."""

    log: str | None = None  # the JSONL request log the app appends to (or exported OTel spans)
    state: str = "ragmeter-watch"  # offset, scored results and (by default) the ledger live here
    metrics: tuple[str, ...] = ("faithfulness", "answer_relevancy")
    sample_rate: float = 1.0  # share of requests scored, deterministic by request id
    window: int = 100  # the rolling window: the last N scored requests
    host: str = "127.0.0.1"  # where /metrics listens (loopback)
    port: int = 9464  # the Prometheus port; 0 = no endpoint
    interval: float = 2.0  # seconds between polls
    alerts: tuple[str, ...] = ()  # METRIC<VALUE: alert below a floor; METRIC>VALUE: above a ceiling
    baseline: str | None = None  # a run whose means the traffic is checked against
    max_drop: float = 0.05  # a significant drop (a rise, when lower is better) from the baseline alerts
    alert_command: str | None = None  # run on an alert, with $RAGMETER_ALERT set
    exit_on_alert: bool = False  # stop (status 3) on the first alert
    once: bool = False  # score what the log holds now, then stop
    max_seconds: float | None = None  # stop after this long
    otlp: str | None = None  # [HOST:]PORT of the OTLP/HTTP receiver for traces (loopback by default)
    settle: float = 2.0  # seconds after a trace's root span before it is read (children from elsewhere)
    quiet: float = 30.0  # seconds without a span after which a trace with no root is read as it is
    max_open: int = 10_000  # open traces kept at most: past it the oldest are read as they are
    statsd: str | None = None  # HOST:PORT of a statsd daemon for the operational gauges
    to_phoenix: str | None = None  # a Phoenix server's URL: scores written as annotations on root spans

    def __post_init__(self) -> None:
        if self.max_open < 1:
            raise InvalidSettingError("max_open", f"must be at least 1, got {self.max_open!r}")
        if self.settle < 0 or self.quiet < 0:
            raise InvalidSettingError("quiet", "settle and quiet must not be negative")
        if not 0.0 <= self.sample_rate <= 1.0:
            raise InvalidSettingError("sample_rate", f"must be between 0 and 1, got {self.sample_rate!r}")
        if self.window < 1:
            raise InvalidSettingError("window", f"must be at least 1, got {self.window!r}")
        if self.interval < 0:
            raise InvalidSettingError("interval", f"must not be negative, got {self.interval!r}")


@dataclass(frozen=True)
class Settings:
    """What to score, with which judge, and where the run goes.

    The fields in :data:`STORED` decide the numbers and are written to the run directory;
    the others say how this invocation runs (where, which engine, caps, dry run).
    """

    # what is scored
    dataset: str | None = None
    corpus: str | None = None
    k: int | None = 5  # cut-off of the retrieved list; None = the whole list
    metrics: tuple[str, ...] | None = None  # None: the engine's default label metrics
    view: str | None = None  # retrieved (default), context, or both
    only: tuple[str, ...] | None = None  # sample ids to score
    criteria: str | None = None  # rubric criteria file
    embedder: str = "minilm"  # the bundled offline model
    # beyond the context: the system of record, and criteria on the tool calls a run made
    records: str | None = None  # a record source (ragmeter.records.parse_source): table, http(s) GET, mcp:, python:
    records_timeout: float = 10.0  # seconds per record lookup
    action_criteria: str | None = None  # action criteria file (JSON or YAML: version, suite, cases)
    # the judge
    judge: str = AUTO_JUDGE  # a judge spec (core/judge_specs.py), none, or auto
    judge_base_url: str | None = None
    concurrency: int = 8  # judge requests in flight at most
    timeout: float = 60.0  # seconds per judge call (and the default per embedding request)
    max_reasks: int = 2  # re-asks for a reply that does not validate
    ledger: str | None = None  # the judgment store; None: <runs_dir>/ledger.sqlite
    price_in: float | None = None  # USD per million input tokens (None: the bundled snapshot's, core/prices.py)
    price_out: float | None = None  # USD per million output tokens (likewise)
    budget_tokens: int | None = None  # stop before judge tokens would pass this
    budget_usd: float | None = None  # stop before the judge's cost would pass this (needs both prices)
    retry_failed: bool = False  # ask again the judgments stored as failed (replies that never validated)
    # this invocation
    runs_dir: str = field(default_factory=default_runs_dir)
    name: str = "eval"
    save: bool = True  # write a run directory
    dry_run: bool = False  # plan the judge calls, call nothing
    block: int | None = None  # stream a JSONL dataset N samples at a time
    engine: str = "local"  # local, or ray
    address: str | None = None  # Ray cluster: auto or HOST:PORT; None starts one
    progress: str = "auto"  # auto, rich, plain (a line every progress_interval seconds) or none
    progress_interval: float = 5.0  # seconds between plain progress lines
    min_coverage: float = 0.5  # a metric scoring a smaller share of the samples warns (LowCoverageWarning)
    # ragmeter watch
    watch: WatchSettings = field(default_factory=WatchSettings)

    def __post_init__(self) -> None:
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1):
            raise InvalidSettingError("k", f"must be a positive integer, or None for the whole list; got {self.k!r}")
        if self.concurrency < 1:
            raise InvalidSettingError("concurrency", f"must be at least 1, got {self.concurrency!r}")
        if self.timeout <= 0:
            raise InvalidSettingError("timeout", f"must be positive, got {self.timeout!r}")
        if self.records_timeout <= 0:
            raise InvalidSettingError("records_timeout", f"must be positive, got {self.records_timeout!r}")
        if self.max_reasks < 0:
            raise InvalidSettingError("max_reasks", f"must not be negative, got {self.max_reasks!r}")
        if self.block is not None and self.block < 1:
            raise InvalidSettingError("block", f"takes 1 or more samples per block (1 to any size), got "
                                               f"{self.block!r}; leave it out to read the whole dataset in memory")
        if self.engine not in ENGINES:
            raise InvalidSettingError("engine", "use local or ray")
        if self.progress not in PROGRESS_MODES:
            raise InvalidSettingError("progress", f"use {', '.join(PROGRESS_MODES)}; got {self.progress!r}")
        if not 0.0 <= self.min_coverage <= 1.0:
            raise InvalidSettingError("min_coverage", f"must be between 0 and 1, got {self.min_coverage!r}")
        if self.budget_usd is not None and not _has_both(self.judge_spec, self.price_in, self.price_out):
            unknown = f" (the bundled price snapshot has no price for {self.judge})" if self.judge_spec else ""
            raise InvalidSettingError("budget_usd", f"a budget in dollars needs --price-in and --price-out{unknown}")

    @property
    def ledger_path(self) -> str:
        """The judgment store: ``ledger``, else ``<runs_dir>/ledger.sqlite``."""
        return self.ledger or str(Path(self.runs_dir) / "ledger.sqlite")

    @property
    def judge_price(self) -> Price | None:
        """The judge's prices: the price flags, else the bundled snapshot's for its model
        (:mod:`ragmeter.core.prices`); None when neither has one."""
        from ragmeter.core.prices import judge_price

        return judge_price(self.judge_spec, self.price_in, self.price_out)

    @property
    def judge_spec(self) -> str | None:
        """The judge to build, or None for none (``auto`` is resolved before a run starts)."""
        return None if self.judge in (NO_JUDGE, AUTO_JUDGE) else self.judge

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)

    def stored(self) -> dict[str, Any]:
        """The :data:`STORED` fields as a run directory records them (``setup.json`` ``options``):
        lists for tuples, the ledger's resolved path, no judge as null, ``only`` as the
        comma-separated string ragmeter has always written."""
        out: dict[str, Any] = {}
        for name in STORED:
            value = getattr(self, name)
            if name == "ledger":
                value = self.ledger_path
            elif name == "judge":
                value = self.judge_spec
            elif name == "only":
                value = ",".join(value) if value else None
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_stored(cls, options: Mapping[str, Any], **invocation: Any) -> Settings:
        """The settings a run directory recorded (see :meth:`stored`), with ``invocation``
        fields (not stored ones) added. Runs written before ``k = None`` was stored as such
        hold ``k = 0`` for the whole list; both read as None."""
        values: dict[str, Any] = {}
        for name in STORED:
            if name not in options:
                continue
            value = options[name]
            if name == "k" and value == 0:
                value = None
            elif name == "judge" and value is None:
                value = NO_JUDGE  # the run was started without a judge: it resumes without one
            elif name == "only" and isinstance(value, str):
                value = split_ids(value)
            elif name in ("metrics", "only") and value is not None:
                value = tuple(value)
            values[name] = value
        clash = sorted(set(invocation) & set(STORED))
        if clash:
            raise InvalidSettingError(clash[0], "is stored in the run; it cannot be given for this invocation")
        return cls(**values, **invocation)


def split_ids(text: str | None) -> tuple[str, ...] | None:
    """``"q1, q2"`` -> ``("q1", "q2")``; empty -> None."""
    ids = tuple(x.strip() for x in (text or "").split(",") if x.strip())
    return ids or None


FIELDS = tuple(f.name for f in fields(Settings))

#: The defaults, for library signatures (``concurrency: int = DEFAULTS.concurrency``).
#: ``DEFAULTS.runs_dir`` is as of import: call :func:`default_runs_dir` for the current one.
DEFAULTS = Settings()
