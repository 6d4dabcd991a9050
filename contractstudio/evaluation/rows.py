"""One row through the same engine as `run`: a `Session` run to the end, summed up as one results record.

`EvalJob` says everything a worker needs (picklable, so a Ray worker on another
machine gets the contract's text, not a path it may not have); `RowRunner` is
built from it once per process and runs rows from any number of threads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contractstudio.evaluation.dataset import Row, digest
from contractstudio.evaluation.options import EvalConfig
from contractstudio.runtime import events as ev
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.trace import Trace, redact

RECORD_VERSION = 1


@dataclass(slots=True)
class EvalJob:
    """What every worker needs to run rows: the contract text, how replies are got, waits and retries. Built from a
    config (`of`): the options and their defaults are EvalConfig's (options.py), never written here again."""

    contract_text: str
    contract_path: str
    contract_name: str | None  # which document of the file (None: its one contract); set once it is loaded
    contract_digest: str
    trust: bool
    dialect: str | None  # --dialect: read the file as this format
    mode: str  # options.MODES: live | scripted | replay | judge
    model: str | None
    api_base: str | None
    wait: bool  # a live run waits (remedy and transport waits); any other never does
    transport: TransportRetry
    use_cache: bool  # a live run asks the reply cache; any other has no model to cache
    cache_dir: str | None
    rpm: float | None
    tpm: float | None
    trace_dir: str | None  # write each row's trace here instead of embedding it (absolute: a worker may run elsewhere)
    structured: str | None  # --structured: the structure mode every row asks in (None: the contract's own)

    @classmethod
    def of(cls, cfg: EvalConfig, text: str) -> EvalJob:
        """The job of a run of `cfg` over the contract `text` (the file's, read once by the caller)."""
        live = cfg.mode == "live"
        return cls(contract_text=text, contract_path=str(cfg.target), contract_name=cfg.name,
                   contract_digest=digest(text)[:16], trust=cfg.trust, dialect=cfg.dialect, mode=cfg.mode,
                   model=cfg.model, api_base=cfg.api_base, wait=cfg.wait and live, transport=cfg.transport,
                   use_cache=cfg.cache and live, cache_dir=str(cfg.cache_dir) if cfg.cache_dir else None,
                   rpm=cfg.rpm, tpm=cfg.tpm, trace_dir=str(cfg.trace_dir.resolve()) if cfg.trace_dir else None,
                   structured=cfg.structured)


def load_plan(job: EvalJob) -> Any:
    """The job's contract, loaded from its text and chosen by the one loader (raises ContractError on errors)."""
    from contractstudio.runtime.api import load_contract

    return load_contract(job.contract_path, name=job.contract_name, text=job.contract_text, trust=job.trust,
                         dialect=job.dialect)


