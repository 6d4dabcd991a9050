"""`path/to/module.py:ClassName`: a contracted Python class for `run` and `eval`, behind the one trust check.

Importing a module runs its code, so the class's folder must be trusted exactly as for hooks
(`trust.hook_folder`: trust and the import folder decided together from the resolved path), and
the module is imported by the one hook resolver (`contractstudio.hooks`), from that folder only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Protocol

from contractstudio.runtime.errors import ContractError, ModelError, UntrustedHook

MODEL_VARIABLE = "CONTRACTSTUDIO_MODEL"
_CLASS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPEC = "__contract__"  # where @contract keeps a class's ClassSpec (attach_spec / spec_of: the one spelling)


class ClassSpec(Protocol):
    """What `run`, `eval` and the debugger ask of a contracted class (contractstudio.symbolic's `@contract` makes it:
    symbolic/decorator.py's ClassContract is checked against this protocol, so the dependency is the layers' own:
    symbolic on runtime, never runtime on symbolic)."""

    @property
    def name(self) -> str: ...
    @property
    def input_annotation(self) -> Any: ...

    def shape(self, annotation: Any, root: str) -> Any:
        """The check of a value against an annotation (eval validates each row's input with it)."""
        ...

    def session(self, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], model: Any,
                options: Any = None, breakpoints: set[str] | None = None) -> Any:
        """One call of `instance` to step through or run to the end (the engine's Session)."""
        ...


def attach_spec(cls: type, spec: ClassSpec) -> None:
    """Mark `cls` as contracted by `spec` (the decorator's last step)."""
    setattr(cls, _SPEC, spec)


def spec_of(cls: object) -> ClassSpec | None:
    """The ClassSpec of a contracted class, or None for anything else."""
    return getattr(cls, _SPEC, None) if isinstance(cls, type) else None


def default_model_name() -> str | None:
    """The model of a Python contract's calls when none is chosen: CONTRACTSTUDIO_MODEL, else `model:` in config.yaml."""
    from contractstudio.trust import user_config

    return os.environ.get(MODEL_VARIABLE) or user_config().model or None


def python_target(text: str) -> tuple[Path, str] | None:
    """`module.py:ClassName` as (path, class name); None for anything else (a YAML contract file)."""
    from contractstudio.reading.project import is_python

    path, colon, name = text.rpartition(":")
    if not colon or not path or not _CLASS_NAME.fullmatch(name) or not is_python(path):  # the dialect registry's endings
        return None
    return Path(path), name


class PythonContract:
    """A contracted class of a trusted `.py` file, as `run` and `eval` call it: one instance, a Session per call."""

    def __init__(self, cls: type, spec: ClassSpec, path: Path) -> None:
        self.cls, self.spec, self.path = cls, spec, path
        self.name: str = spec.name
        self.input_type: str = _type_label(spec.input_annotation)
        self._instance: Any = None

    @property
    def instance(self) -> Any:
        """The class made once with no arguments (state `act` writes on `self` persists across calls, as in Python)."""
        if self._instance is None:
            self._instance = self._made()
        return self._instance

    def _made(self) -> Any:
        try:
            return self.cls()
        except Exception as err:  # noqa: BLE001 - the user's constructor: said, never a traceback
            raise ContractError(f"{self.path}: {self.name}() failed: {type(err).__name__}: {err} "
                                "(run and eval make the class with no arguments)", path=str(self.path)) from None

    def model_for(self, model: str | None, *, api_base: str | None = None) -> Any:
        """The live model of a call: `model` (--model), else the one a Python contract uses outside `use_model`
        (CONTRACTSTUDIO_MODEL, then `model:` in config.yaml); a class has no `llm:` block."""
        from contractstudio.documents.contract_model import LLMSettings
        from contractstudio.runtime.live import live_model

        name = model or default_model_name()
        if not name:
            raise ModelError(f"no model for class '{self.name}': pass --model (a litellm model string), set {MODEL_VARIABLE}, "
                             "or `model:` in config.yaml; offline: --replies FILE (JSON Lines, a reply a line) or --replay TRACE")
        return live_model(LLMSettings(), model=name, api_base=api_base, trusted=True, owner=f"class '{self.name}'")

    def scenario(self, name: str) -> Any:
        """A Python class has no scenarios: a KeyError that says how to run it offline instead."""
        raise KeyError(f"class '{self.name}' has no scenarios: run it offline with --replies FILE (JSON Lines, a reply a "
                       "line) or --replay TRACE (a trace its own `use_model(..., trace=...)` wrote)")

    @property
    def input_shape(self) -> Any:
        """The check of an input against forward's `input` annotation (eval validates each row with it)."""
        return self.spec.shape(self.spec.input_annotation if self.spec.input_annotation is not None else Any, "input")

    def session(self, value: Any, model: Any, options: Any = None, *, fresh: bool = False,
                breakpoints: set[str] | None = None) -> Any:
        """One call of the class with this input, to step through or run to the end (the engine's Session).

        `fresh`: on a new instance (eval's rows run in parallel and must not share what `act` writes on `self`);
        `breakpoints`: the debugger's.
        """
        instance = self.instance if not fresh else self._made()
        return self.spec.session(instance, (), {"input": value}, model, options, breakpoints)


def load_class(path: Path, name: str, trust: Any) -> PythonContract:
    """The contracted class `name` of the `.py` file at `path`, imported only when its folder is trusted."""
    from contractstudio.hooks import HookError, resolve_hook
    from contractstudio.trust import hook_folder

    where = hook_folder(path, trust)
    if not where.trusted or where.folder is None:
        raise UntrustedHook(f"{path}:{name}: importing {path.name} runs its code, and its folder {where.folder or path.parent} "
                            "is not trusted: pass --trust, or trust the folder in the studio (the same trust as Python hooks)")
    try:
        cls = resolve_hook(f"{path.stem}:{name}", where.folder)
    except HookError as err:
        raise ContractError(f"{path}:{name}: {err}", path=str(path)) from None
    spec = spec_of(cls)
    if not isinstance(cls, type) or spec is None:
        raise ContractError(f"{path}:{name} is not a class decorated with @contract (from contractstudio.symbolic)",
                            path=str(path))
    return PythonContract(cls, spec, path)


def _type_label(annotation: Any) -> str:
    """An annotation as its user wrote it: `Question`, `list[str]`."""
    if annotation is None:
        return "any"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")
