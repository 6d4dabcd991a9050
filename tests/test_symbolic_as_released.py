"""SymbolicAI programs as its users write them behave here as on the released package (symbolicai 2.2.0).

Each test's docstring says what the released decorator (`symai/strategy.py`, `symai/models/base.py` of the
2.2.0 wheel) does in the same situation; the assertions are ours, on what the user sees.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

import contractstudio as cs
from contractstudio.symbolic import Expression, LLMDataModel, contract, use_model


class Claim(LLMDataModel):
    text: str = Field(description="A claim to rate.")


class Verdict(LLMDataModel):
    score: float = Field(description="How true the claim is, 0 to 1.")


def call(obj: Any, *replies: str, **kwargs: Any) -> Any:
    with use_model(cs.ScriptedModel(list(replies)), wait=False):
        return obj(**kwargs)


# ---------------------------------------------------------------- 1. forward's return type


def _dict_returner(graceful: bool) -> Any:
    @contract(remedy_retry_params={"tries": 1, "delay": 0, "graceful": graceful})
    class DictReturner(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def forward(self, input: Claim) -> Verdict:
            return {"score": 0.5}  # type: ignore[return-value]

    return DictReturner()


def test_forward_returning_a_dict_for_a_model_annotation_raises_type_error() -> None:
    """2.2.0: `_finalize_contract_output` checks `isinstance(output, output_type)`; a dict for `-> Verdict` raises
    TypeError ("Forward method must return an instance of ...")."""
    with pytest.raises(TypeError, match="must return"):
        call(_dict_returner(False), '{"score": 0.9}', input=Claim(text="c"))


def test_forward_returning_a_dict_with_graceful_returns_the_dict_as_is() -> None:
    """2.2.0: with `graceful: True` the mismatching output is returned as it is (the dict, not a model)."""
    result = call(_dict_returner(True), '{"score": 0.9}', input=Claim(text="c"))
    assert result == {"score": 0.5} and type(result) is dict