class RowRunner:
    """Runs rows of one job; thread-safe. `store` and `limits` are local objects or proxies to a Ray actor."""

    def __init__(self, job: EvalJob, *, store: Any = None, limits: Any = None,
                 sleep: Callable[[float], None] = time.sleep, runs_rows: bool = True) -> None:
        self.job = job
        self.sleep = sleep
        self.contract = load_plan(job)
        self.plan = getattr(self.contract, "plan", None)  # None: a Python class, whose calls it starts itself
        if self.plan is not None:
            self.plan.refuse_untrusted()
        self.input_shape = self.plan.input if self.plan is not None else self.contract.input_shape
        if job.contract_name is None:
            job.contract_name = self.contract.name
        self.store = store
        self.limits = limits
        # the same for every row of the job (a call never changes its options): made once, not per row
        self.options = CallOptions(wait=job.wait, transport=job.transport, sleep=sleep, structured_output=job.structured,
                                   remedies=job.mode != "judge")
        self.live: Any = None
        if job.mode == "live":
            self.live = self.contract.model_for(job.model, api_base=job.api_base)  # a missing model is said here
            if runs_rows:  # not in a parent whose workers run the rows: loading litellm costs seconds of CPU
                self.live.prepare()

    def _model(self, row: Row) -> tuple[Any, Any, Any]:
        """(model for the engine, the cache layer or None, the limit layer or None)."""
        from contractstudio.runtime.errors import ModelError
        from contractstudio.runtime.models import ReplayModel, ScriptedModel

        if self.job.mode == "judge":  # the labelled output is the one reply; the engine judges it as it judges any
            if row.labelled is None:
                raise ModelError("the row has no 'output' to judge (an envelope {\"input\": ..., \"output\": ..., "
                                 "\"label\": \"pass\" | \"fail\"})")
            return ScriptedModel([row.labelled.reply], name="labelled"), None, None
        if self.job.mode == "scripted":
            if row.replies is None:
                raise ModelError("the row has no 'replies' (an envelope {\"input\": ..., \"replies\": [...]}) for --scripted")
            replies: list[Any] = list(row.replies)
            # with --structured, the scripted replies stand for a model that has response schemas and JSON mode
            # (compiled for the model the run names, or the contract's own)
            supports = (self.job.structured is not None, self.job.structured is not None)
            llm = getattr(getattr(self.plan, "doc", None), "llm", None)
            return ScriptedModel(replies, name="scripted", supports=supports,
                                 stands_for=self.job.model or getattr(llm, "model", None)), None, None
        if self.job.mode == "replay":
            if row.recording is None:
                raise ModelError("no recorded trace for this row in the --replay results")
            return ReplayModel(Trace.from_dicts(row.recording)), None, None
        from contractstudio.evaluation.cache import CachedModel
        from contractstudio.evaluation.limits import LimitedModel

        model: Any = self.live
        limited = cached = None
        if self.limits is not None:
            model = limited = LimitedModel(model, self.limits, sleep=self.sleep, wait=self.job.wait,
                                           longest_cool_down=self.job.transport.max_delay)
        if self.store is not None:
            model = cached = CachedModel(model, self.store)
        return model, cached, limited

    def _session(self, row: Row) -> tuple[Any, Any, Any]:
        """(the row's session, its cache layer or None, its limit layer or None)."""
        from contractstudio.runtime.session import Session

        model, cached, limited = self._model(row)
        options = self.options
        session = (Session(self.plan, row.value, model, options) if self.plan is not None
                   else self.contract.session(row.value, model, options, fresh=True))
        return session, cached, limited

    def run(self, row: Row) -> dict[str, Any]:
        """Run one row to the end; its results record (never raises for a row's own failure)."""
        started = time.perf_counter()
        try:
            session, cached, limited = self._session(row)
            result = session.run(raise_on_violation=False)
        except Exception as err:  # noqa: BLE001 - a row that cannot run is recorded as failed, never lost
            return error_record(self.job, row, f"{type(err).__name__}: {err}", time.perf_counter() - started)
        return record(self.job, row, result, cached, limited)

    async def arun(self, row: Row) -> dict[str, Any]:
        """`run` on an event loop: the row's model calls and waits are awaited (the local engine runs rows so)."""
        started = time.perf_counter()
        try:
            session, cached, limited = self._session(row)
            result = await session.arun(raise_on_violation=False)
        except Exception as err:  # noqa: BLE001 - a row that cannot run is recorded as failed, never lost
            return error_record(self.job, row, f"{type(err).__name__}: {err}", time.perf_counter() - started)
        return record(self.job, row, result, cached, limited)


def _base(job: EvalJob, row: Row) -> dict[str, Any]:
    return {"v": RECORD_VERSION, "key": row.key, "row": row.number, "id": redact(row.id), "input": redact(row.value),
            "contract": job.contract_name or "", "contract_sha": job.contract_digest}


def error_record(job: EvalJob, row: Row, message: str, seconds: float) -> dict[str, Any]:
    """The record of a row that could not run at all."""
    return {**_base(job, row), "outcome": "error", "successful": False, "attempts": 0, "llm_calls": 0,
            "failures": [], "errors": [redact(message)], "used": None, "output": None, "transport": [],
            "transport_failed": False, "tokens": {"prompt": 0, "completion": 0}, "cost_usd": 0.0,
            "remedy_cost_usd": 0.0, "remedy_tokens": 0, "latency_s": round(seconds, 6),
            "cache": {"hits": 0, "misses": 0, "saved_usd": 0.0}, "limit_wait_s": 0.0, "trace": []}


