"""A contracted call as a sequence of events: input, pre, act, generate, post, forward, finalize.

One implementation for every caller: `run_call` is a generator that yields
each event as it happens and pauses there. `session.Session` drives it one
event at a time (the studio's debugger, with breakpoints per stage, and the
values it sends back: an edited reply or edited error texts); `Contract.call`
simply drives a session to the end. All state lives in one `CallState` per call.

A call driven to its end (`CallState.watched` False) records each event the same
way but yields only what its driver must do (a model's reply, a wait): nobody
pauses at an event there, and passing each one up through the generators was
a twentieth of a scripted call's work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contractstudio.expressions import ExpressionError
from contractstudio.reading.replies import MAX_JSON_DEPTH, extract_json, nests_too_deep
from contractstudio.runtime.asking import Events, Pause, ask, edited, kept_whole
from contractstudio.runtime.call_state import CallState, remedy_wait
from contractstudio.runtime.conditions import Condition
from contractstudio.runtime.errors import InvalidInput, UntrustedHook
from contractstudio.runtime.events import (
    STAGES,
    ActValue,
    CallResult,
    ConditionChecked,
    Forwarded,
    RemedyExhausted,
    ReplyParsed,
    RetryWait,
    ValidationFailure,
)
from contractstudio.runtime.messages import generate_messages, pre_remedy_messages, repair_messages

DEEP_INPUT = f"the value nests arrays/objects more than {MAX_JSON_DEPTH} levels deep; it is not recorded"

__all__ = ["STAGES", "run_call"]



def _conditions(st: CallState, stage: str, checks: Sequence[Condition], values: dict[str, Any]) -> Events:
    """Evaluate conditions, one event each; returns the error texts of those that failed."""
    errors: list[str] = []
    for index, check in enumerate(checks):
        applies, passed, error = check.evaluate(values)
        row = st.emit(ConditionChecked, stage, check.id, index, check.source, applies, passed, error, check.raised_at)
        if st.watched:
            yield row
        if error:
            errors.append(error)
            if not check.remedy:
                st.no_remedy = True  # `remedy: false` on the condition: the call ends here, without a remedy
    if errors and st.expressions.spent and not st.no_remedy:
        # Nothing more can be evaluated in this call, so no remedy's reply could be judged: asking is waste.
        st.no_remedy = True
        errors.append(f"{st.expressions.refusal()}: no remedy was asked, as no further reply could be judged")
    return errors


def _rejected(st: CallState, stage: str, where: str, errors: list[str], attempt: int) -> Events:
    """A validation_error event; the caller (the studio) may send back edited error texts."""
    st.failed_on = where
    row = st.emit(ValidationFailure, stage, where, errors, attempt)
    sent = (yield row) if st.watched else None
    changed = edited(sent, "errors") if sent is not None else None
    return [str(e) for e in changed] if changed is not None else errors


def _wait_before(st: CallState, stage: str, attempt: int) -> Events:
    retry = st.plan.remedy.retry
    u = st.rng.uniform(-retry.jitter, retry.jitter) if retry.jitter else 0.0
    seconds = remedy_wait(retry, attempt, u)
    row = st.emit(RetryWait, stage, "remedy", None, attempt, seconds, st.options.wait)
    if st.watched:
        yield row
    if st.options.wait and seconds > 0:
        yield Pause(seconds)
        st.llm["waited_s"] += seconds


def _errors_to_send(accumulating: bool, history: list[list[str]]) -> list[str]:
    """Every error of the loop so far (oldest first) when the contract accumulates them, else the last attempt's."""
    return [e for errs in history for e in errs] if accumulating else history[-1]


def _exhausted(st: CallState, stage: str, loop: str, attempts: int) -> Events:
    graceful = st.plan.remedy.retry.graceful
    row = st.emit(RemedyExhausted, stage, loop, attempts, graceful)
    if st.watched:
        yield row
    st.failed = True
    if not graceful:
        st.errors.append(f"remedy ({loop}) gave up after {attempts} attempt{'s' if attempts != 1 else ''}")


