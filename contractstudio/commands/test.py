"""`contractstudio test PATH...`: every `scenarios:` entry of every contract, offline, pytest-like."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, usage_error


def _subset(expected: Any, actual: Any, path: str = "output") -> list[str]:
    """Where `actual` does not contain `expected` (dicts by key, everything else by equality)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out: list[str] = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{path}.{k}: missing")
            else:
                out.extend(_subset(v, actual[k], f"{path}.{k}"))
        return out
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


def run_scenario(contract: Any, scenario: Any) -> list[str]:
    """Run one scenario offline; the reasons it failed (empty when it passed)."""
    from contractstudio.runtime.engine import CallOptions
    from contractstudio.runtime.errors import ContractError
    from contractstudio.runtime.models import ScriptedModel
    from contractstudio.runtime.session import Session

    model = ScriptedModel(list(scenario.responses), name=f"scripted:{scenario.name}")
    try:
        session = Session(contract.plan, scenario.input, model, CallOptions(wait=False), accumulated=contract.perf)
        result = session.run(raise_on_violation=False)
    except ContractError as err:
        return [str(err)]
    exp = scenario.expect
    raised = result.violation is not None
    problems: list[str] = []
    wants_success = exp.successful if exp.successful is not None else (None if exp.raises is not None else True)
    if wants_success is not None and result.successful != wants_success:
        problems.append(f"successful: expected {wants_success}, got {result.successful}")
    if exp.raises is not None and raised != exp.raises:
        problems.append(f"raises: expected {exp.raises}, got {raised}")
    if exp.llm_calls is not None and result.llm_calls != exp.llm_calls:
        problems.append(f"llm_calls: expected {exp.llm_calls}, got {result.llm_calls}")
    if exp.remedy_attempts is not None and result.attempts != exp.remedy_attempts:
        problems.append(f"remedy_attempts: expected {exp.remedy_attempts}, got {result.attempts}")
    if exp.output is not None:
        problems.extend(_subset(exp.output, result.output_data))
    if problems and result.errors:
        problems.append("errors of the call: " + " | ".join(result.errors[-3:]))
    return problems


def run(args: Any) -> int:
    from contractstudio.analysis.check import discover
    from contractstudio.runtime.api import Contract, load_all
    from contractstudio.runtime.errors import ContractError

    for p in args.paths:
        if not Path(p).exists():
            return usage_error(f"no such file or folder: {p}")
    passed = failed = 0
    for file in discover(args.paths):
        try:
            objects = load_all(file, trust=args.trust)
        except ContractError as err:
            text = file.read_text(encoding="utf-8", errors="replace") if file.is_file() else ""
            if "scenarios:" in text:  # a broken file without scenarios has nothing to test; `check` reports it
                failed += 1
                print(f"{file} ERROR")
                for line in str(err).splitlines()[1:]:
                    print(f"    {line.strip()}")
            continue
        for contract in objects:
            if not isinstance(contract, Contract):
                continue
            for scenario in contract.doc.scenarios:
                name = f"{file}::{contract.name}::{scenario.name}"
                if args.k and args.k not in name:
                    continue
                problems = run_scenario(contract, scenario)
                if problems:
                    failed += 1
                    print(f"{name} FAILED")
                    for line in problems:
                        print(f"    {line}")
                else:
                    passed += 1
                    print(f"{name} PASSED")
    sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return EXIT_PROBLEM if failed else EXIT_OK
