"""The one model of a results record (a contract row or a pipeline row), checked on every record read back.

A results file is read again by `--resume`, `--baseline` and `--replay`, and it may have been edited by
anyone: each line is validated here before a tally, a comparison or a replay uses a field of it, so a wrong
type, a negative count or a forged outcome is a message with its line, never a crash or a row counted wrong.
Unknown keys are allowed (a newer writer may add fields); the fields the readers use are strict.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from contractstudio.documents.provider_profiles import Mode

COUNT = Annotated[int, Field(ge=0, le=10**15)]
AMOUNT = Annotated[float, Field(ge=0, le=1e15)]
ContractOutcome = Literal["first_try", "remedied", "fallback", "raised", "error"]
PipelineOutcome = Literal["end", "assertion_failed", "step_limit", "dead_end", "error"]
CONTRACT_OUTCOMES: tuple[str, ...] = get_args(ContractOutcome)
PIPELINE_OUTCOMES: tuple[str, ...] = get_args(PipelineOutcome)


class _Part(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="allow")


class _Failed(_Part):
    check: str
    message: str = ""


class _FailedAttempt(_Part):
    attempt: COUNT
    failed: list[_Failed]


class _Fault(_Part):
    kind: str
    status: int | None = None
    gave_up: bool = False


class _Tokens(_Part):
    prompt: COUNT
    completion: COUNT


class _Cache(_Part):
    hits: COUNT
    misses: COUNT
    saved_usd: AMOUNT = 0.0


class _EarlyStops(_Part):
    count: COUNT = 0
    tokens: COUNT = 0
    seconds: AMOUNT = 0.0
    saved_tokens: COUNT = 0
    saved_s: AMOUNT = 0.0
    saved_known: COUNT = 0
    tokens_unknown: COUNT = 0


class _Assertion(_Part):
    step: str
    action: str | None = None
    field: str | None = None
    phase: str | None = None


Verdict = Literal["pass", "fail"]


class _Label(_Part):
    output: Verdict | None = None
    conditions: dict[str, Verdict] = {}


class _Reproducibility(_Part):
    seed: list[int] = []
    model_version: list[str] = []
    system_fingerprint: list[str] = []


class _Record(_Part):
    key: str
    row: Annotated[int, Field(ge=1, le=10**15)]
    id: str
    input: Any = None
    contract: str = ""
    contract_sha: Annotated[str, Field(min_length=1)]
    successful: bool
    errors: list[str] = []
    latency_s: AMOUNT
    trace: list[dict[str, Any]] | None = None
    trace_file: str | None = None

    def _outcome_agrees(self, outcome: str, successful_outcomes: tuple[str, ...]) -> None:
        if self.successful != (outcome in successful_outcomes):
            raise ValueError(f"successful is {str(self.successful).lower()} but the outcome is {outcome}")


class ContractRecord(_Record):
    """One contract row, as rows.record / rows.error_record write it."""

    kind: Literal["contract"] = "contract"
    outcome: ContractOutcome
    attempts: COUNT
    llm_calls: COUNT
    failures: list[_FailedAttempt]
    used: str | None = None
    output: Any = None
    transport: list[_Fault]
    transport_failed: bool
    tokens: _Tokens
    cost_usd: AMOUNT
    remedy_cost_usd: AMOUNT
    remedy_tokens: COUNT
    cache: _Cache
    limit_wait_s: AMOUNT
    structured: Mode | None = None  # the mode its output requests asked in
    structure_fallbacks: COUNT = 0
    early_stops: _EarlyStops | None = None  # replies cut early (runtime/streaming.py); older records have none
    label: _Label | None = None  # eval --judge: what a person said of the row's output
    verdicts: dict[str, Verdict] | None = None  # eval --judge: what each condition said of it
    reproducibility: _Reproducibility | None = None  # the seed sent, the model versions and fingerprints that answered

    @model_validator(mode="after")
    def _consistent(self) -> ContractRecord:
        self._outcome_agrees(self.outcome, ("first_try", "remedied"))
        return self


class PipelineRecord(_Record):
    """One simulated pipeline row, as pipelines.PipelineRowRunner writes it."""

    kind: Literal["pipeline"]
    outcome: PipelineOutcome
    path: list[str]
    end_step: str | None = None
    failed_step: str | None = None
    assertion: _Assertion | None = None

    @model_validator(mode="after")
    def _consistent(self) -> PipelineRecord:
        self._outcome_agrees(self.outcome, ("end",))
        return self


Record = ContractRecord | PipelineRecord  # what every reader of results records reads: fields, never .get("...")


class RecordProblem(ValueError):
    """A parsed line that is not a results record of the kind asked (the message names the field and why)."""


def checked_record(value: Any, kind: str) -> Record:
    """The typed record of a parsed results line of `kind` (contract | pipeline); RecordProblem says why it is not one."""
    if not isinstance(value, dict):
        raise RecordProblem(f"a record is a JSON object, not {type(value).__name__}")
    found = value.get("kind", "contract")
    if found != kind and found in ("contract", "pipeline"):
        raise RecordProblem(f"holds results of a {found}, not of a {kind}")
    model = PipelineRecord if kind == "pipeline" else ContractRecord
    try:
        return model.model_validate(value)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
        message = first["msg"].removeprefix("Value error, ")
        raise RecordProblem(f"not a results record: {where + ': ' if where else ''}{message}{more}") from None


def record_problem(value: Any, kind: str) -> str | None:
    """Why a parsed line is not a results record of `kind` (contract | pipeline), or None."""
    try:
        checked_record(value, kind)
    except RecordProblem as err:
        return str(err)
    return None


@overload
def made_record(rec: dict[str, Any], kind: Literal["contract"]) -> ContractRecord: ...
@overload
def made_record(rec: dict[str, Any], kind: Literal["pipeline"]) -> PipelineRecord: ...
@overload
def made_record(rec: dict[str, Any], kind: str) -> Record: ...
def made_record(rec: dict[str, Any], kind: str) -> Record:
    """The typed record of a row that just ran, as the tally, the judge, a baseline and the studio read it; its trace
    stays in the results file (none of them reads it; not copying it keeps this to microseconds a row). A record the
    model refuses is its writer's bug, raised as one, before a run could write a file --resume would refuse."""
    model = PipelineRecord if kind == "pipeline" else ContractRecord
    return model.model_validate({**rec, "trace": None})