def _remedy_pre(st: CallState, value: Any, errors: list[str]) -> Events:
    """Ask the model to correct an input that fails `pre` (or is not a valid input at all); the corrected input or None."""
    plan = st.plan
    tries = plan.remedy.retry.tries
    history = [errors]
    first: list[dict[str, str]] | None = None
    previous = ""
    for attempt in range(1, tries + 1):
        st.remedy_attempts += 1
        yield from _wait_before(st, "pre", attempt)
        sending = _errors_to_send(plan.remedy.accumulate_errors, history)
        if first is None:
            shown = value if st.invalid_input else plan.input.dump(value)  # an invalid input is shown as given
            first = pre_remedy_messages(plan.doc.prompt or "", plan.doc.input, plan.input.schema_text(), shown, sending,
                                        plan.remedy.accumulate_errors)
            messages = first
        else:
            messages = repair_messages(first, previous, sending, "an input that does not satisfy the preconditions",
                                       plan.remedy.accumulate_errors)
        reply = yield from ask(st, "pre", messages, "remedy_pre", attempt, sending)
        if reply is None:
            return None
        previous = reply.text
        parsed, problem = extract_json(reply.text, strict=plan.doc.json_reply == "strict")
        where = "type"
        if problem:
            errs = [problem]
        else:
            candidate, errs = plan.input.validate(parsed)
            if not errs:
                where = "pre"
                errs = yield from _conditions(st, "pre", plan.pre, {"input": candidate})
                if not errs:
                    return candidate
        errs = yield from _rejected(st, "pre", where, errs, attempt)
        st.errors.extend(errs)
        if st.no_remedy:
            return None
        history.append(errs)
    yield from _exhausted(st, "pre", "pre", tries)
    return None


def _judge(st: CallState, reply: Any, scope: dict[str, Any], attempt: int) -> Events:
    """Parse and validate a reply (in generate), then evaluate `post` (in post); returns (output, errors).

    A reply cut early (its prefix broke a clause) fails with that clause's error, as the whole reply would have.
    """
    plan = st.plan
    reply_text = reply.text
    if reply.stopped is not None:
        where = "post" if str(reply.stopped.clause).startswith("post") else "type"
        errors = yield from _rejected(st, "generate", where, [str(reply.stopped.message)], attempt)
        row = st.end("generate", False)
        if st.watched:
            yield row
        return None, errors
    parsed, problem = extract_json(reply_text, strict=plan.doc.json_reply == "strict")
    if not problem and st.asked is not None:
        parsed = st.asked.read(parsed)  # optional fields the schema sent as required-and-nullable, mapped back
    output, errors = (None, [problem]) if problem else plan.output.validate(parsed)
    if errors:
        errors = yield from _rejected(st, "generate", "type", errors, attempt)
        row = st.end("generate", False)
        if st.watched:
            yield row
        return None, errors
    if kept_whole(reply_text):
        row = st.emit(ReplyParsed, "generate", attempt, parsed)
        if st.watched:
            yield row
    else:  # the output is in the result; a runaway reply is not stored twice
        row = st.emit(ReplyParsed, "generate", attempt, None, True, len(reply_text))
        if st.watched:
            yield row
    row = st.end("generate", True)
    if st.watched:
        yield row
    row = st.start("post", attempt)
    if st.watched:
        yield row
    errors = yield from _conditions(st, "post", plan.post, {**scope, "output": output})
    if errors:
        errors = yield from _rejected(st, "post", "post", errors, attempt)
    row = st.end("post", not errors)
    if st.watched:
        yield row
    return (None if errors else output), errors


