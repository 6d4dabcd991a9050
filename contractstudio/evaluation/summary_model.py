"""The one model of a run's summary (a contract's figures or a pipeline's, the judge's tables, the sequential test and
the threshold sweep), beside the model of the records it is counted from (record_model.py).

The tallies build it (summary.Tally, pipelines.PipelineTally, judge.JudgeTally, through run_summary.RunTally) and
every face reads its fields: the CLI's text and `--json`, the studio's Eval summary and plots, a baseline's
comparison, the gate. `as_json()` is what `--json` prints: the fields in this order, the parts a run did not have
(no judge, no timing) left out rather than written as null. A value the model refuses is its builder's bug.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

ABSENT = Field(default=None, exclude_if=lambda value: value is None)  # left out of --json when the run had none


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Interval(_Part):
    """A rate's 95% Wilson interval."""

    low: float
    high: float


class FailingCondition(_Part):
    """A condition that failed: how often, on how many rows, and its first distinct messages."""

    check: str
    count: int
    rows: int
    messages: list[str]


class TokenFigures(_Part):
    prompt: int
    completion: int
    total: int
    per_successful_row: float


class CostFigures(_Part):
    total: float
    per_successful_row: float
    paid: float
    from_cache: float


class RemedyShare(_Part):
    cost: float
    tokens: float


class LatencyFigures(_Part):
    p50: float
    p95: float
    p99: float
    mean: float
    max: float


class CacheFigures(_Part):
    hits: int
    misses: int


class EarlyStopFigures(_Part):
    """Replies cut while the model wrote: what they had at the cut, and what stopping saved (known or estimated)."""

    count: int
    tokens_at_cut: int
    seconds_at_cut: float
    saved_tokens: int
    saved_s: float
    saved_known: int
    saved_tokens_estimated: float


class Reproducibility(_Part):
    """What the provider said of the run's replies: the seeds sent, the model versions and fingerprints."""

    seed: list[Any]
    model_version: list[Any]
    system_fingerprint: list[Any]


class Sequential(_Part):
    """What --stop-when-decided did: the test, its decision (None: undecided), and what stopping saved."""

    gate: float
    margin: float
    alpha: float
    beta: float
    decision: Literal["pass", "fail"] | None
    rows: int
    rows_not_run: int
    saved_usd: float


class RowRef(_Part):
    """A row named in a table: its number, id and key."""

    row: int
    id: str
    key: str


class RateFigures(_Part):
    """A proportion with its Wilson interval and the number it is of."""

    rate: float
    low: float
    high: float
    n: int


class Kappa(_Part):
    """Cohen's kappa with its standard error and interval; None where it is undefined (one verdict only)."""

    kappa: float | None
    se: float | None
    low: float | None
    high: float | None


class ConditionTable(_Part):
    """One condition (or the whole contract) as a classifier against the labels: its confusion table and figures."""

    check: str
    n: int
    both_fail: int
    false_fail: int
    false_pass: int
    both_pass: int
    agreement: RateFigures
    false_fail_rate: RateFigures
    false_pass_rate: RateFigures
    precision: RateFigures
    recall: RateFigures
    kappa: Kappa
    false_fails: list[RowRef]
    false_passes: list[RowRef]


class JudgeSummary(_Part):
    """eval --judge: every condition's table, then the whole contract's, and the labelled rows never judged."""

    rows: int
    not_judged: list[RowRef]
    conditions: list[ConditionTable]
    contract: ConditionTable


class SweepPoint(_Part):
    """One threshold of a sweep and what it gets wrong over the labelled rows."""

    threshold: int | float  # the number as the contract or a row wrote it (0.55, 3): printed as it was
    false_fails: int
    false_passes: int
    agreement: float


class SweepResult(_Part):
    """eval --sweep: a condition's threshold moved over the labelled rows, and the one the objective chooses."""

    check: str
    id: str | None
    key: Literal["assert", "when"]
    expression: str
    subject: str
    op: str
    current: int | float
    rows: int
    objective: str
    table: list[SweepPoint]
    chosen: int | float
    now: SweepPoint
    best: SweepPoint
    written: str | None = ABSENT  # --write-threshold: the quick fix that wrote the chosen threshold


