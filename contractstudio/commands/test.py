"""`contractstudio test PATH...`: every `scenarios:` entry of every contract, offline, pytest-like."""

from __future__ import annotations

import sys
from typing import Any

from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused
from contractstudio.safe_text import printable, shown


def _subset(expected: Any, actual: Any, path: str = "output") -> list[str]:
    """Where `actual` does not contain `expected`: objects by key, lists item by item, everything else by equality."""
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
    if isinstance(expected, list):
        # Same length, in order: each item is matched the way the whole output is, so an object inside a
        # list may name only the fields the scenario cares about (issue 21.14).
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {actual!r}"]
        if len(expected) != len(actual):
            return [f"{path}: expected a list of {len(expected)} item(s), got {len(actual)}"]
        return [p for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for p in _subset(e, a, f"{path}[{i}]")]
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


def _texts(what: str, expected: list[str], actual: list[str]) -> list[str]:
    """Where a list of error texts differs: the count, or an expected text that is not part of its error."""
    if len(expected) != len(actual):
        return [f"{what}: expected {len(expected)}, got {len(actual)}: {actual!r:.300}"]
    return [f"{what}[{i}]: expected a text containing {e!r}, got {a!r:.200}" for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            if e not in a]


def _remedy_expectations(exp: Any, result: Any) -> list[str]:
    """remedy_errors, remedy_waits, errors and perf, read from the call's trace and perf stats."""
    problems: list[str] = []
    from contractstudio.runtime.events import ModelRequest, RetryWait

    trace = result.trace
    if exp.remedy_errors is not None:
        sent = [list(e.errors or []) for e in trace.of(ModelRequest) if e.remedy]
        if len(sent) != len(exp.remedy_errors):
            problems.append(f"remedy_errors: expected {len(exp.remedy_errors)} remedy request(s), got {len(sent)}")
        else:
            for i, (want, got) in enumerate(zip(exp.remedy_errors, sent, strict=True)):
                problems.extend(_texts(f"remedy_errors[{i}]", want, got))
    if exp.remedy_waits is not None:
        waits = [e.seconds for e in trace.of(RetryWait) if e.kind == "remedy"]
        if len(waits) != len(exp.remedy_waits) or any(abs(w - x) > 1e-9 for w, x in zip(waits, exp.remedy_waits, strict=False)):
            problems.append(f"remedy_waits: expected {exp.remedy_waits}, got {[round(w, 6) for w in waits]}")
    if exp.errors is not None:
        problems.extend(_texts("errors", exp.errors, list(result.errors)))
    if exp.perf is not None:
        stats = result.perf_stats(cumulative=False)
        ran = [k for k in stats if k not in ("overhead", "total_execution", "llm")]
        if exp.perf.stages is not None and ran != list(exp.perf.stages):
            problems.append(f"perf.stages: expected {list(exp.perf.stages)}, got {ran}")
        if exp.perf.percent_total is not None:
            total = sum(stats[k]["percentage"] for k in [*ran, "overhead"])
            if abs(total - exp.perf.percent_total) > 1e-6:
                problems.append(f"perf.percent_total: expected {exp.perf.percent_total:g}, got {total:.6f}")
    return problems


def run_scenario(contract: Any, scenario: Any) -> list[str]:
    """Run one scenario offline; the reasons it failed (empty when it passed)."""
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.runtime.errors import ContractError
    from contractstudio.runtime.model_choice import scripted_model
    from contractstudio.runtime.session import Session

    model = scripted_model(scenario)
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
    problems.extend(_remedy_expectations(exp, result))
    if problems and result.errors:
        problems.append("errors of the call: " + " | ".join(result.errors[-3:]))
    return problems


def run(args: Any) -> int:
    from contractstudio.analysis.check import survey
    from contractstudio.runtime.api import Contract, load_all
    from contractstudio.runtime.errors import ContractError
    from contractstudio.trust import Trust

    if (refused := files_refused(args.paths, folders=True)) is not None:  # a FIFO named here would block the run
        return refused
    passed = failed = skipped = 0
    trust = Trust.for_command(args.paths, args.trust)  # per folder: named with --trust, or remembered
    for file, found in survey(args.paths):
        if found.verdict == "unreadable":  # a .contractstudioignore that is not read: said as `check` says it
            print(printable(f"contractstudio: skipped {file}: {found.reason}"), file=sys.stderr)
        if not found.ours:
            continue
        try:
            objects = load_all(file, trust=trust.allows(file), dialect=args.dialect)
        except ContractError as err:
            text = file.read_text(encoding="utf-8", errors="replace") if file.is_file() else ""
            if "scenarios:" in text:  # a broken file without scenarios has nothing to test; `check` reports it
                failed += 1
                print(f"{shown(str(file))} ERROR")
                for line in str(err).splitlines()[1:]:
                    print(f"    {shown(line.strip())}")
            continue
        for contract in objects:
            if not isinstance(contract, Contract):
                continue
            for scenario in contract.doc.scenarios:
                name = f"{file}::{contract.name}::{scenario.name}"
                if args.k and args.k not in name:
                    skipped += 1
                    continue
                problems = run_scenario(contract, scenario)
                if problems:
                    failed += 1
                    print(f"{shown(name)} FAILED")
                    for line in problems:
                        print(f"    {shown(line)}")
                else:
                    passed += 1
                    print(f"{shown(name)} PASSED")
    sys.stdout.flush()
    if passed + failed == 0:  # a test run that tested nothing must not look like a green one
        why = f"-k {args.k!r} selected none of {skipped}" if skipped else "the files hold no scenarios"
        print(f"no scenarios ran: {why}")
        return EXIT_PROBLEM
    print(f"{passed} passed, {failed} failed")
    return EXIT_PROBLEM if failed else EXIT_OK
