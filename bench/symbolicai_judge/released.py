"""What SymbolicAI 2.2.0's released `@contract` does in the situations docs/symbolicai.md compares (issue 34).

Run it with a Python that has `symbolicai==2.2.0` installed, never this project's venv:

    python3 -m venv /tmp/symai-venv && /tmp/symai-venv/bin/pip install symbolicai==2.2.0
    /tmp/symai-venv/bin/python bench/symbolicai_judge/released.py        # prints one JSON object

A scripted engine registered as SymbolicAI's `neurosymbolic` engine answers each request with the next reply of
a list; the figures printed are the "released SymbolicAI" column of the differences table.
"""

# no `from __future__ import annotations`: SymbolicAI reads forward's annotations unevaluated, and a string
# annotation there is not the model class (it would refuse every forward's result with a TypeError)
import contextlib
import io
import json
import sys
from typing import Any

from pydantic import Field
from symai import Expression
from symai.backend.base import Engine
from symai.functional import EngineRepository
from symai.models import LLMDataModel
from symai.strategy import contract

REPLIES: list[str] = []
ASKED: list[str] = []
NO_WAIT = {"delay": 0, "max_delay": 0, "jitter": 0, "backoff": 1, "graceful": False}


class Scripted(Engine):
    def id(self) -> str:
        return "neurosymbolic"

    def prepare(self, argument: Any) -> None:
        argument.prop.prepared_input = str(argument.prop.processed_input)

    def forward(self, argument: Any) -> tuple[list[str], dict[str, Any]]:
        ASKED.append(str(argument.prop.prepared_input))
        return [REPLIES.pop(0)], {}


def script(*replies: str) -> None:
    REPLIES[:] = list(replies)
    ASKED.clear()


class Claim(LLMDataModel):
    text: str = Field(description="A claim to rate.")


class Verdict(LLMDataModel):
    score: float = Field(description="How true the claim is, 0 to 1.")


class EmptyClaim(ValueError):
    pass


