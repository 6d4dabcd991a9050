"""Every option of an evaluation, written once: `EvalConfig`'s fields, each with how `contractstudio eval` asks for it.

    EvalConfig(target=Path("qa.contract.yaml"), data=Path("rows.jsonl"), concurrency=16)

A field's type and default are the library's and the CLI's alike: the CLI makes its options from the fields'
`Flag`s (commands/eval.py: `add_config_options`, `config_values`), so a new option is one field here, with its
flag and help. A field without a flag says how the CLI sets it (`cli`), or that only a program sets it.
`EvalJob` (rows.py), what a worker needs, is built from a config (`EvalJob.of`), never given defaults of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.documents.provider_profiles import REQUESTED
from contractstudio.evaluation.dataset import FORMATS
from contractstudio.reading.dialect_registry import CHOICES as DIALECTS
from contractstudio.runtime.call_state import TransportRetry

MODES = ("live", "scripted", "replay", "judge")  # EvalConfig.mode; judge: each row's labelled output, judged once
ENGINES = ("local", "ray")  # EvalConfig.engine (engines.py: one signature; evaluate.engine_for chooses)


@dataclass(frozen=True, slots=True)
class Flag:
    """How `contractstudio eval` asks for a config field: its option, help and, for a switch, the value it gives."""

    name: str  # --concurrency
    help: str
    metavar: str | None = None
    choices: Iterable[str] | None = None  # a lazy collection is read only when the option is given or shown
    switch: bool = False  # an option without a value: it gives the field `const`
    const: Any = True
    group: str | None = None  # the flags of one group exclude each other (--scripted, --replay, --judge)
    implies: tuple[str, Any] | None = None  # (field, value): given, it sets another field too (--replay: the mode)


def option(default: Any = MISSING, *flags: Flag, cli: str | None = None, factory: Any = MISSING) -> Any:
    """A config field: its default (or `factory`), and the CLI's flags for it, or `cli`: how the CLI sets it else."""
    return field(default=default, default_factory=factory, metadata={"flags": flags, "cli": cli})


def flags_of(f: Any) -> tuple[Flag, ...]:
    """A config field's CLI flags (none: see its `cli` note)."""
    return tuple(f.metadata.get("flags", ()))


@dataclass(slots=True)
class EvalConfig:
    """Every option of `contractstudio eval` (and of a program's `evaluate`)."""

    target: Path = option(cli="the FILE argument (a contract, a pipeline, or path.py:Class)")
    data: Path = option(MISSING, Flag("--data", "the dataset: .jsonl, .json (an array) or .csv", "ROWS"))
    data_format: str | None = option(None, Flag("--format", "the dataset's format (default: from its suffix)",
                                                choices=FORMATS))
    out: Path | None = option(None, Flag("--out", "write one JSON line per row as rows finish", "RESULTS.jsonl"))
    resume: bool = option(False, Flag("--resume", "continue the run in --out: finished rows are not run again",
                                      switch=True))
    overwrite: bool = option(False, Flag("--overwrite", "replace an existing --out file", switch=True))
    concurrency: int = option(8, Flag("--concurrency", "rows in flight at once", "N"))
    rpm: float | None = option(None, Flag("--rpm", "at most N requests per minute (client-side)", "N"))
    tpm: float | None = option(None, Flag("--tpm", "at most about N tokens per minute (client-side)", "N"))
    cache: bool = option(True, Flag("--no-cache", "ask the model even when the same request was answered before",
                                    switch=True, const=False))
    cache_dir: Path | None = option(None, Flag("--cache", "the reply cache folder (default: $CONTRACTSTUDIO_CACHE or "
                                                          "~/.cache/contractstudio)", "DIR"))
    # one of MODES: live | scripted | replay | judge (each row's labelled output, judged: evaluation/judge.py)
    mode: str = option("live", Flag("--scripted", "answer with each row's 'replies' (offline)", switch=True,
                                    const="scripted", group="mode"),
                       Flag("--judge", "judge each row's labelled 'output' with every condition (no model, no remedy) "
                                       "and report how each condition agrees with the labels: false fails, false "
                                       "passes, kappa (docs/eval.md)", switch=True, const="judge", group="mode"))
    model: str | None = option(None, Flag("--model", "litellm model string, overrides the file's llm.model", "M"))
    api_base: str | None = option(None, Flag("--api-base", "base URL of an OpenAI-compatible server", "URL"))
    replay: Path | None = option(None, Flag("--replay", "replay the traces recorded in an earlier results file "
                                                        "(offline)", "RESULTS", group="mode", implies=("mode", "replay")))
    limit: int | None = option(None, Flag("--limit", "only the first N rows", "N"))
    sample: int | None = option(None, Flag("--sample", "a random sample of N rows (see --seed)", "N"))
    seed: int = option(0, Flag("--seed", "the sample's seed", "S"))
    wait: bool = option(True, Flag("--no-wait", "skip remedy and transport waits (live runs wait by default)",
                                   switch=True, const=False))
    engine: str = option("local", Flag("--engine", "this machine or Ray tasks", choices=ENGINES))
    # processes of the local engine; None: one per core for a long live run (workers.py)
    workers: int | None = option(None, Flag("--workers", "processes running the rows on this machine (default: one per "
                                                         "core for a live run of 1,000 rows or more, else 1); they share "
                                                         "one reply cache, rate limiter and results file", "N"))
    address: str | None = option(None, Flag("--address", "the Ray cluster to join (default: start a local one)", "ADDR"))
    ray_init: dict[str, Any] = option(factory=dict, cli="a program's only: more arguments of ray.init")
    baseline: Path | None = option(None, Flag("--baseline", "compare with an earlier results file: metrics and flipped "
                                                            "rows", "OLD.jsonl"))
    trust: bool = option(False, cli="--trust, or the file's folder trusted before (trust.py decides, per folder)")
    trace_dir: Path | None = option(None, Flag("--traces", "write each row's trace to DIR/row-N.jsonl instead of "
                                                           "embedding it", "DIR"))
    transport: TransportRetry = option(factory=TransportRetry, cli="a program's only: the transport retries' policy")
    name: str | None = option(None, cli="the :Class of a FILE path.py:Class")  # which document of a file with several
    dialect: str | None = option(None, Flag("--dialect", "read the file as this format (default: by "
                                                         ".contractstudio.yaml, then by its shape)", choices=DIALECTS))
    # overrides the contract's llm.structured_output for every row
    structured: str | None = option(None, Flag("--structured", "ask every row's replies in this structure mode instead "
                                                               "of the contract's llm.structured_output (compare two "
                                                               "runs with --baseline)", choices=REQUESTED))
    # the gate's rate: stop once a sequential test (stats.Sprt) decides it
    stop_when_decided: float | None = option(None, cli="--stop-when-decided: the rate of --fail-under "
                                                       "(or --fail-under-point)")
    # the test's indifference zone: rate - margin (fail) against rate + margin (pass)
    decide_margin: float = option(0.05, Flag("--decide-margin", "--stop-when-decided tells RATE-M (fail) from RATE+M "
                                                                "(pass), each wrong at most 5%% of the time", "M"))
    decide_errors: float = option(0.05, cli="a program's only: the chance of each wrong decision of the sequential test "
                                            "(alpha = beta; the CLI's is the default)")
