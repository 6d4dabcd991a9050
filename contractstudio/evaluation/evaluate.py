"""An evaluation from start to end: rows in, records out (file, tally, baseline), engine local or Ray.

    outcome = evaluate(EvalConfig(target=Path("qa.contract.yaml"), data=Path("rows.jsonl"), out=Path("r.jsonl")),
                       on_progress=print)
    outcome.summary.success_rate

The engines only turn rows into records; reading, resuming, writing and
counting happen here, once, whatever the engine.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.evaluation.dataset import BadRow, Row, choose, format_of, read_rows
from contractstudio.evaluation.engines import Engine, EngineSetup
from contractstudio.evaluation.options import ENGINES, MODES, EvalConfig
from contractstudio.evaluation.record_model import ContractRecord, RecordProblem, checked_record, made_record
from contractstudio.evaluation.results import (
    MAX_RECORD_BYTES,
    ResultsError,
    ResultsWriter,
    numbered_records,
    read_records,
    recorded_trace,
    replace_problem,
)
from contractstudio.evaluation.rows import EvalJob, RowRunner
from contractstudio.evaluation.run_summary import RunTally
from contractstudio.evaluation.summary_model import BaselineReport, RunSummary, Sequential
from contractstudio.reading.replies import strict_json

MAX_BAD_ROWS_KEPT = 100


@dataclass(slots=True)
class Progress:
    """How far this run is: rows done now, rows planned, the running success rate and spend."""

    planned: int
    started: float = field(default_factory=time.perf_counter)
    done: int = 0
    successful: int = 0
    cost: float = 0.0
    resumed: int = 0
    bad: int = 0

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        left = max(self.planned - self.done, 0)
        return left / self.rate if self.rate > 0 else None


@dataclass(slots=True)
class EvalOutcome:
    """What an evaluation produced."""

    kind: str  # contract | pipeline
    summary: RunSummary  # the typed summary (summary_model.py); --json prints its as_json()
    comparison: BaselineReport | None  # --baseline: what changed against it
    bad_rows: list[BadRow]
    out: Path | None
    interrupted: bool = False


# ("bad_row", BadRow | "record", the typed record (record_model.Record) | "tick", None; progress)
ProgressSink = Callable[[str, Any, Progress], None]


def count_rows(path: Path, fmt: str | None) -> int:
    """About how many rows the file has (for the progress bar's ETA): lines, records or array items."""
    chosen = format_of(path, fmt)
    try:
        if chosen == "json":
            return sum(1 for _ in read_rows(path, None, fmt="json"))
        from contractstudio.evaluation.dataset import MAX_ROW_BYTES
        from contractstudio.reading.json_lines import lines_of

        with open(path, "rb") as f:  # capped lines: an overlong one is counted, never held whole
            lines = sum(1 for line in lines_of(f, MAX_ROW_BYTES) if line.text is None or line.text.strip())
        return max(lines - 1, 0) if chosen == "csv" else lines
    except Exception:  # noqa: BLE001 - only an estimate; read_rows reports the real problems
        return 0


def _finished(cfg: EvalConfig, tally: RunTally, kind: str, contract_sha: str, contract_name: str = "") -> None:
    """Count the records already in the results file (for --resume); refuse results of another contract."""
    assert cfg.out is not None
    for number, _offset, rec in numbered_records(cfg.out, kind):
        if rec.contract_sha != contract_sha:
            theirs, ours = rec.contract, contract_name
            if theirs and ours and theirs != ours:
                raise ResultsError(f"{cfg.out}:{number}: holds results of contract '{theirs}', not of '{ours}' "
                                   f"({cfg.target.name}); start a new results file, or resume with the file that made it")
            shown = f"contract '{ours}'" if ours else cfg.target.name
            raise ResultsError(f"{cfg.out}:{number}: holds results of a different version of {shown} ({cfg.target.name} "
                               "was edited since); start a new results file (unchanged calls come from the reply cache)")
        tally.add(rec)


class _Recordings:
    """The traces of an earlier results file, found by row key when a row is run (--replay RESULTS.jsonl).

    Every record is checked when the file is opened, and only offsets are kept; a row's record is read again
    when the row runs, and its trace through `recorded_trace` (the path policy for a `trace_file`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets: dict[str, tuple[int, int]] = {}
        for number, offset, rec in numbered_records(path):
            self.offsets.setdefault(rec.key, (number, offset))
        self._file = open(path, "rb")

    def trace(self, key: str) -> list[dict[str, Any]] | None:
        found = self.offsets.get(key)
        if found is None:
            return None
        number, offset = found
        self._file.seek(offset)
        line = self._file.readline(MAX_RECORD_BYTES + 1).decode("utf-8", errors="replace")
        try:  # the line was checked as the file opened; it is read again, so it is checked again
            rec = checked_record(strict_json(line), "contract")
        except (ValueError, RecordProblem) as err:
            raise ResultsError(f"{self.path}:{number}: {err}") from None
        return recorded_trace(self.path, number, rec)


def _job(cfg: EvalConfig) -> EvalJob:
    return EvalJob.of(cfg, cfg.target.read_text(encoding="utf-8"))


def evaluate(cfg: EvalConfig, on_progress: ProgressSink | None = None, *,
             sleep: Callable[[float], None] = time.sleep) -> EvalOutcome:
    """Run the contract (or simulate the pipeline) of `cfg.target` over `cfg.data`; raises ContractError,
    DatasetError or ResultsError for what cannot start (a results file of an earlier run, unless `cfg.resume` or
    `cfg.overwrite`). `sleep` does the local engine's waits (tests record them)."""
    from contractstudio.reading.project import kind_of_text

    for option, value, known in (("engine", cfg.engine, ENGINES), ("mode", cfg.mode, MODES)):
        if value not in known:  # the CLI cannot ask it; a program is held to the same lists, never run another way
            raise ValueError(f"EvalConfig {option} {value!r}: one of {', '.join(known)}")
    if cfg.out is not None and (problem := replace_problem(cfg.out, resume=cfg.resume, overwrite=cfg.overwrite)):
        raise ResultsError(problem)  # before anything is loaded or run; the writer asks the same again as it opens
    text = cfg.target.read_text(encoding="utf-8")
    planned = count_rows(cfg.data, cfg.data_format)
    if cfg.sample is not None:
        planned = min(planned, cfg.sample)
    if cfg.limit is not None:
        planned = min(planned, cfg.limit)
    # a file of another format (a LocalAI-RAG pipeline) has no kind: line; the dialects know what it reads as
    kind = "pipeline" if kind_of_text(text, cfg.dialect) == "pipeline" else "contract"
    tally: RunTally
    judged: list[str] | None = None  # --judge: the conditions whose confusion tables the run keeps
    workers = 1  # a pipeline's simulation runs in this process
    if kind == "pipeline":
        from contractstudio.evaluation.pipelines import PipelineRowRunner

        if cfg.mode == "judge":
            from contractstudio.runtime.errors import ContractError

            raise ContractError(f"{cfg.target.name} is a pipeline: --judge measures a contract's conditions against "
                                "labelled outputs")

        runner: Any = PipelineRowRunner(cfg.target, name=cfg.name, dialect=cfg.dialect)
        tally = RunTally(kind)
        validate = None
        job = None
        contract_sha = runner.digest
    else:
        job = _job(cfg)
        store = limits = None
        if cfg.engine == "local":
            from contractstudio.evaluation.workers import choose_workers

            workers = choose_workers(cfg.workers, mode=job.mode, planned=planned, concurrency=cfg.concurrency)
        if job.mode == "live" and cfg.engine == "local" and workers == 1:  # workers: the parent's hub has them
            from contractstudio.evaluation.cache import PendingReplies, ReplyCache, default_cache_dir
            from contractstudio.evaluation.limits import RateLimiter

            store = PendingReplies(ReplyCache(cfg.cache_dir or default_cache_dir())) if job.use_cache else None
            limits = RateLimiter(cfg.rpm, cfg.tpm)
        runner = RowRunner(job, store=store, limits=limits, sleep=sleep, runs_rows=cfg.engine == "local" and workers == 1)
        validate = _validator(runner)
        contract_sha = job.contract_digest
        if job.mode == "judge":
            judged = post_names(runner.plan)
        tally = RunTally(kind, judged)
    if cfg.out is not None and cfg.resume and cfg.out.exists():
        name = runner.runner.name if kind == "pipeline" else (job.contract_name if job is not None else None)
        _finished(cfg, tally, kind, contract_sha, name or "")
    already = set(tally.figures.keys)
    comparison = None
    if cfg.baseline is not None:
        from contractstudio.evaluation.compare import Comparison

        comparison = Comparison(cfg.baseline, kind)
    recordings = _Recordings(cfg.replay) if cfg.mode == "replay" and cfg.replay is not None else None

    progress = Progress(planned=max(planned - len(already), 0), resumed=len(already))
    sprt = None
    if cfg.stop_when_decided is not None:
        from contractstudio.evaluation.stats import Sprt

        sprt = Sprt(cfg.stop_when_decided, cfg.decide_margin, cfg.decide_errors, cfg.decide_errors)
        outcomes = tally.figures.outcomes
        resumed_ok = outcomes["first_try"] + outcomes["remedied"] + outcomes["end"]
        for i in range(tally.figures.rows):  # the rows of a resumed run count as if they had run now
            sprt.add(i < resumed_ok)
    bad: list[BadRow] = []

    def skip(item: BadRow) -> None:
        progress.bad += 1
        progress.planned = max(progress.planned - 1, progress.done)  # it was counted, it will not run
        tally.figures.bad_rows += 1
        if len(bad) < MAX_BAD_ROWS_KEPT:
            bad.append(item)
        if on_progress is not None:
            on_progress("bad_row", item, progress)

    def rows() -> Iterator[Row]:
        source = choose(read_rows(cfg.data, validate, fmt=cfg.data_format, kind=kind),
                        sample=cfg.sample, seed=cfg.seed, limit=cfg.limit)
        for item in source:
            if isinstance(item, BadRow):
                skip(item)
                continue
            if item.key in already:
                continue
            if judged is not None and (problem := _unjudgeable(item, tally.judged.order)) is not None:
                skip(BadRow(item.number, problem))
                continue
            if recordings is not None:
                item.recording = recordings.trace(item.key)
            yield item

    records = _engine(cfg, job, runner, rows(), workers)  # a missing engine (Ray) is told before the file opens
    writer = ResultsWriter(cfg.out, resume=cfg.resume, overwrite=cfg.overwrite) if cfg.out is not None else None
    if comparison is not None and already and cfg.out is not None:
        for old in read_records(cfg.out, kind):
            comparison.see(old)
    interrupted = False
    started = time.perf_counter()
    commit = getattr(getattr(runner, "store", None), "commit", None)  # the replies of the rows done so far, first
    try:
        with _kept_out_of_collections():
            for made in records:
                if made is None:
                    if on_progress is not None:
                        on_progress("tick", None, progress)
                    continue
                rec = made_record(made, kind)  # checked before it is written; every reader below reads it typed
                if commit is not None:
                    commit()
                if writer is not None:
                    writer.write(made)
                counted = tally.add(rec)
                if comparison is not None:
                    comparison.see(rec)
                progress.done += 1
                progress.successful += rec.successful
                if isinstance(rec, ContractRecord):  # a pipeline's simulation costs nothing
                    progress.cost += rec.cost_usd - rec.cache.saved_usd
                if on_progress is not None:
                    on_progress("record", rec, progress)
                if sprt is not None and counted and sprt.add(rec.successful) is not None:
                    break  # decided: the rows still in flight are cancelled as the engine closes
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close_records = getattr(records, "close", None)
        if close_records is not None:
            close_records()
        if writer is not None:
            writer.close()
        close = getattr(getattr(runner, "store", None), "close", None)
        if close is not None:
            close()
    summary = tally.summary(duration_s=time.perf_counter() - started, new_rows=progress.done)
    if sprt is not None:
        left = max(progress.planned - progress.done, 0) if sprt.decision is not None else 0
        summary.sequential = Sequential(gate=sprt.rate, margin=sprt.margin, alpha=sprt.alpha, beta=sprt.beta,
                                        decision=sprt.decision, rows=sprt.rows, rows_not_run=left,
                                        saved_usd=left * progress.cost / progress.done if progress.done else 0.0)
    report = comparison.report(summary) if comparison is not None else None
    return EvalOutcome(kind, summary, report, bad, cfg.out, interrupted)


@contextmanager
def _kept_out_of_collections() -> Iterator[None]:
    """Everything made before the run (the imports, the contract, litellm's client: some 300,000
    objects, none of them garbage) left out of the collector's passes while it runs, and given back after it.
    A row makes enough objects for a collection every few rows; a full one went through them all each time."""
    if gc.get_freeze_count():  # the caller froze its own: theirs to give back
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def post_names(plan: Any) -> list[str]:
    """The post conditions of a contract as the results name them (`post.id`, `post[i]` without an id)."""
    if plan is None:  # a Python class: its conditions are named as they are met
        return []
    return [f"post.{c.id}" if c.id else f"post[{i}]" for i, c in enumerate(plan.post)]


def _unjudgeable(row: Row, known: list[str]) -> str | None:
    """Why a row cannot be judged (no output, a label naming no condition), or None."""
    if row.labelled is None:
        return "no 'output' to judge: --judge needs rows {\"input\": ..., \"output\": ..., \"label\": \"pass\" | \"fail\"}"
    if known:
        from contractstudio.evaluation.judge import unknown_label

        return unknown_label(row.labelled.labels, known)
    return None


def _validator(runner: RowRunner) -> Callable[[Any], list[str]]:
    shape = runner.input_shape

    def validate(value: Any) -> list[str]:
        return shape.validate(value)[1]

    return validate


def _engine(cfg: EvalConfig, job: EvalJob | None, runner: Any, rows: Iterator[Row],
            workers: int) -> Iterator[dict[str, Any] | None]:
    live = job is not None and job.mode == "live"  # only a live row waits (for its model, a limit, a retry)
    setup = EngineSetup(run_row=runner.arun if live else runner.run, job=job, concurrency=cfg.concurrency,
                        workers=workers, cache_dir=str(cfg.cache_dir) if cfg.cache_dir else None,
                        address=cfg.address, ray_init=cfg.ray_init)
    return engine_for(cfg.engine, workers)(rows, setup)


def engine_for(name: str, workers: int = 1) -> Engine:
    """The engine of `--engine NAME` (local | ray) and `--workers N`: each is called the same way (engines.Engine)."""
    if name == "ray":
        from contractstudio.evaluation.ray_engine import run_ray

        return run_ray
    if workers > 1:
        from contractstudio.evaluation.workers import run_workers

        return run_workers
    from contractstudio.evaluation.local import run_local

    return run_local
