"""A contract document compiled once for many calls: shapes, conditions, act, fallback, the fixed system message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contractstudio.documents.models import Contract
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions import ExpressionError, compile_expression
from contractstudio.runtime.conditions import Check, _DeferredHook
from contractstudio.runtime.errors import ContractError
from contractstudio.runtime.messages import system_message
from contractstudio.runtime.validation import Shape
from contractstudio.trust import hook_folder

# (call state, the input forward gets, the output or None) -> what the call returns
ForwardHook = Callable[[Any, Any, Any], Any]


class CompiledContract:
    """Everything a call needs that does not change between calls."""

    def __init__(self, doc: Contract, *, path: str | None = None, trusted: bool = False) -> None:
        self.doc = doc
        self.name = doc.name
        self.path = path
        self.trusted = trusted
        root = hook_folder(path or None, trusted).folder
        self.types = TypeSystem.from_decls(doc.types)
        try:
            self.input = Shape(self.types, doc.input, "input")
            self.output = Shape(self.types, doc.output, "output")
            self.intermediate = Shape(self.types, doc.intermediate, "act") if doc.intermediate else None
        except Exception as err:  # noqa: BLE001 - a type the analyzer let through but pydantic refuses
            raise ContractError(f"contract '{doc.name}': its types cannot be built: {err}", path=path) from None
        self.pre = [Check(c, f"pre[{i}]", root=root, trusted=trusted) for i, c in enumerate(doc.pre)]
        self.post = [Check(c, f"post[{i}]", root=root, trusted=trusted) for i, c in enumerate(doc.post)]
        self.hooks: list[str] = [c.python for c in (*doc.pre, *doc.post) if c.python]
        self.act_assign: dict[str, Any] | None = None
        self.act_hook: _DeferredHook | None = None
        if doc.act is not None:
            if doc.act.assign is not None:
                self.act_assign = {k: _compile(src, f"act.assign.{k}") for k, src in doc.act.assign.items()}
            elif doc.act.python:
                self.act_hook = _DeferredHook(doc.act.python, root, trusted, "act")
                self.hooks.append(doc.act.python)
        self.fallback = {k: _compile(str(src) if not isinstance(src, str) else src, f"fallback.{k}")
                         for k, src in (doc.fallback or {}).items()} if doc.fallback is not None else None
        self.remedy = doc.remedy
        # What forward returns is checked against `returns` (a Python contract's own forward may differ from `output`).
        self.returns: Shape = self.output
        self.forward: ForwardHook | None = None  # a Python contract's forward (contractstudio.symbolic); None: the engine's
        self.system = system_message(doc.prompt or "", doc.output, self.output.schema_text())
        self.generate_type = doc.intermediate if self.act_is_set else doc.input

    @property
    def act_is_set(self) -> bool:
        return self.act_assign is not None or self.act_hook is not None

    def refuse_untrusted(self) -> None:
        """Raise before a call starts when it would reach a Python hook in an untrusted workspace."""
        if self.hooks and not self.trusted:
            from contractstudio.runtime.errors import UntrustedHook

            names = ", ".join(f"'{h}'" for h in self.hooks)
            raise UntrustedHook(
                f"contract '{self.name}' uses Python hooks ({names}); they run only in a trusted workspace "
                "(pass --trust on the command line, or trust=True to cs.load)", path=self.path)


def _compile(src: str, where: str) -> Any:
    try:
        return compile_expression(src)
    except ExpressionError as err:
        raise ContractError(f"{where}: {err}") from None
