"""Where a call's replies come from, as one choice: a scenario's scripted replies, a recorded trace, or a live model.

The CLI makes a choice from its flags (`--scenario`, `--replay`, `--model`), the studio from the entry picked in
its model list; both turn it into a model here, so the two never read a choice differently. Written as text:

    scripted:NAME   the replies of the contract's scenario NAME, offline (the first scenario of that name)
    replay:PATH     the replies recorded in the trace file at PATH, in order
    live            the contract's `llm:` block (litellm, imported when the call is made)
    live:MODEL      a litellm model string instead of the block's model, e.g. live:openai/gpt-4o-mini
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from contractstudio.runtime.models import Model, ReplayModel, ScriptedModel, TransportFault

KINDS = ("scripted", "replay", "live")


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One choice of where replies come from; `str()` gives the text `parse` reads back."""

    kind: Literal["scripted", "replay", "live"]
    arg: str | None = None  # the scenario's name, the trace's path, or a litellm model string (None: the llm: block)

    @classmethod
    def parse(cls, text: str) -> ModelChoice:
        """A choice from its text; ValueError says what is accepted."""
        kind, _, rest = text.partition(":")
        if kind in ("scripted", "replay") and rest:
            return cls(kind, rest)  # type: ignore[arg-type]
        if kind == "live":
            return cls("live", rest or None)
        raise ValueError(f"not a model choice: {text!r} (scripted:SCENARIO, replay:TRACE, live or live:MODEL)")

    @classmethod
    def from_flags(cls, *, scenario: str | None = None, replay: str | None = None, model: str | None = None) -> ModelChoice:
        """The choice the command line's flags make: --scenario, else --replay, else the live model (--model or llm:)."""
        if scenario:
            return cls("scripted", scenario)
        if replay:
            return cls("replay", replay)
        return cls("live", model or None)

    def __str__(self) -> str:
        return self.kind if self.arg is None else f"{self.kind}:{self.arg}"

    @property
    def live(self) -> bool:
        """A live model: litellm is needed, and the call leaves the process."""
        return self.kind == "live"

    def label(self, doc: Any = None) -> str:
        """How a list of choices shows it: `scripted: NAME`, `replay: FILE`, `live: MODEL`."""
        if self.kind == "replay":
            return f"replay: {Path(self.arg or '').name}"
        if self.kind == "live":
            return f"live: {self.arg or getattr(getattr(doc, 'llm', None), 'model', None) or 'llm: block'}"
        return f"scripted: {self.arg}"

    def model(self, contract: Any, *, api_base: str | None = None) -> Model:
        """The model of this choice for a loaded contract (KeyError: no such scenario; ModelError: no usable live model)."""
        if self.kind == "scripted":
            return scripted_model(contract.scenario(self.arg))
        if self.kind == "replay":
            return ReplayModel(Path(self.arg or ""))
        return contract.model_for(self.arg, api_base=api_base)


def replies_model(path: Path) -> ScriptedModel:
    """The replies of a JSON Lines file, one a line, as a scripted model (`run --replies`): a line holding a JSON string
    is that text; any other JSON value is the reply as written. UnreadableData (a ValueError) says where a line is not JSON."""
    import json

    from contractstudio.reading.data_files import read_data_lines

    replies: list[str | TransportFault] = [line.data if isinstance(line.data, str) else json.dumps(line.data)
                                           for line in read_data_lines(path)]
    return ScriptedModel(replies, name=f"replies:{path.name}")


def scripted_model(scenario: Any) -> ScriptedModel:
    """A scenario's scripted replies as a model named after it."""
    return ScriptedModel(list(scenario.responses), name=f"scripted:{scenario.name}", streamed=bool(scenario.stream))


def choices_for(doc: Any, traces: Sequence[Path] = ()) -> list[ModelChoice]:
    """What a contract can run with: each scenario's replies, each of the given traces, then its live model."""
    names = list(dict.fromkeys(s.name for s in doc.scenarios))  # a name given twice runs the first: listed once
    return [*(ModelChoice("scripted", n) for n in names), *(ModelChoice("replay", str(p)) for p in traces), ModelChoice("live")]