class _Summary(_Part):
    """What every run's summary can do (its fields are each kind's own, in the order --json prints them)."""

    def as_json(self) -> dict[str, Any]:
        """The summary as --json prints it."""
        return self.model_dump()

    def timeless(self) -> Self:
        """The figures without this run's timing (the studio's summary box: a results file has none)."""
        return self.model_copy(update={"duration_s": None, "rows_this_run": None, "rows_per_s": None})


class ContractSummary(_Summary):
    """A contract's run: rates with their intervals, remedies by attempt, failing conditions, faults, tokens, cost,
    latency, requests, structured output, early stops; a judged run's tables, the sequential test, a sweep."""

    kind: Literal["contract"] = Field(default="contract", exclude=True)  # --json has never said it
    rows: int
    bad_rows: int
    successful: int
    success_rate: float
    first_try: int
    first_try_rate: float
    remedied: int
    remedied_rate: float
    remedied_by_attempt: dict[str, int]
    fallback: int
    raised: int
    errors: int
    failing_conditions: list[FailingCondition]
    transport_faults: dict[str, int]
    transport_failed_rows: int
    tokens: TokenFigures
    cost_usd: CostFigures
    remedy_share: RemedyShare
    latency_s: LatencyFigures
    cache: CacheFigures
    rate_limit_wait_s: float
    requests: int
    requests_per_row: float
    remedies_per_row: float
    structured_output: dict[str, int]
    structure_fallbacks: int
    early_stops: EarlyStopFigures
    intervals: dict[str, Interval]
    reproducibility: Reproducibility | None = ABSENT
    first_error: str | None = ABSENT  # why the first row that could not run did not
    duration_s: float | None = ABSENT
    rows_this_run: int | None = ABSENT
    rows_per_s: float | None = ABSENT
    judge: JudgeSummary | None = ABSENT
    sequential: Sequential | None = ABSENT
    sweep: SweepResult | None = ABSENT


class AssertionFailures(_Part):
    """A pipeline step's runtime assertion failures: how many, by phase and field, and the first message."""

    step: str
    action: str | None
    count: int
    fields: dict[str, int]
    message: str


class PathCount(_Part):
    path: list[str]
    count: int


class PipelineSummary(_Summary):
    """A pipeline's simulated run: rows that reached an end, outcomes, paths, end steps, assertion failures per step."""

    kind: Literal["pipeline"] = "pipeline"
    rows: int
    bad_rows: int
    reached_end: int
    reached_end_rate: float
    intervals: dict[str, Interval]
    outcomes: dict[str, int]
    paths: list[PathCount]
    end_steps: dict[str, int]
    assertion_failures: list[AssertionFailures]
    duration_s: float | None = ABSENT
    rows_this_run: int | None = ABSENT
    rows_per_s: float | None = ABSENT  # never set for a pipeline: its --json has none
    judge: JudgeSummary | None = ABSENT
    sequential: Sequential | None = ABSENT
    sweep: SweepResult | None = ABSENT


RunSummary = ContractSummary | PipelineSummary  # what every face reads of a run: fields, never .get("...")


class MetricChange(_Part):
    """One metric of a run against its baseline; a rate of rows with each side's interval."""

    metric: str
    before: float
    after: float
    delta: float
    before_interval: Interval | None = ABSENT
    after_interval: Interval | None = ABSENT


class Flip(_Part):
    """A row whose success changed against the baseline."""

    key: str
    row: int
    id: str
    before: str
    after: str
    now_successful: bool


class ModesBoth(_Part):
    """The structure modes each run's rows asked in (rows by mode)."""

    before: dict[str, int]
    after: dict[str, int]


class BaselineReport(_Part):
    """--baseline: what changed per metric against an earlier results file, and which rows flipped."""

    baseline: str
    baseline_rows: int
    matched_rows: int
    structured_output: ModesBoth
    outcome_changed: int
    metrics: list[MetricChange]
    fixed: int
    broken: int
    flipped: list[Flip]

    def as_json(self) -> dict[str, Any]:
        """The report as --json prints it (`baseline`)."""
        return self.model_dump()
