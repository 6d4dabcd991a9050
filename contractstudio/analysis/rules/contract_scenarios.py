"""A contract's scenarios (CON108) and examples (CON109): what the studio and `contractstudio test` will run.

CON108: scenarios whose `expect` cannot hold, or whose responses cannot be parsed as needed.

Sound by construction: a scenario is reported only when the engine's own
rules make the expectation impossible (counts it can never reach, a reply
that must be accepted but cannot be, an input that fails before any call).
The engine's JSON extraction is reused so analysis and runtime agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.rules.registry import UNREAD, Each, rule
from contractstudio.documents.models import Contract, Scenario
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions import ExpressionError, compile_expression
from contractstudio.expressions.sandbox import BudgetSpent, active_expression_budget
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.reading.replies import extract_json

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


def _validator(types: TypeSystem, name: str) -> Any:
    try:
        return types.model(name) if types.declared(name) else None
    except Exception:  # noqa: BLE001 - a type pydantic cannot build is reported elsewhere
        return None


def _invalid(model: Any, value: Any) -> str | None:
    """The first validation error of value against model, or None when it is valid."""
    from pydantic import ValidationError

    try:
        model.model_validate(value)
        return None
    except ValidationError as err:
        errors = err.errors()
        first: dict[str, Any] = dict(errors[0]) if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ())) or "value"
        return f"{where}: {first.get('msg', 'invalid')}"


@rule("CON108", "scenario-cannot-hold", "error", kinds=("contract",))
def scenario_cannot_hold(loaded: LoadedContract) -> Iterator[Diagnostic]:
    """A scenario whose `expect` cannot hold, or whose responses cannot be parsed as needed."""
    doc, types = loaded.contract, loaded.types
    if not doc.scenarios:
        return
    out_model = _validator(types, doc.output) if doc.output else None
    in_model = _validator(types, doc.input) if doc.input else None
    loops = (1 if doc.remedy.post else 0) + (1 if doc.remedy.pre and doc.pre else 0)
    max_calls = 1 + loops * doc.remedy.retry.tries
    for sc in doc.scenarios:
        found = list(_one(loaded, doc, sc, out_model, in_model, loops, max_calls))
        found += _remedy_claims(loaded, doc, sc, loops)
        if not found:  # one finding per scenario is enough; this one needs the rest to hold
            found = list(_first_reply_claims(loaded, doc, sc, out_model, in_model))
        yield from found


def wants_success(sc: Scenario) -> bool | None:
    """What `contractstudio test` expects of `successful`: as written; else success unless `raises` is given."""
    ex = sc.expect
    if ex.successful is not None:
        return ex.successful
    return None if ex.raises is not None else True


def _first_reply_claims(loaded: Loaded, doc: Contract, sc: Scenario, out_model: Any, in_model: Any) -> Iterator[Diagnostic]:
    """CON108 when response 1 is certainly accepted but the scenario expects otherwise."""
    ex, calls, name = sc.expect, sc.expect.llm_calls, f"scenario '{sc.name}'"
    if sc.responses and out_model is not None and _accepted_first(loaded, doc, sc, in_model, out_model):
        claim = f"{name}: response 1 is a valid {doc.output} that passes every condition, so the call succeeds with 1 LLM call"
        if wants_success(sc) is False:
            yield loaded.diag("CON108", f"{claim}, but the scenario expects failure", sc, "expect", "successful")
        elif calls is not None and calls != 1:
            yield loaded.diag("CON108", f"{claim}, but the scenario expects {calls}", sc, "expect", "llm_calls")
        elif ex.remedy_attempts:
            yield loaded.diag("CON108", f"{claim} and no remedy, but the scenario expects {ex.remedy_attempts} remedy attempts",
                              sc, "expect", "remedy_attempts")
        elif ex.raises is True and ex.successful is None:
            yield loaded.diag("CON108", f"{claim}, and a successful call never raises", sc, "expect", "raises")


def _one(loaded: Loaded, doc: Contract, sc: Scenario, out_model: Any, in_model: Any, loops: int, max_calls: int) -> Iterator[Diagnostic]:
    ex = sc.expect
    name = f"scenario '{sc.name}'"
    n = len(sc.responses)
    calls = ex.llm_calls
    if calls is not None:
        if calls > n:
            yield loaded.diag("CON108", f"{name} expects {calls} LLM calls but scripts only {n} response{'s' if n != 1 else ''}",
                              sc, "expect", "llm_calls", hint="add responses or lower expect.llm_calls")
        elif calls > max_calls:
            yield loaded.diag("CON108", f"{name} expects {calls} LLM calls but this contract makes at most {max_calls} "
                              f"(1 + {loops} remedy loop{'s' if loops != 1 else ''} x {doc.remedy.retry.tries} tries)",
                              sc, "expect", "llm_calls")
        if calls > n or calls > max_calls:
            return  # the count alone cannot hold; what the replies would do is beside the point
    if ex.remedy_attempts is not None:
        most = loops * doc.remedy.retry.tries
        if ex.remedy_attempts > most:
            yield loaded.diag("CON108", f"{name} expects {ex.remedy_attempts} remedy attempts but at most {most} can happen",
                              sc, "expect", "remedy_attempts")
        elif calls is not None and abs(calls - ex.remedy_attempts) > 1:
            yield loaded.diag("CON108", f"{name}: {calls} LLM calls and {ex.remedy_attempts} remedy attempts cannot both hold "
                              "(each remedy attempt is one LLM call after the first)", sc, "expect", "remedy_attempts")
    wants = wants_success(sc)
    if wants is True and ex.raises is True:
        yield loaded.diag("CON108", f"{name} expects success and a raised ContractViolation: a successful call never raises",
                          sc, "expect", "raises")
    if ex.raises is True and doc.on_failure == "fallback" and doc.fallback is None:
        yield loaded.diag("CON108", f"{name} expects a raise, but on_failure is 'fallback': a failed call returns instead",
                          sc, "expect", "raises", hint="set on_failure: raise")
    if wants is not True:
        return
    if calls == 0:
        yield loaded.diag("CON108", f"{name} expects success with 0 LLM calls: a call succeeds only on an accepted reply",
                          sc, "expect", "llm_calls")
        return
    if ex.output is not None and out_model is not None:
        declared = {info.alias or key for key, info in out_model.model_fields.items()}
        for key in ex.output:
            if key not in declared:
                yield loaded.diag("CON108", f"{name} expects output field '{key}', which {doc.output} does not have",
                                  sc, "expect", "output", key, key=True)
    value = _input_value(loaded, sc, in_model)
    if value is _INVALID:
        yield loaded.diag("CON108", f"{name} expects success but its input is not a valid {doc.input}: the call fails before any LLM call",
                          sc, "input")
        return
    failing = _failing_pre(loaded, doc, value)
    if failing is not None and not doc.remedy.pre:
        yield loaded.diag("CON108", f"{name} expects success but its input fails pre condition {failing} (and remedy.pre is false)",
                          sc, "input")
        return
    if out_model is None or not sc.responses:
        return
    if calls is not None and 0 < calls <= len(sc.responses) and not (doc.remedy.pre and doc.pre):
        accepted = sc.responses[calls - 1]
        problem = _reply_problem(accepted, out_model, doc.output, doc.json_reply == "strict")
        if problem:
            yield loaded.diag("CON108", f"{name}: the call must accept response {calls} to succeed with {calls} LLM calls, "
                              f"but it {problem}", sc, "responses", calls - 1)
        return
    problems = [_reply_problem(r, out_model, doc.output, doc.json_reply == "strict") for r in sc.responses]
    if all(problems):
        yield loaded.diag("CON108", f"{name} expects success but no response is a valid {doc.output} "
                          f"(response 1 {problems[0]})", sc, "responses", key=True)


_INVALID = object()


def _input_value(loaded: Loaded, sc: Scenario, in_model: Any) -> Any:
    if in_model is None:
        return None
    from pydantic import ValidationError

    try:
        return in_model.model_validate(sc.input)
    except ValidationError:
        return _INVALID


def _failing_pre(loaded: Loaded, doc: Contract, value: Any) -> str | None:
    """The label of the first pre condition that certainly fails on the input (expressions only), or None."""
    if value is None:
        return None
    for i, cond in enumerate(doc.pre):
        if cond.python is not None or cond.assert_ is None:
            return None  # a hook decides; nothing is certain after it
        try:
            if cond.when is not None and not _evaluate(loaded, cond, "when", {"input": value}):
                continue
            if not _evaluate(loaded, cond, "assert", {"input": value}):
                return f"'{cond.id}'" if cond.id else f"{i + 1} ({cond.assert_})"
        except ExpressionError:
            return None  # an evaluation error is the expression's own finding
    return None


def _holds(loaded: Loaded, cond: Any, values: dict[str, Any]) -> bool | None:
    """Whether an expression condition passes, as the runtime decides it; None when it is not certain."""
    if cond.python is not None or cond.assert_ is None:
        return None
    try:
        if cond.when is not None and not _evaluate(loaded, cond, "when", values):
            return True
        return bool(_evaluate(loaded, cond, "assert", values))
    except ExpressionError:
        return None


def _evaluate(loaded: Loaded, cond: Any, key: str, values: dict[str, Any]) -> Any:
    """A condition's `when` or `assert` on a scenario's values; the first one refused for lack of the file's
    expression budget is named in a YML006 (after the rules), and the scenario claims it would decide are not made."""
    source = cond.when if key == "when" else cond.assert_
    try:
        return compile_expression(source).evaluate(values)
    except BudgetSpent as err:
        shared = active_expression_budget()
        if shared is not None and not shared.reported:
            shared.reported = True
            loaded.resource_limits.append(loaded.diag(
                "YML006", f"condition `{source}` was not checked against the scenarios: {err}", cond, key,
                hint="simplify the expensive conditions, or check fewer scenarios per file"))
        raise


def _accepted_first(loaded: Loaded, doc: Contract, sc: Scenario, in_model: Any, out_model: Any) -> bool:
    """True only when the engine certainly accepts response 1: valid input, pre passing, no act,
    and a reply that parses, validates and passes every post condition (all plain expressions)."""
    if doc.act is not None or in_model is None:
        return False
    value = _input_value(loaded, sc, in_model)
    if value is _INVALID or value is None:
        return False
    if not all(_holds(loaded, c, {"input": value}) is True for c in doc.pre):
        return False
    parsed, problem = extract_json(sc.responses[0], strict=doc.json_reply == "strict")
    if problem or not isinstance(parsed, dict):
        return False
    from pydantic import ValidationError

    try:
        output = out_model.model_validate(parsed)
    except ValidationError:
        return False
    return all(_holds(loaded, c, {"input": value, "output": output}) is True for c in doc.post)


def _reply_problem(text: str, model: Any, type_name: str, strict: bool = False) -> str | None:
    """Why a reply can never be accepted as the output (not JSON, not a valid object), or None."""
    value, problem = extract_json(text, strict=strict)
    if problem:
        return f"is not JSON ({problem})"
    if not isinstance(value, dict):
        return f"is JSON but not an object, and {type_name} is one"
    problem = _invalid(model, value)
    if problem:
        return f"is not a valid {type_name} ({problem})"
    return None


_ALWAYS = ("input", "forward", "finalize")  # stages every call runs


def _remedy_claims(loaded: Loaded, doc: Contract, sc: Scenario, loops: int) -> list[Diagnostic]:
    """CON108 for remedy_waits, remedy_errors and perf expectations the engine's rules make impossible."""
    ex, name, retry = sc.expect, f"scenario '{sc.name}'", doc.remedy.retry
    most = loops * retry.tries
    found: list[Diagnostic] = []
    for key, listed in (("remedy_waits", ex.remedy_waits), ("remedy_errors", ex.remedy_errors)):
        if listed is None:
            continue
        what = "remedy waits" if key == "remedy_waits" else "remedy requests"
        if len(listed) > most:
            found.append(loaded.diag("CON108", f"{name} expects {len(listed)} {what} but at most {most} remedy attempts can "
                                     "happen", sc, "expect", key))
        elif ex.remedy_attempts is not None and len(listed) != ex.remedy_attempts:
            found.append(loaded.diag("CON108", f"{name} expects {len(listed)} {what} and {ex.remedy_attempts} remedy attempts: "
                                     "each remedy attempt makes one of each", sc, "expect", key))
    if ex.remedy_waits is not None and loops == 1 and len(ex.remedy_waits) <= most:
        for i, seconds in enumerate(ex.remedy_waits):
            low, high = retry.wait(i + 1, -retry.jitter), retry.wait(i + 1, retry.jitter)
            if not low - 1e-9 <= seconds <= high + 1e-9:
                span = f"{low:g} s" if low == high else f"between {low:g} and {high:g} s (jitter {retry.jitter:g})"
                found.append(loaded.diag("CON108", f"{name}: the wait before remedy attempt {i + 1} is {span}: "
                                         f"min({retry.delay:g} x {retry.backoff:g}^{i}, {retry.max_delay:g}), not {seconds:g}",
                                         sc, "expect", "remedy_waits", i))
    for i, sent in enumerate(ex.remedy_errors or []):
        if not sent:
            found.append(loaded.diag("CON108", f"{name}: a remedy request always carries at least one error",
                                     sc, "expect", "remedy_errors", i))
        elif doc.remedy.accumulate_errors and len(sent) < i + 1:
            found.append(loaded.diag("CON108", f"{name}: with accumulate_errors, remedy request {i + 1} carries every error so "
                                     f"far, at least {i + 1}, not {len(sent)}", sc, "expect", "remedy_errors", i))
    perf = ex.perf
    if perf is not None and perf.percent_total is not None and abs(perf.percent_total - 100) > 1e-9:
        found.append(loaded.diag("CON108", f"{name}: the stages' and the overhead's percentages always add up to 100, "
                                 f"not {perf.percent_total:g}", sc, "expect", "perf", "percent_total"))
    if perf is not None and perf.stages is not None:
        found += _stage_claims(loaded, doc, sc, list(perf.stages))
    return found


