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

        self.plan = CompiledContract.of_document(doc, path=path, trusted=trusted)
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

    @property
    def input_type(self) -> str:
        """The input type's name, as the file declares it."""
        return str(self.doc.input)

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


def build(doc: Any, path: str | Path, trusted: bool) -> Any:
    """What runs for a checked document of the file at `path` (runtime.loading): a Contract, a ToolSet, a PipelineRunner,
    the imported class of a `.py` file (UntrustedHook when its folder is not trusted); an agent document as it is."""
    from contractstudio.analysis.check import is_python

    if is_python(path):
        from contractstudio.runtime.python_classes import load_class

        return load_class(Path(path), str(doc.name), trusted)
    kind = getattr(doc, "kind", None)
    if kind == "contract":
        return Contract(doc, path=str(path), trusted=trusted)
    if kind == "tools":
        from contractstudio.runtime.toolify import ToolSet

        return ToolSet(doc, path=str(path), trusted=trusted)
    if kind == "pipeline":
        from contractstudio.runtime.pipeline_runner import PipelineRunner

        return PipelineRunner(doc, path=str(path))
    return doc  # an agent contract is analyzed, not run


def load_contract(path: str | Path, *, name: str | None = None, replay: str | None = None, scenario: str | None = None,
                  text: str | None = None, trust: bool = False, dialect: str | None = None) -> Any:
    """The contract a face runs (`run`, eval's rows): the file loaded (runtime.loading: the analyzer's gate, for every
    kind of file), the contract chosen (runtime.choosing: ChoiceError says why none can be), then built. `path.py`
    with a class `name` is then imported by name, behind the trust check, as Python defines it."""
    from contractstudio.analysis.check import is_python
    from contractstudio.runtime.choosing import choose_class, choose_contract
    from contractstudio.runtime.loading import load_file

    if is_python(path) and name is not None:
        choose_class(f"{path}:{name}", scenario=scenario)
    loaded = load_file(path, text=text, trust=trust, dialect=dialect)
    if loaded.python and name is not None:
        from contractstudio.runtime.python_classes import load_class

        return load_class(loaded.path, name, trust)
    return build(choose_contract(loaded, name=name, replay=replay, scenario=scenario), loaded.path, loaded.trusted)


def load_all(path: str | Path, *, trust: bool = False, dialect: str | None = None) -> list[Any]:
    """Every document of a file as its runtime object; raises ContractError when the analyzer finds errors."""
    from contractstudio.runtime.choosing import refuse_unnamed_classes
    from contractstudio.runtime.loading import load_file

    loaded = load_file(path, trust=trust, dialect=dialect)
    if loaded.python:  # its static reading is for the analyzer: a class runs by its name
        refuse_unnamed_classes(loaded.path, loaded.documents())
    return [build(d, loaded.path, loaded.trusted) for d in loaded.documents()]


def load(path: str | Path, name: str | None = None, *, trust: bool = False) -> Any:
    """Load a file: a Contract, a ToolSet, a pipeline runner (or an agent document); `name` picks one of several."""
    from contractstudio.runtime.choosing import by_name

    objects = load_all(path, trust=trust)
    if name is not None:
        return by_name(objects, name, path, "document")
    if not objects:
        raise ContractError(f"{path}: the file holds no document")
    if len(objects) > 1:
        names = ", ".join(str(getattr(o, "name", "?")) for o in objects)
        raise ContractError(f"{path}: the file holds {len(objects)} documents ({names}); pass name=... to pick one")
    return objects[0]


__all__ = ["Contract", "LiveModel", "ReplayModel", "ScriptedModel", "build", "load", "load_all", "load_contract"]