def _produce(st: CallState, value: Any, act_value: Any) -> Events:
    """generate + post with the post-remedy loop (repairing the previous reply); returns (produced, output).

    `produced` says whether there is an output: None is a valid output of a type that admits null.
    """
    plan = st.plan
    acted = plan.act_is_set
    base = generate_messages(plan.system, plan.generate_type or "", st.act_data if acted else plan.input.dump(value))
    scope: dict[str, Any] = {"input": value}
    if acted:
        scope["act"] = act_value
    row = st.start("generate", 0)
    if st.watched:
        yield row
    reply = yield from ask(st, "generate", base, "generate", 0, of_output=True)
    if reply is None:
        row = st.end("generate", False)
        if st.watched:
            yield row
        return False, None
    output, errors = yield from _judge(st, reply, scope, 0)
    if not errors:
        return True, output
    history = [errors]
    st.errors.extend(errors)
    if not plan.remedy.post or st.no_remedy:
        st.failed = True
        return False, None
    tries = plan.remedy.retry.tries
    for attempt in range(1, tries + 1):
        st.remedy_attempts += 1
        row = st.start("generate", attempt)
        if st.watched:
            yield row
        yield from _wait_before(st, "generate", attempt)
        sending = _errors_to_send(plan.remedy.accumulate_errors, history)
        messages = repair_messages(base, reply.text, sending, f"not a valid {plan.doc.output}", plan.remedy.accumulate_errors)
        reply = yield from ask(st, "generate", messages, "remedy_post", attempt, sending, of_output=True)
        if reply is None:
            row = st.end("generate", False)
            if st.watched:
                yield row
            return False, None
        output, errors = yield from _judge(st, reply, scope, attempt)
        if not errors:
            return True, output
        st.errors.extend(errors)
        if st.no_remedy:
            st.failed = True
            return False, None
        history.append(errors)
    yield from _exhausted(st, "post", "post", tries)
    return False, None


def _act(st: CallState, value: Any) -> Events:
    plan = st.plan
    row = st.start("act")
    if st.watched:
        yield row
    try:
        if plan.act_assign is not None:
            raw: Any = {}
            for name, expr in plan.act_assign.items():
                try:
                    raw[name] = expr.evaluate({"input": value})
                except ExpressionError as err:
                    raise _ActFailure(f"act.assign.{name}: {err}") from None
        else:
            assert plan.act_hook is not None
            raw = plan.act_hook(value)
    except _ActFailure as err:
        errors = [str(err)]
    except UntrustedHook:  # the workspace is not trusted: the call stops, as for every hook
        raise
    except Exception as err:  # noqa: BLE001 - a failing act hook fails the contract with its message
        errors = [f"act: the Python hook raised {type(err).__name__}: {err}"]
    else:
        act_value, errors = plan.intermediate.validate(raw) if plan.intermediate is not None else (raw, [])
        if not errors:
            st.act_data = plan.intermediate.dump(act_value) if plan.intermediate else act_value
            row = st.emit(ActValue, "act", st.act_data)
            if st.watched:
                yield row
            row = st.end("act", True)
            if st.watched:
                yield row
            return act_value
    row = st.emit(ValidationFailure, "act", "act", errors, 0)
    if st.watched:
        yield row
    st.fail(errors)
    row = st.end("act", False)
    if st.watched:
        yield row
    return None


class _ActFailure(Exception):
    pass


