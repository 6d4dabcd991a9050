"""Eval's options are written once (evaluation/options.py): the CLI's flags, the library's config and a worker's job
agree on every option and its default, because the CLI's options are made from the config's fields."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from contractstudio.cli import build_parser
from contractstudio.commands.eval import _config
from contractstudio.evaluation.evaluate import EvalConfig
from contractstudio.evaluation.rows import EvalJob

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
BASE = ["eval", str(SAMPLE), "--data", str(ROWS)]


def eval_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["eval"]


def config_of(*more: str) -> EvalConfig:
    return _config(build_parser().parse_args([*BASE, *more]))


def test_every_config_field_has_a_cli_flag_with_help_or_says_how_the_cli_sets_it() -> None:
    options = {o: a for a in eval_parser()._actions for o in a.option_strings}
    for f in dataclasses.fields(EvalConfig):
        flags, note = f.metadata.get("flags", ()), f.metadata.get("cli")
        assert flags or note, f"EvalConfig.{f.name} has no CLI flag and says nothing of how the CLI sets it"
        for flag in flags:
            assert flag.help.strip(), f"{flag.name} has no help text"
            action = options.get(flag.name)
            assert action is not None, f"EvalConfig.{f.name}'s {flag.name} is not an option of `eval`"
            assert action.dest == f.name and action.help and flag.help in action.help


def test_the_cli_and_the_library_give_the_same_defaults() -> None:
    library = EvalConfig(target=SAMPLE, data=ROWS)
    cli = config_of()
    for f in dataclasses.fields(EvalConfig):
        assert getattr(cli, f.name) == getattr(library, f.name), f"the default of {f.name} differs"


def _value(f: dataclasses.Field[Any], flag: Any) -> list[str]:
    """Arguments that give the flag a value other than the field's default."""
    if flag.switch:
        return [flag.name]
    if flag.choices:
        return [flag.name, [c for c in flag.choices if c != f.default][-1]]
    kind = next(t for t in (typing.get_args(hints[f.name]) or (hints[f.name],)) if t is not type(None))
    value = {int: "3", float: "0.25", Path: "given.jsonl", str: "given"}[kind]
    return [flag.name, value]


hints = typing.get_type_hints(EvalConfig)


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(EvalConfig) if f.metadata.get("flags")])
def test_each_flag_reaches_its_config_field(name: str) -> None:
    f = next(f for f in dataclasses.fields(EvalConfig) if f.name == name)
    for flag in f.metadata["flags"]:
        args = _value(f, flag)
        if flag.name == "--data":
            given = _config(build_parser().parse_args(["eval", str(SAMPLE), *args]))
        else:
            given = config_of(*args)
        expected = flag.const if flag.switch else type(getattr(given, name))(args[1]) if not flag.choices else args[1]
        assert getattr(given, name) == expected, f"{' '.join(args)} did not reach EvalConfig.{name}"
        if flag.implies is not None:
            assert getattr(given, flag.implies[0]) == flag.implies[1]


def test_a_replay_is_the_replay_mode_and_the_three_modes_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    assert config_of("--replay", "old.jsonl").mode == "replay"
    assert config_of("--judge").mode == "judge" and config_of("--scripted").mode == "scripted"
    with pytest.raises(SystemExit):
        config_of("--judge", "--scripted")
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_workers_job_has_no_default_of_its_own_for_an_option_of_the_config() -> None:
    options = {f.name for f in dataclasses.fields(EvalConfig)}
    own = [f.name for f in dataclasses.fields(EvalJob) if f.name in options
           and (f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING)]
    assert own == []  # the job is built from the config (EvalJob.of), so the config's default is the only one
    job = EvalJob.of(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", rpm=5.0, structured="json_schema"), "text")
    assert (job.mode, job.rpm, job.structured, job.wait, job.use_cache) == ("scripted", 5.0, "json_schema", False, False)
