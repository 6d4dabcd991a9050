"""A contract document compiled once for many calls: shapes, conditions, act, fallback, the fixed system message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from contractstudio.documents.models import Contract
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions import ExpressionError, compile_expression
from contractstudio.runtime.conditions import Check, Condition, _DeferredHook
from contractstudio.runtime.errors import ContractError
from contractstudio.runtime.messages import system_message
from contractstudio.runtime.validation import Shape
from contractstudio.trust import hook_folder

# (call state, the input forward gets, the output or None) -> what the call returns
ForwardHook = Callable[[Any, Any, Any], Any]


class CompiledContract:
    """Everything a call needs that does not change between calls: the one plan type the engine runs.

    One constructor per source: `of_document` (a `kind: contract` document) here, and symbolic/plan.py's
    `SymbolicPlan` (a contracted Python class: its models as shapes, `pre` / `post` as conditions, `act` and
    `forward` as hooks), which calls this constructor with what the class gives.
    """

    def __init__(self, doc: Contract, *, input: Shape, output: Shape, intermediate: Shape | None,
                 pre: Sequence[Condition], post: Sequence[Condition], system: dict[str, str], generate_type: str | None,
                 path: str | None = None, trusted: bool = False, types: TypeSystem | None = None,
                 hooks: Sequence[str] = (), act_assign: dict[str, Any] | None = None,
                 act_hook: Callable[[Any], Any] | None = None, fallback: dict[str, Any] | None = None,
                 returns: Shape | None = None, forward: ForwardHook | None = None) -> None:
        self.doc = doc
        self.name = doc.name
        self.path = path
        self.trusted = trusted  # the file's folder is trusted (a Python class: the user's own code, already running)
        self.types = types  # a document's declared types (None for a class: its pydantic models are the types)
        self.input, self.output, self.intermediate = input, output, intermediate
        self.pre, self.post = pre, post
        self.hooks = list(hooks)  # the `module:function` hooks a call may reach (refused in an untrusted folder)
        self.act_assign = act_assign
        self.act_hook = act_hook
        self.fallback = fallback
        self.remedy = doc.remedy
        # What forward returns is checked against `returns` (a Python contract's own forward may differ from `output`).
        self.returns: Shape = returns if returns is not None else output
        self.forward = forward  # a Python contract's forward (contractstudio.symbolic); None: the engine's
        self.system = system  # the fixed system message (the output type's schema text made once)
        self.generate_type = generate_type

    @classmethod
    def of_document(cls, doc: Contract, *, path: str | None = None, trusted: bool = False) -> CompiledContract:
        """The plan of a `kind: contract` document (checked by the analyzer: runtime/loading.py)."""
        root = hook_folder(path or None, trusted).folder
        types = TypeSystem.from_decls(doc.types)
        try:
            input_shape = Shape(types, doc.input, "input")
            output = Shape(types, doc.output, "output")
            intermediate = Shape(types, doc.intermediate, "act") if doc.intermediate else None
        except Exception as err:  # noqa: BLE001 - a type the analyzer let through but pydantic refuses
            raise ContractError(f"contract '{doc.name}': its types cannot be built: {err}", path=path) from None
        hooks = [c.python for c in (*doc.pre, *doc.post) if c.python]
        act_assign = act_hook = None
        if doc.act is not None:
            if doc.act.assign is not None:
                act_assign = {k: _compile(src, f"act.assign.{k}") for k, src in doc.act.assign.items()}
            elif doc.act.python:
                act_hook = _DeferredHook(doc.act.python, root, trusted, "act")
                hooks.append(doc.act.python)
        fallback = ({k: _compile(str(src) if not isinstance(src, str) else src, f"fallback.{k}")
                     for k, src in doc.fallback.items()} if doc.fallback is not None else None)
        return cls(doc, input=input_shape, output=output, intermediate=intermediate,
                   pre=[Check(c, f"pre[{i}]", root=root, trusted=trusted) for i, c in enumerate(doc.pre)],
                   post=[Check(c, f"post[{i}]", root=root, trusted=trusted) for i, c in enumerate(doc.post)],
                   system=system_message(doc.prompt or "", doc.output, output.schema_text()),
                   generate_type=doc.intermediate if act_assign is not None or act_hook is not None else doc.input,
                   path=path, trusted=trusted, types=types, hooks=hooks, act_assign=act_assign, act_hook=act_hook,
                   fallback=fallback)

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
