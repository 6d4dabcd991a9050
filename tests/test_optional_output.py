"""An output type that admits null (`list[str] | None`): the reply `null` is a successful call returning None."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.cli import main
from contractstudio.runtime.call_state import CallOptions

MAYBE = Path(__file__).parent / "runtime_contracts" / "optional_output.contract.yaml"


def test_the_scenarios_of_an_optional_output_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(MAYBE)]) == 0, capsys.readouterr().out
    assert "3 passed, 0 failed" in capsys.readouterr().out


def test_a_null_reply_is_a_successful_none() -> None:
    result = cs.load(MAYBE).call({"words": []}, ["null"], options=CallOptions(wait=False))
    assert result.successful and result.output is None and result.errors == []
    assert result.trace[-1]["successful"] is True and result.trace[-1]["output"] is None


def test_a_list_reply_is_still_the_output() -> None:
    result = cs.load(MAYBE).call({"words": ["x", "y"]}, ['["x", "y"]'], options=CallOptions(wait=False))
    assert result.successful and result.output == ["x", "y"]