def _stage_claims(loaded: Loaded, doc: Contract, sc: Scenario, stages: list[str]) -> list[Diagnostic]:
    name, where = f"scenario '{sc.name}'", (sc, "expect", "perf", "stages")
    order = ["input", "pre", "act", "generate", "post", "forward", "finalize"]
    if stages != sorted(set(stages), key=order.index):
        return [loaded.diag("CON108", f"{name}: stages run once each in the order {', '.join(order)}", *where)]
    missing = [s for s in _ALWAYS if s not in stages]
    if missing:
        return [loaded.diag("CON108", f"{name}: every call runs {', '.join(_ALWAYS)}; perf.stages leaves out "
                            f"{', '.join(missing)}", *where)]
    never = [s for s, runs in (("pre", bool(doc.pre)), ("act", doc.act is not None)) if s in stages and not runs]
    if "generate" in stages and sc.expect.llm_calls == 0:
        never.append("generate (with llm_calls: 0)")
    if never:
        return [loaded.diag("CON108", f"{name}: perf.stages names stages this contract cannot run: {', '.join(never)}", *where)]
    return []


def _input_model(loaded: LoadedContract) -> Any:
    """The model examples' inputs are validated with (None: no example is checked)."""
    doc, types = loaded.contract, loaded.types
    if not doc.examples or not doc.input or not types.declared(doc.input):
        return None
    try:
        return types.model(doc.input)
    except Exception:  # noqa: BLE001 - a type pydantic cannot build is reported elsewhere
        return None


def _example(loaded: LoadedContract, model: Any, i: int) -> Iterator[Diagnostic]:
    from pydantic import ValidationError

    example = loaded.contract.examples[i]
    try:
        model.model_validate(example.input)
    except ValidationError as err:
        for e in err.errors()[:3]:
            loc = tuple(e.get("loc") or ())
            where = ".".join(str(p) for p in loc) or "input"
            path = ("examples", i, "input") + (loc[:-1] if e.get("type") == "missing" else loc)
            yield loaded.diag("CON109", f"example '{example.name}': {where}: {e.get('msg', 'invalid')}", path,
                              key=e.get("type") == "extra_forbidden")


def _one_example(loaded: LoadedContract, key: str, i: int) -> list[Diagnostic]:
    model = _input_model(loaded)
    return [] if model is None else list(_example(loaded, model, i))


@rule("CON109", "invalid-example", "error", kinds=("contract",), entries={"examples": Each(_one_example)})
def invalid_example(loaded: LoadedContract) -> Iterator[Diagnostic]:
    """An `examples:` input that is not a valid `input`: the studio cannot step through it."""
    model = _input_model(loaded)
    if model is None:
        return
    for i in range(len(loaded.contract.examples)):
        yield from _example(loaded, model, i)
