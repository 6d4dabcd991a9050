"""The Python API: `cs.load(path)` and the runtime objects it returns.

    contract = cs.load("samples/multidoc_qa.contract.yaml")
    result = contract.call({"query": "...", "documents": [...]})
    result.successful, result.output, result.attempts, result.perf_stats(), result.trace
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contractstudio.runtime.errors import ContractError
from contractstudio.runtime.live import LiveModel, live_model
from contractstudio.runtime.models import Model, ReplayModel, ScriptedModel
from contractstudio.runtime.perf import PerfStats, format_table
from contractstudio.runtime.trace import Trace


class Contract:
    """A loaded `kind: contract`: call it, step through a call, run its scenarios; perf stats accumulate here."""

    def __init__(self, doc: Any, *, path: str | None = None, trusted: bool = False) -> None:
        from contractstudio.runtime.compiled import CompiledContract

        self.plan = CompiledContract(doc, path=path, trusted=trusted)
        self.doc = doc
        self.name: str = doc.name
        self.path = path
        self.perf = PerfStats()

    def model_for(self, model: Model | str | list[str] | None = None, *, api_base: str | None = None,
                  api_key: str | None = None) -> Model:
        """The model a call uses: the file's llm: block, a litellm model string, scripted replies, or a Model."""
        if model is None or isinstance(model, str):
            return live_model(self.doc.llm, model=model, api_base=api_base, api_key=api_key, trusted=self.plan.trusted,
                              owner=f"contract '{self.name}'")
        if isinstance(model, (list, tuple)):
            return ScriptedModel(list(model))
        return model

    def session(self, input: Any, model: Model | str | list[str] | None = None, *, options: Any = None,
                breakpoints: set[str] | None = None, wait: bool = False, **model_kw: Any) -> Any:
        """A call to step through, event by event (the studio's debugger). Waits are shown, not slept, by default."""
        from contractstudio.runtime.call_state import CallOptions
        from contractstudio.runtime.session import Session

        opts = options or CallOptions(wait=wait)
        return Session(self.plan, input, self.model_for(model, **model_kw), opts, accumulated=self.perf, breakpoints=breakpoints)

    def call(self, input: Any, model: Model | str | list[str] | None = None, *, options: Any = None, wait: bool = True,
             trace: str | Path | None = None, **model_kw: Any) -> Any:
        """One contracted call; returns a Result, or raises ContractViolation under `on_failure: raise`."""
        from contractstudio.runtime.call_state import CallOptions
        from contractstudio.runtime.session import Session

        opts = options or CallOptions(wait=wait)
        session = Session(self.plan, input, self.model_for(model, **model_kw), opts, accumulated=self.perf)
        try:
            return session.run()
        finally:
            if trace is not None:
                session.trace.write(trace)

    def scenario(self, name: str) -> Any:
        """A scenario of the file by name."""
        for s in self.doc.scenarios:
            if s.name == name:
                return s
        names = ", ".join(s.name for s in self.doc.scenarios) or "none"
        raise KeyError(f"contract '{self.name}' has no scenario '{name}' (scenarios: {names})")

    def replay(self, input: Any, trace: str | Path | Trace, *, strict: bool = False, **kw: Any) -> Any:
        """Call with the replies recorded in a trace."""
        return self.call(input, ReplayModel(trace, strict=strict), **kw)

    def perf_stats(self) -> dict[str, Any]:
        """Perf stats accumulated over every call of this object (SymbolicAI's contract_perf_stats)."""
        return self.perf.as_dict()

    def perf_table(self) -> str:
        """The accumulated perf stats as a printable table."""
        return format_table(self.perf.as_dict())

    def __repr__(self) -> str:
        return f"<Contract {self.name!r} from {self.path or '<text>'}>"


def _runtime_object(doc: Any, path: str, trusted: bool) -> Any:
    kind = getattr(doc, "kind", None)
    if kind == "contract":
        return Contract(doc, path=path, trusted=trusted)
    if kind == "tools":
        from contractstudio.runtime.toolify import ToolSet

        return ToolSet(doc, path=path, trusted=trusted)
    if kind == "pipeline":
        from contractstudio.runtime.pipeline_runner import PipelineRunner

        return PipelineRunner(doc, path=path)
    return doc  # an agent contract is analyzed, not run


def load_all(path: str | Path, *, trust: bool = False, dialect: str | None = None) -> list[Any]:
    """Every document of a file as its runtime object; raises ContractError when the analyzer finds errors."""
    from contractstudio.analysis.check import Context, check_file
    from contractstudio.trust import hook_folder

    p = Path(path)
    if not p.exists():
        raise ContractError(f"{p}: no such file")
    report = check_file(p, Context(hooks=hook_folder(p, trust), dialect=dialect))
    if report.dialect == "symbolicai":  # its static reading is for the analyzer: the class itself runs, by its name
        names = [str(getattr(d.model, "name", "?")) for d in report.documents if d.model is not None]
        raise ContractError(f"{p} holds Python contract classes ({', '.join(names) or 'none readable'}): run one as "
                            f"{p}:{names[0] if names else 'ClassName'}, or import the class and call it", path=str(p))
    errors = [d for d in report.diagnostics if d.severity == "error"]
    if errors:
        raise ContractError(f"{p}: {len(errors)} error{'s' if len(errors) != 1 else ''}; fix them before running", errors, str(p))
    return [_runtime_object(item.model, str(p), trust) for item in report.documents if item.model is not None]


def load(path: str | Path, name: str | None = None, *, trust: bool = False) -> Any:
    """Load a file: a Contract, a ToolSet, a pipeline runner (or an agent document); `name` picks one of several."""
    objects = load_all(path, trust=trust)
    if name is not None:
        for obj in objects:
            if getattr(obj, "name", None) == name:
                return obj
        raise ContractError(f"{path}: no document named '{name}' (found: {', '.join(str(getattr(o, 'name', '?')) for o in objects)})")
    if not objects:
        raise ContractError(f"{path}: the file holds no document")
    if len(objects) > 1:
        names = ", ".join(str(getattr(o, "name", "?")) for o in objects)
        raise ContractError(f"{path}: the file holds {len(objects)} documents ({names}); pass name=... to pick one")
    return objects[0]


__all__ = ["Contract", "LiveModel", "ReplayModel", "ScriptedModel", "load", "load_all"]
