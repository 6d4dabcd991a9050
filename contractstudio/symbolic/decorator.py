"""`@contract`: SymbolicAI's class decorator, running each call of the class on ContractStudio's engine.

The class keeps its API (seed 000): a `prompt` property, `pre`, optional `act`, `post`, `forward` always
called last, `contract_successful`, `contract_result`, `contract_exception`, `contract_perf_stats()`; and
gains `contract_trace`, the last call's trace (the one `run --replay`, the debugger and eval read).
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from contractstudio.documents.base import Condition
from contractstudio.runtime.conditions import Check
from contractstudio.runtime.errors import ContractError
from contractstudio.runtime.python_classes import attach_spec
from contractstudio.symbolic.choice import current_use
from contractstudio.symbolic.failure import released_exception
from contractstudio.symbolic.perf import SymbolicPerf, summary_table
from contractstudio.symbolic.plan import (
    MethodCheck,
    ReturnShape,
    Shape,
    SymbolicPlan,
    check_act_signature,
    is_model,
    type_name,
    value_model,
)
from contractstudio.symbolic.settings import checked_remedy, remedy_settings
from contractstudio.symbolic.verbose import call_panels

log = logging.getLogger("contractstudio.symbolic")


def _signature(fn: Any) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)  # `from __future__ import annotations` modules
    except (NameError, TypeError, SyntaxError):
        return inspect.signature(fn)


def _input_parameter(sig: inspect.Signature) -> inspect.Parameter | None:
    """forward's input: its first parameter after self that can be passed by name (SymbolicAI's rule)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return next((p for name, p in sig.parameters.items() if name != "self" and p.kind in kinds), None)