def rated(**settings: Any) -> Any:
    @contract(**settings)
    class Rated(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def pre(self, input: Claim) -> bool:
            if not input.text:
                raise EmptyClaim("The claim is empty.")
            return True

        def post(self, output: Verdict) -> bool:
            if output.score < 0.5:
                raise ValueError(f"Score {output.score} is below 0.5.")
            return True

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result if self.contract_successful else Verdict(score=-1)

    return Rated()


def exception(obj: Any) -> list[str]:
    return [type(obj.contract_exception).__name__, str(obj.contract_exception)]


def measure() -> dict[str, Any]:
    out: dict[str, Any] = {}
    obj = rated(post_remedy=True, remedy_retry_params={"tries": 2, **NO_WAIT})
    script()
    obj(input=Claim(text=""))
    out["pre_raised"] = exception(obj)
    script('{"score": 0.1}', '{"score": 0.2}', '{"score": 0.3}', '{"score": 0.35}')
    obj(input=Claim(text="c"))
    out["post_exhausted"], out["post_exhausted_requests"] = exception(obj), len(ASKED)
    once = rated(post_remedy=False, remedy_retry_params={"tries": 2, **NO_WAIT})
    script('{"score": 0.1}')
    once(input=Claim(text="c"))
    out["post_without_remedy"] = exception(once)

    for graceful in (False, True):
        @contract(remedy_retry_params={"tries": 1, **NO_WAIT, "graceful": graceful})
        class DictReturner(Expression):
            @property
            def prompt(self) -> str:
                return "Rate the claim."

            def forward(self, input: Claim) -> Verdict:
                return {"score": 0.5}  # type: ignore[return-value]

        script('{"score": 0.9}')
        try:
            out[f"forward_returns_a_dict_graceful_{graceful}"] = repr(DictReturner()(input=Claim(text="c")))
        except TypeError as err:
            out[f"forward_returns_a_dict_graceful_{graceful}"] = f"TypeError: {err}"

    @contract(post_remedy=True, remedy_retry_params={"tries": 1, **NO_WAIT})
    class FalsePost(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def post(self, output: Verdict) -> bool:
            return output.score > 0.5

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result if self.contract_successful else Verdict(score=-1)

    false_post = FalsePost()
    script('{"score": 0.1}', '{"score": 0.2}', '{"score": 0.3}')
    false_post(input=Claim(text="c"))
    out["post_returns_false"] = exception(false_post)

    seen: list[str] = []

    @contract(post_remedy=True, remedy_retry_params={"tries": 2, **NO_WAIT})
    class Tags(Expression):
        @property
        def prompt(self) -> str:
            return "Tag the claim."

        def post(self, output: list[str]) -> bool:
            seen.append(type(output).__name__)
            if len(getattr(output, "value", output)) < 2:
                raise ValueError("Give at least two tags.")
            return True

        def forward(self, input: Claim) -> list[str]:
            return self.contract_result if self.contract_successful else []

    script('{"value": ["a"]}', '{"value": ["a", "b"]}')
    out["list_post_argument_types"], out["list_post_result"] = seen, Tags()(input=Claim(text="c"))

    try:
        contract(post_remedyy=True)  # type: ignore[call-arg]
        out["unknown_keyword"] = "accepted"
    except TypeError as err:
        out["unknown_keyword"] = f"TypeError: {err}"[:120]
    typo = rated(remedy_retry_params={"tries": 1, "backof": 2, **NO_WAIT})
    script('{"score": 0.9}')
    typo(input=Claim(text="c"))
    out["unknown_retry_key"] = f"ignored, successful={typo.contract_successful}"

    @contract(post_remedy=True)
    class NoPost(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result if self.contract_successful else Verdict(score=-1)

    no_post = NoPost()
    script('{"score": 0.9}')
    no_post(input=Claim(text="c"))
    out["post_remedy_without_post"] = [no_post.contract_successful, *exception(no_post)]

    out.update(more())
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        loud = rated(verbose=True, post_remedy=True, remedy_retry_params={"tries": 2, **NO_WAIT})
        script('{"score": 0.1}', '{"score": 0.2}', '{"score": 0.9}')
        loud(input=Claim(text="c"))
        loud.contract_perf_stats()
        rated().contract_perf_stats()
    lines = shown.getvalue().splitlines()
    out["verbose_panel_titles"] = [line for line in lines if line.startswith("--- ")]
    out["perf_lines"] = [line for line in lines if line.startswith(("Contract Execution", "Operation", "No contract"))]
    return out


def more() -> dict[str, Any]:
    """The rows read in issue 20, measured again: call counts, reading replies, results across calls, act's kwargs."""
    import inspect

    out: dict[str, Any] = {"defaults": {name: p.default for name, p in inspect.signature(contract.__init__).parameters.items()
                                        if name != "self"}}
    obj = rated(post_remedy=True, remedy_retry_params={"tries": 2, **NO_WAIT})
    script('{"score": 0.1}', '{"score": 0.2}', '{"score": 0.9}', '{"score": 0.9}', '{"score": 0.9}')
    obj(input=Claim(text="c"))
    out["tries_2_fail_fail_pass_requests"] = len(ASKED)
    script('{"score": 0.9}')
    obj(input=Claim(text="c"))
    first_result = obj.contract_result
    script('```json\n{"score": 0.9}\n```', *['```json\n{"score": 0.9}\n```'] * 4)
    obj(input=Claim(text="c"))
    out["fenced_reply"] = [obj.contract_successful, type(obj.contract_exception).__name__]
    out["contract_result_after_a_failed_call_is_the_previous"] = obj.contract_result is first_result
    script('{"score": 0.1}', '{"score": 0.2}', "I cannot answer.", "still no", "no")
    obj(input=Claim(text="c"))
    out["last_reply_not_json"] = [obj.contract_successful, type(obj.contract_exception).__name__]
    strict = rated(remedy_retry_params={"tries": 1, **NO_WAIT})
    script('{"score": "high"}', '{"score": "high"}')
    strict(input=Claim(text="c"))
    out["post_remedy_false_malformed_reply_requests"] = len(ASKED)

    kwargs_seen: list[list[str]] = []

    @contract()
    class Quiet(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def pre(self, input: Claim) -> None:
            return None

        def act(self, input: Claim, **kwargs: Any) -> Claim:
            kwargs_seen.append(sorted(kwargs))
            return input

        def forward(self, input: Claim, **kwargs: Any) -> str:
            return "plain" if self.contract_successful else "failed"

    quiet = Quiet()
    script('{"value": "x"}')
    try:
        out["str_forward_returning_a_plain_str"] = repr(quiet(input=Claim(text="c"), lang="en"))
    except TypeError as err:
        out["str_forward_returning_a_plain_str"] = f"TypeError: {str(err)[:80]}"
    out["pre_returning_none"] = [quiet.contract_successful, type(quiet.contract_exception).__name__]

    @contract()
    class Acting(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def act(self, input: Claim, **kwargs: Any) -> Claim:
            kwargs_seen.append(sorted(kwargs))
            return input

        def forward(self, input: Claim, **kwargs: Any) -> Verdict:
            return self.contract_result if self.contract_successful else Verdict(score=-1)

    script('{"score": 0.9}')
    Acting()(input=Claim(text="c"), lang="en")
    out["act_kwargs"] = kwargs_seen
    return out


if __name__ == "__main__":
    EngineRepository.register("neurosymbolic", Scripted(), allow_engine_override=True)
    json.dump(measure(), sys.stdout, indent=1, default=str)
    print()