def run_call(st: CallState) -> Events:
    """The stages of one call, as events; the generator the session drives."""
    plan = st.plan
    original: Any = st.raw_input
    deep = nests_too_deep(st.raw_input)  # pydantic and the trace writer cannot take it: refused, never a crash
    row = st.start("input", None, plan.name, st.model.name, DEEP_INPUT if deep else st.raw_input)
    if st.watched:
        yield row
    if deep:
        value, errors = None, [f"input: {DEEP_INPUT}"]
    else:
        value, errors = plan.input.validate(st.raw_input)
    if errors:
        row = st.emit(ValidationFailure, "input", "type", errors, 0)
        if st.watched:
            yield row
        st.errors.extend(errors)
        # The caller's error (seed 000 validates input first, and fails fast): never a fallback,
        # unless the contract asks the model to repair its input.
        st.invalid_input = True
        st.failed = deep or not plan.remedy.pre
    else:
        original = value
    row = st.end("input", not errors)
    if st.watched:
        yield row

    if not st.failed and st.invalid_input:
        row = st.start("pre")
        if st.watched:
            yield row
        value = yield from _remedy_pre(st, st.raw_input, errors)
        st.failed = value is None
        if value is not None:
            st.invalid_input = False
            original = value  # the first valid input there is
        row = st.end("pre", not st.failed)
        if st.watched:
            yield row
    elif not st.failed and plan.pre:
        row = st.start("pre")
        if st.watched:
            yield row
        errors = yield from _conditions(st, "pre", plan.pre, {"input": value})
        if errors:
            errors = yield from _rejected(st, "pre", "pre", errors, 0)
            st.errors.extend(errors)
            if plan.remedy.pre and not st.no_remedy:
                value = yield from _remedy_pre(st, value, errors)
                st.failed = value is None
            else:
                st.failed = True
        row = st.end("pre", not st.failed)
        if st.watched:
            yield row

    act_value = None
    if not st.failed and plan.act_is_set:
        act_value = yield from _act(st, value)

    output = None
    if not st.failed:
        produced, output = yield from _produce(st, value, act_value)
        st.failed = not produced

    row = st.start("forward")
    if st.watched:
        yield row
    st.successful = not st.failed
    final: Any = output
    ok = True
    raises = plan.doc.on_failure == "raise" or st.invalid_input
    if plan.forward is not None and not st.invalid_input:
        # A Python contract's own forward decides what the call returns (seed 000: always called, last), with
        # the input the contract reached when it succeeded, the original input when it failed.
        try:
            final = plan.forward(st, (act_value if plan.act_is_set else value) if st.successful else original, output)
        except Exception as err:  # noqa: BLE001 - recorded in the trace; the caller re-raises it after the call
            st.forward_error = err
            st.errors.append(f"forward raised {type(err).__name__}: {err}")
            final, ok = None, False
    elif st.failed:
        if raises:
            final = None
        elif plan.fallback is not None:
            final = {}
            for name, expr in plan.fallback.items():
                try:
                    final[name] = expr.evaluate({"input": original})
                except ExpressionError as err:
                    st.errors.append(f"fallback.{name}: {err}")
                    final, ok = None, False  # a fallback that cannot be computed fails loudly
                    break
    used = ("forward" if plan.forward is not None and not st.invalid_input
            else "output" if st.successful else ("raise" if raises else "fallback"))
    row = st.emit(Forwarded, "forward", st.successful, used)
    if st.watched:
        yield row
    row = st.end("forward", True)
    if st.watched:
        yield row

    row = st.start("finalize")
    if st.watched:
        yield row
    # None is checked too when it is what was returned (an output that admits null, or a Python forward's)
    if ok and (final is not None or st.successful or plan.forward is not None):
        checked, errors = plan.returns.validate(final)
        if errors:
            ok = False
            row = st.emit(ValidationFailure, "finalize", "finalize", errors, 0)
            if st.watched:
                yield row
            st.errors.extend(f"the returned value is not a valid {plan.returns.type_name}: {e}" for e in errors)
            final = None
        else:
            final = checked
    row = st.end("finalize", ok)
    if st.watched:
        yield row
    st.final = final
    if st.invalid_input:
        st.violation = InvalidInput(f"contract '{plan.name}': the input is not a valid {plan.doc.input}", st.errors, st.trace)
    elif st.failed and raises or not ok:
        st.violation = st.failure(last_failure_known=ok)  # a fallback or forward's value that failed is neither class
    row = st.emit(CallResult, "finalize", st.successful, plan.returns.dump(final) if final is not None else None,
                  st.llm_calls, st.remedy_attempts, list(st.errors), st.violation is not None)
    if st.watched:
        yield row
    st.total = st.now()
    if st.accumulated is not None:
        st.accumulated.record(st.stage_times, st.llm, st.total, st.in_stages)
    st.finished = True