class ClassContract:
    """What `@contract` knows of one class: its settings, forward's input and output types, and how to call it."""

    def __init__(self, cls: type, remedy: Any, *, verbose: bool, file: str, line: int) -> None:
        self.cls, self.name, self.remedy, self.verbose, self.file, self.line = cls, cls.__name__, remedy, verbose, file, line
        # a subclass of a contracted class inherits the wrapped forward: wrap the class's own one, once
        self.original_forward: Callable[..., Any] = getattr(cls.forward, "__contract_original__", cls.forward)  # type: ignore[attr-defined,assignment]
        sig = _signature(self.original_forward)
        self.input_param = _input_parameter(sig)
        self.input_annotation = (self.input_param.annotation if self.input_param is not None
                                 and self.input_param.annotation is not inspect.Parameter.empty else None)
        returned = sig.return_annotation
        if returned is inspect.Signature.empty:
            raise ContractError(f"{file}:{line}: @contract on {self.name}: forward needs a return type annotation "
                                "(the type the model is asked for and forward's result is checked against)", path=file)
        if isinstance(returned, str):
            raise ContractError(f"{file}:{line}: @contract on {self.name}: forward's return annotation '{returned}' cannot be "
                                "resolved (a class defined inside a function, in a module with `from __future__ import "
                                "annotations`?): define the model at module level", path=file)
        self.wrapped = not is_model(returned)
        self.output_model = value_model(returned) if self.wrapped else returned
        self.output_shape = Shape.of_python(self.output_model, "output", type_name(self.output_model) if not self.wrapped
                                            else type_name(returned))
        self.returns = ReturnShape.of_return(returned, self.output_model if self.wrapped else None)
        self.output_schema = self.output_shape.schema_text()
        self._shapes: dict[Any, Shape] = {}
        # `monotone_post`: post conditions in the expression language, monotone in the output (docs/symbolicai.md)
        written = getattr(cls, "monotone_post", ())
        written = (written,) if isinstance(written, str) else tuple(written)
        self.monotone = [Condition.model_validate({"assert": str(src), "monotone": True}) for src in written]
        self.monotone_checks = [Check(c, f"{self.name}.monotone_post[{i}]") for i, c in enumerate(self.monotone)]

    def shape(self, annotation: Any, root: str) -> Shape:
        """A shape per annotation, built once per class (pydantic's validators are the costly part)."""
        key = (annotation, root)
        try:
            return self._shapes[key]
        except KeyError:
            shape = self._shapes[key] = Shape.of_python(annotation, root, type_name(annotation))
            return shape
        except TypeError:  # an annotation that cannot be a key (unhashable metadata): built for this call only
            return Shape.of_python(annotation, root, type_name(annotation))

    def plan(self, instance: Any, value: Any, act_kwargs: dict[str, Any], forward: Any) -> SymbolicPlan:
        """This call's plan: the prompt as the instance gives it now, its bound methods, act's keyword arguments."""
        if isinstance(value, BaseModel):  # a model instance is the input as it is (SymbolicAI's rule)
            input_shape = self.shape(type(value), "input")
        else:
            input_shape = self.shape(self.input_annotation if self.input_annotation is not None else Any, "input")
        pre = [MethodCheck(instance.pre, "pre", self.name)] if callable(getattr(instance, "pre", None)) else []
        post: list[Any] = ([MethodCheck(instance.post, "post", self.name, unwrap=self.wrapped)]
                           if callable(getattr(instance, "post", None)) else [])
        conditions = [Condition(python=f"{self.name}.post")] if post else []
        post += self.monotone_checks
        act = getattr(instance, "act", None)
        act_hook = intermediate = None
        act_type: Any = None
        if callable(act):
            returned = _signature(act).return_annotation
            intermediate = self.shape(returned, "act") if returned is not inspect.Signature.empty else None
            act_type = returned if returned is not inspect.Signature.empty else Any

            def act_hook(current: Any) -> Any:
                try:
                    check_act_signature(act)
                    return act(current, **act_kwargs)
                except Exception as err:
                    plan.act_raised = err
                    raise
        plan = SymbolicPlan(self.name, str(instance.prompt), self.remedy, input_shape=input_shape, output_shape=self.output_shape,
                            returns=self.returns, pre=pre, post=post, act=act_hook, intermediate=intermediate,
                            forward=forward, path=self.file, output_schema=self.output_schema,
                            post_conditions=conditions + self.monotone)
        plan.intermediate_annotation = act_type
        return plan

    def session(self, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], model: Any,
                options: Any = None, breakpoints: set[str] | None = None, *, panels: bool = False) -> Any:
        """A call of `instance(*args, **kwargs)` to step through or run (runtime.Session): the debugger's and `run`'s
        way in; `finish` turns the finished session into what the call returns. `panels`: print verbose's panels on
        stdout (a plain call of a verbose class; never under `run`, `eval` or the debugger, which own their output)."""
        from contractstudio.runtime.call_state import CallOptions
        from contractstudio.runtime.session import Session

        call_args, rest = list(args), dict(kwargs)
        name = self.input_param.name if self.input_param is not None else None
        if call_args:
            value, where = call_args[0], "args"
        elif name is not None and name in rest:
            value, where = rest.pop(name), "kwargs"
        else:
            value, where = rest.pop("input", None), "kwargs"
        if value is None:
            raise ValueError(f"{self.name}: please provide an `input` argument")

        def forward(st: Any, forward_input: Any, output: Any) -> Any:
            if panels:  # SymbolicAI prints its panels during the call, before forward runs
                given = plan.intermediate_annotation if st.act_data is not None else type(value)
                print(call_panels(st.trace.events, plan.doc.prompt, given, self.output_model,
                                  self.remedy.accumulate_errors), end="")
            instance.contract_successful = st.successful
            instance.contract_result = output if st.successful else None
            instance.contract_violation = None if st.successful else st.failure()
            instance.contract_exception = (None if instance.contract_violation is None
                                           else released_exception(st, plan, instance.contract_violation))
            f_args, f_kwargs = list(args), dict(kwargs)
            if where == "args":
                f_args[0] = forward_input
            else:
                f_kwargs[name or "input"] = forward_input
                if name is not None and name != "input":
                    f_kwargs.pop("input", None)
            result = self.original_forward(instance, *f_args, **f_kwargs)
            plan.returned.append(result)
            return result

        plan = self.plan(instance, value, rest, forward)
        return Session(plan, value, model, options or CallOptions(wait=False), accumulated=instance._contract_engine_perf,  # noqa: SLF001 - our own attribute on the user's object
                       breakpoints=breakpoints)

    def finish(self, instance: Any, session: Any, trace_file: Any = None) -> Any:
        """What the call returns once its session ran to the end: forward's result (or what it raised)."""
        result = session.result
        assert result is not None, "the session has not finished"
        instance.contract_trace = result.trace
        if trace_file is not None:
            result.trace.write(trace_file, append=True)
        instance._contract_perf.record_call(session.state)  # noqa: SLF001 - our own attribute on the user's object
        if self.verbose:
            from contractstudio.runtime.trace import redact

            for event in result.trace:
                log.info("%s: %s", self.name, redact(repr(event)))
        state = session.state
        if state.forward_error is not None:
            raise state.forward_error
        if state.invalid_input:
            assert result.violation is not None
            raise result.violation
        if result.violation is not None:  # forward's result is not of its declared type
            if self.remedy.retry.graceful and session.plan.returned:
                return session.plan.returned[0]
            raise TypeError(f"{self.name}.forward must return {self.returns.type_name}: " + "; ".join(state.errors[-3:]))
        return result.output

    def call(self, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One contracted call: the engine runs pre, act, generate, post, then this class's forward; returns its result."""
        from contractstudio.runtime.call_state import CallOptions

        use = current_use()
        session = self.session(instance, args, kwargs, use.model, CallOptions(wait=use.wait), panels=self.verbose)
        session.run(raise_on_violation=False)
        return self.finish(instance, session, use.trace)


class contract:  # SymbolicAI's name (lower case), kept so a user changes only the import line
    """The class decorator: `@contract(pre_remedy=False, post_remedy=True, accumulate_errors=False, verbose=False,
    remedy_retry_params={...})`, seed 000's parameters and defaults; bad settings raise here, as the analyzer reports them."""

    def __init__(self, pre_remedy: bool = False, post_remedy: bool = True, accumulate_errors: bool = False,
                 verbose: bool = False, remedy_retry_params: dict[str, Any] | None = None, **unknown: Any) -> None:
        caller = sys._getframe(1)  # noqa: SLF001 - the line of the @contract(...) call, where check reports its keywords
        self.settings = remedy_settings(pre_remedy, post_remedy, accumulate_errors, remedy_retry_params,
                                        verbose=verbose, **unknown)
        self.remedy = checked_remedy(self.settings, "@contract", caller.f_code.co_filename, caller.f_lineno)
        self.verbose = self.remedy.verbose

    def __call__(self, cls: type) -> type:
        """The class with its forward wrapped: each call runs on the engine, then the class's own forward."""
        file, line = _where(cls)
        remedy = self.remedy
        if not callable(getattr(cls, "forward", None)):
            raise ContractError(f"{file}:{line}: @contract on {cls.__name__}: the class defines no forward method", path=file)
        spec = ClassContract(cls, remedy, verbose=self.verbose, file=file, line=line)
        original_init = cls.__init__  # type: ignore[misc]

        @functools.wraps(original_init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            if not hasattr(self, "prompt"):
                raise TypeError(f"{cls.__name__}: define a `prompt` property that says what the contract must do")
            self.contract_successful = False
            self.contract_result = None
            self.contract_exception = None
            self.contract_violation = None
            self.contract_trace = None
            self._contract_perf = SymbolicPerf()
            from contractstudio.runtime.perf import PerfStats

            self._contract_engine_perf = PerfStats()

        @functools.wraps(spec.original_forward)
        def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
            return spec.call(self, args, kwargs)

        forward.__contract_original__ = spec.original_forward  # type: ignore[attr-defined]

        def contract_perf_stats(self: Any) -> dict[str, Any]:
            """Timing statistics over every call of this instance, with SymbolicAI's stage keys; printed as its table."""
            perf = self._contract_perf
            if not perf.calls:
                print("No contract executions recorded.")  # what SymbolicAI prints (and returns) before any call
                return {}
            stats = perf.as_dict()
            print(summary_table(stats, perf.calls))
            return stats

        cls.__init__ = __init__  # type: ignore[misc]
        cls.forward = forward  # type: ignore[attr-defined]
        cls.contract_perf_stats = contract_perf_stats  # type: ignore[attr-defined]
        attach_spec(cls, spec)
        return cls


def _where(cls: type) -> tuple[str, int]:
    """The class's file and first line, for messages (a class typed into a REPL has none)."""
    try:
        return inspect.getsourcefile(cls) or "<unknown>", inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return getattr(cls, "__module__", "<unknown>"), 0
