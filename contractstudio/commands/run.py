"""`contractstudio run CONTRACT --input FILE|-`: one contracted call, with readable progress or --json."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused, usage_error
from contractstudio.safe_text import printable, shorten, shown
from contractstudio.storage.atomic import target_problem
from contractstudio.storage.paths import input_problem

if TYPE_CHECKING:
    from contractstudio.runtime.events import Event


def read_input(spec: str) -> Any:
    """The input value from a YAML or JSON file, or stdin for '-': read like a document (reading.source.read_value)."""
    from contractstudio.reading.files import decode
    from contractstudio.reading.source import read_value

    if spec == "-":
        return read_value(sys.stdin.read(), spec)
    text, problem = decode(Path(spec).read_bytes(), spec)  # check's own words for bytes that are not UTF-8, with the file's name
    if text is None:
        raise ValueError(f"{spec}: {problem.message if problem else 'the file is not UTF-8 text'}")
    return read_value(text, spec)


def recorded_input(trace_path: str) -> Any:
    """The input recorded at the start of a trace (the `input` stage_start event), or None; NotATrace when it is none."""
    from contractstudio.runtime.trace import recorded_start

    start = recorded_start(trace_path)
    return start.value if start is not None else None


def contradictions(args: Any) -> tuple[str | None, list[str]]:
    """Options that contradict each other (a usage error), and options that are harmlessly unused (notes)."""
    given = [flag for flag, value in (("--replay", args.replay), ("--scenario", args.scenario), ("--replies", args.replies))
             if value]
    if len(given) > 1:
        return f"{' and '.join(given)} {'both' if len(given) == 2 else 'all'} give the model's replies; use one", []
    notes = []
    if args.scenario and args.input:  # a what-if: the scenario's replies to another input
        notes.append(f"--input replaces the input of scenario '{args.scenario}'; its scripted replies are used")
    source = ("the scenario's scripted replies" if args.scenario else "the recorded replies of the trace" if args.replay
              else "the replies of the --replies file" if args.replies else None)
    if source:
        notes += [f"{flag} is not used: the replies come from {source}" for flag, value in
                  (("--model", args.model), ("--api-base", args.api_base)) if value]
    return None, notes


def describe(event: Event) -> list[str]:
    """The progress lines of one event (most events print nothing)."""
    from contractstudio.runtime import events as ev

    match event:
        case ev.StageStart(stage="generate", attempt=attempt) if attempt:
            return [f"remedy #{attempt}"]
        case ev.StageEnd():
            return [f"  {event.stage:<9} {'ok' if event.ok else 'FAILED':<7} {event.duration_s * 1000:8.1f} ms"]
        case ev.ConditionChecked() if event.failed:
            return [f"    x {event.message}"]
        case ev.ModelRequest():
            retry = f", transport retry {event.transport_retry}" if event.transport_retry else ""
            structure = f", {event.structured_output}" if event.structured_output else ""
            return [f"    -> {event.model} ({event.purpose}, {len(event.messages)} messages{structure}{retry})"]
        case ev.ModelReply():
            return [f"    <- {event.chars} chars, {event.prompt_tokens}+{event.completion_tokens} tokens, "
                    f"{event.latency_s:.2f} s: {shorten(event.text.replace(chr(10), ' '), 70)}"]
        case ev.ValidationFailure() if event.where not in ("pre", "post"):  # failed conditions were printed already
            return [f"    x {event.where}: {e}" for e in event.errors]
        case ev.TransportFailure():
            status = f" HTTP {event.status}" if event.status else ""
            return [f"    ! {event.exception}{status} ({event.kind}){' - giving up' if event.gave_up else ''}: "
                    f"{shorten(event.message, 120)}"]
        case ev.RetryWait():
            note = "" if event.waited else " (not waited: --no-wait)"
            return [f"    ... {event.kind} wait {event.seconds:.2f} s{note}"]
        case ev.ReplayDivergence() | ev.ModelFailure():
            return [f"    ! {event.message}"]
        case ev.RemedyExhausted():
            return [f"    x remedy ({event.loop}) exhausted after {event.attempts} attempt(s)"]
        case ev.StructureFallback():
            shape = f" ({event.to_shape} shape)" if event.to_shape else ""
            return [f"    ! structured output {event.from_mode} -> {event.to_mode}{shape}: {shorten(event.reason, 120)}"]
    return []


def run(args: Any) -> int:
    from contractstudio.runtime.api import load_contract
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.runtime.choosing import ChoiceError
    from contractstudio.runtime.errors import ContractError, ModelError
    from contractstudio.runtime.model_choice import ModelChoice, replies_model
    from contractstudio.runtime.python_classes import python_target
    from contractstudio.trust import Trust

    target = python_target(args.contract)  # path/module.py:ClassName: a contracted Python class
    path = target[0] if target is not None else Path(args.contract)
    if (refused := files_refused([path, args.replay, args.replies])) is not None:
        return refused
    if args.input and args.input != "-" and (problem := input_problem(args.input)):
        hint = ("--input takes a file (or - for stdin), not JSON itself: echo '{...}' | contractstudio run CONTRACT --input -"
                if args.input.lstrip()[:1] in ("{", "[", '"') else None)
        return usage_error(problem, hint)
    conflict, notes = contradictions(args)
    if conflict:
        return usage_error(conflict)
    if args.trace and (problem := target_problem(args.trace)):  # checked before the call: a paid result is never lost
        return usage_error(f"cannot write the trace: {problem}")
    if args.save_scenario and (problem := scenario_problem(args, path)):
        return usage_error(problem)
    try:  # a file with several contracts runs the first, the one holding --scenario, or the replayed one
        contract = load_contract(path, name=target[1] if target is not None else None, replay=args.replay,
                                 scenario=args.scenario, trust=Trust.for_command([path], args.trust).allows(path),
                                 dialect=args.dialect)  # the contract's own folder decides its trust
    except ChoiceError as err:
        return usage_error(str(err))
    except ContractError as err:
        print(printable(f"contractstudio: {err}", lines=True), file=sys.stderr)
        return EXIT_PROBLEM
    scenario = contract.scenario(args.scenario) if args.scenario else None
    value, problem = call_input(args, scenario)
    if problem is not None:
        return usage_error(problem)
    choice = ModelChoice.from_flags(scenario=args.scenario, replay=args.replay, model=args.model)
    try:
        model = replies_model(Path(args.replies)) if args.replies else choice.model(contract, api_base=args.api_base)
        session = contract.session(value, model, options=CallOptions(wait=not args.no_wait))
    except (ModelError, ValueError) as err:
        return usage_error(str(err))
    except ContractError as err:
        print(printable(f"contractstudio: {err}", lines=True), file=sys.stderr)
        return EXIT_PROBLEM
    return drive(args, contract.name, contract.input_type, model, session, notes)


def call_input(args: Any, scenario: Any = None) -> tuple[Any, str | None]:
    """The call's input (--input, the scenario's, or the one the replayed trace recorded), or the usage error saying why not."""
    if args.input:
        try:
            return read_input(args.input), None
        except OSError as err:  # a missing file, a FIFO or a folder was refused before (files_refused)
            return None, f"cannot read the input: {err.strerror or err}: {args.input}"
        except ValueError as err:  # names the file itself (not UTF-8, not one YAML document)
            return None, str(err)
    if scenario is not None:
        return scenario.input, None
    if args.replay:
        from contractstudio.runtime.trace import NotATrace

        try:
            value = recorded_input(args.replay)
        except NotATrace as err:
            return None, str(err)
        return (value, None) if value is not None else (None, f"{args.replay} records no input; pass --input FILE")
    return None, "an input is needed: --input FILE (YAML or JSON, - for stdin), --scenario NAME, or --replay TRACE"


def drive(args: Any, name: str, input_type: str, model: Any, session: Any, notes: list[str]) -> int:
    """Run a started call to its end, printing each event (or the JSON summary); the exit code."""
    from contractstudio.runtime.errors import InvalidInput
    from contractstudio.runtime.perf import format_table
    from contractstudio.runtime.trace import jsonable, redact  # nothing printed may carry a key (shown() redacts too)

    for note in notes:  # once the call is sure to start: a refused input is the one message
        print(printable(f"contractstudio: note: {note}"), file=sys.stderr)
    if not args.json:
        print(shown(f"{name}: {model.name}"))
    while (event := session.step()) is not None:
        if not args.json:
            for line in describe(event):
                print(shown(line), flush=True)
    result = session.result
    assert result is not None
    trace_problem = _write_trace(session, args.trace) if args.trace else None
    saved_problem = _save_scenario(args, name, session) if args.save_scenario else None
    raised = result.violation is not None
    invalid = isinstance(result.violation, InvalidInput)
    if args.json:
        fields = {"successful": result.successful, "output": result.output_data, "llm_calls": result.llm_calls,
                  "remedy_attempts": result.attempts, "errors": result.errors, "raised": raised, "invalid_input": invalid,
                  "perf": result.perf_stats(cumulative=False), "trace": None if trace_problem else args.trace}
        if trace_problem:
            fields["trace_error"] = trace_problem
        print(printable(redact(json.dumps(jsonable(fields), indent=2, allow_nan=False)), json=True))
    else:
        verdict = "successful" if result.successful else ("FAILED (raised ContractViolation)" if raised else "FAILED (fallback returned)")
        if invalid:
            done = "nothing was called" if not result.llm_calls else "the pre-remedy could not repair it"
            verdict = f"FAILED (the input is not a valid {input_type}: {done})"
        print(printable(f"\n{verdict}: {result.llm_calls} LLM call(s), {result.attempts} remedy attempt(s)", lines=True))
        if result.errors and not result.successful:
            print("errors:")
            for i, e in enumerate(result.errors, 1):
                print(shown(f"  {i}. {e}"))
        print("output:")
        print(printable(redact(json.dumps(jsonable(result.output_data), indent=2, ensure_ascii=False, allow_nan=False)), json=True))
        print()
        print(format_table(result.perf_stats(cumulative=False)))
        if args.trace and not trace_problem:
            print(printable(f"trace written to {args.trace}"))
        if args.save_scenario and not saved_problem:
            print(printable(f"scenario '{args.save_scenario}' added to {args.contract}: contractstudio test {args.contract}"))
    if trace_problem:  # after the result: a failed trace write never hides what the call returned
        print(printable(f"contractstudio: the trace was not written: {trace_problem}"), file=sys.stderr)
    if saved_problem:
        print(printable(f"contractstudio: the scenario was not saved: {saved_problem}"), file=sys.stderr)
    if trace_problem or saved_problem:
        return EXIT_PROBLEM
    return EXIT_OK if result.successful and not raised else EXIT_PROBLEM


def scenario_problem(args: Any, path: Path) -> str | None:
    """Why --save-scenario cannot be kept (checked before the call), or None."""
    if args.scenario or args.replies:
        return "--save-scenario records a call to a live model or a replayed trace; this one's replies are scripted already"
    if path.suffix == ".py":
        return "--save-scenario adds to a YAML contract's scenarios: a Python class has none (--replies replays a call)"
    problem = target_problem(path)
    return f"cannot save the scenario: {problem}" if problem else None


def _save_scenario(args: Any, contract: str, session: Any) -> str | None:
    """Add the call to the contract's file as a scenario (the file is re-read: it may have changed since); why not, or None."""
    from contractstudio.editing.scenario_text import with_scenario
    from contractstudio.runtime.recorded_scenario import scenario_of
    from contractstudio.storage.atomic import write_atomic

    path = Path(args.contract)
    try:
        text = with_scenario(path.read_text(encoding="utf-8"), contract, scenario_of(session.trace, args.save_scenario))
        write_atomic(path, text)
    except (OSError, ValueError) as err:
        return f"{path}: {getattr(err, 'strerror', None) or err}"
    return None


def _write_trace(session: Any, target: str) -> str | None:
    """Write the trace; why it could not be written, or None."""
    try:
        session.trace.write(target)
    except (OSError, ValueError) as err:
        return f"{target}: {getattr(err, 'strerror', None) or err}"
    return None