def record(job: EvalJob, row: Row, result: Any, cached: Any = None, limited: Any = None) -> dict[str, Any]:
    """A row's results record from its engine result: outcome, failures per attempt, tokens, cost, trace."""
    failures: dict[int, list[dict[str, Any]]] = {}
    transport: list[dict[str, Any]] = []
    prompt = completion = remedy_tokens = 0
    cost = remedy_cost = 0.0
    attempt = 0
    used: str | None = None
    gave_up = False
    structured: str | None = None  # the mode the row's first output request asked in
    fallbacks = 0
    seeds: set[int] = set()  # what makes the row reproducible, where the provider gives it
    versions: set[str] = set()
    fingerprints: set[str] = set()
    stops = {"count": 0, "tokens": 0, "seconds": 0.0, "saved_tokens": 0, "saved_s": 0.0, "saved_known": 0,
             "tokens_unknown": 0}
    for event in result.trace:
        match event:
            case ev.EarlyStop():  # what the replies cut early had, and what the rest would have cost (where known)
                stops["count"] += 1
                stops["tokens"] += event.tokens
                stops["seconds"] += event.seconds
                if event.saved_tokens is not None:
                    stops["saved_known"] += 1
                    stops["saved_tokens"] += event.saved_tokens
                    stops["saved_s"] += event.saved_s or 0.0
                else:  # a live reply: what the rest held is not known (the summary estimates it)
                    stops["tokens_unknown"] += event.tokens
            case ev.ModelRequest():
                attempt = event.attempt
                if isinstance(event.params.get("seed"), int):
                    seeds.add(event.params["seed"])
                if structured is None and event.purpose != "remedy_pre":
                    structured = event.structured_output or "off"
            case ev.StructureFallback():
                fallbacks += 1
            case ev.ModelReply():
                versions.update([event.model_version] if event.model_version else [])
                fingerprints.update([event.system_fingerprint] if event.system_fingerprint else [])
                prompt += event.prompt_tokens
                completion += event.completion_tokens
                cost += event.cost_usd
                if event.attempt > 0:
                    remedy_tokens += event.tokens
                    remedy_cost += event.cost_usd
            case ev.ConditionChecked() if event.failed:
                failures.setdefault(attempt, []).append({"check": check_name(event), "message": redact(event.message or "")})
            case ev.ValidationFailure() if event.where not in ("pre", "post"):
                where = event.where
                name = {"input": "input.type", "pre": "pre_remedy.type"}.get(event.stage, "output.type") if where == "type" else where
                for message in event.errors:
                    failures.setdefault(event.attempt, []).append({"check": name, "message": redact(str(message))})
            case ev.TransportFailure():
                transport.append({"kind": event.kind, "status": event.status, "gave_up": event.gave_up})
                gave_up = gave_up or event.gave_up
            case ev.Forwarded():
                used = event.used
    raised = result.violation is not None
    if result.successful:
        outcome = "first_try" if result.attempts == 0 else "remedied"
    else:
        outcome = "raised" if raised or used == "raise" else "fallback"
    out: dict[str, Any] = {
        **_base(job, row), "outcome": outcome, "successful": bool(result.successful), "attempts": result.attempts,
        "llm_calls": result.llm_calls,
        "failures": [{"attempt": a, "failed": failures[a]} for a in sorted(failures)],
        "errors": [redact(e) for e in result.errors], "used": used,
        "output": redact(result.output_data), "transport": transport, "transport_failed": gave_up,
        "tokens": {"prompt": prompt, "completion": completion}, "cost_usd": cost,
        "remedy_cost_usd": remedy_cost, "remedy_tokens": remedy_tokens,
        "latency_s": round(result.duration_s, 6),
        "cache": {"hits": cached.hits if cached else 0, "misses": cached.misses if cached else 0,
                  "saved_usd": cached.saved_usd if cached else 0.0},
        "limit_wait_s": round(limited.waited_s, 6) if limited else 0.0,
        "structured": structured, "structure_fallbacks": fallbacks,  # structured: None when no output was asked for
        "early_stops": stops,
    }
    if seeds or versions or fingerprints:
        out["reproducibility"] = {"seed": sorted(seeds), "model_version": sorted(versions),
                                  "system_fingerprint": sorted(fingerprints)}
    if row.labelled is not None and job.mode == "judge":
        out["label"] = {"output": row.labelled.label, "conditions": dict(row.labelled.labels)}
        out["verdicts"] = verdicts(result.trace)
    if job.trace_dir:
        from contractstudio.storage.atomic import write_named
        from contractstudio.storage.paths import make_folder

        folder, name = make_folder(job.trace_dir), f"row-{row.number}.jsonl"  # made with the first trace, never before
        out["trace_file"] = str(write_named(folder, name, result.trace.to_jsonl()).path)  # a link planted there: refused
    else:
        out["trace"] = result.trace.to_dicts()
    return out



def verdicts(trace: Any) -> dict[str, str]:
    """What each post condition said of the first reply (`pass` / `fail`; a `when` that did not apply passes), and
    `output.type` when the reply was not a valid output (then no post condition ran)."""
    out: dict[str, str] = {}
    for event in trace:
        if isinstance(event, ev.ConditionChecked) and event.stage == "post" and check_name(event) not in out:
            out[check_name(event)] = "fail" if event.failed else "pass"
        elif isinstance(event, ev.ValidationFailure) and event.stage == "generate" and event.where == "type":
            out.setdefault("output.type", "fail")
        elif isinstance(event, ev.ReplyParsed):
            out.setdefault("output.type", "pass")
    return out


def check_name(event: Any) -> str:
    """What a failed condition is counted as: its `stage.id`; a Python method (`pre` / `post` of a class), which is one
    condition holding many, is counted per line that raised (`post.post@module.py:42`), as YAML conditions are per id."""
    if not event.raised_at:
        return str(event.name)
    file, _, line = str(event.raised_at).rpartition(":")
    return f"{event.name}@{Path(file).name}:{line}"
