"""The debugger's set-up: which contract, which input, which model a call runs with.

The contracts are found by analyzing the workspace's contract files in a worker (the studio's one worker style,
studio/analyses.py); the choices are read by studio/calls.py and runtime/model_choice.py (one reading of a model
choice for the CLI and the studio). A base class of DebugScreen (a Screen: its message handlers register).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import on, work
from textual.message import Message
from textual.widgets import Select

from contractstudio.studio import calls
from contractstudio.studio.screens.base import StudioScreen
from contractstudio.studio.screens.dialogs import TextPrompt
from contractstudio.studio.textual_internals import offered_values


class ContractsFound(Message):
    """Posted by the worker that analyzes the workspace's contracts: the runnable ones and a note on the rest."""

    def __init__(self, contracts: list[tuple[Path, Any]], problem: str) -> None:
        super().__init__()
        self.contracts = contracts
        self.problem = problem


class CallSetup(StudioScreen):
    """The contract, input and model pickers of the debugger (a base of DebugScreen, which draws the call)."""

    contracts: list[tuple[Path, Any]]
    typed_input: Any
    typed_text: str | None
    session: Any
    trace_file: Path | None
    _problem: str
    _last_setup: tuple[Any, Any, Any]
    _contracts_ready: bool

    def _reset(self) -> None:
        """DebugScreen's: forget the call (a new set-up)."""

    def _status(self, running: bool = False) -> None:
        """DebugScreen's: redraw the status line."""

    def _contracts_loaded(self) -> None:
        """DebugScreen's: what waited for the contracts (a held run, a trace to open)."""

    def find_contracts(self) -> None:
        """Analyze the workspace's contracts (unsaved edits included) in a worker; ContractsFound fills the pickers."""
        studio = self.studio
        files = [f.path for f in studio.workspace.of_kind("contract")]
        buffer = studio.buffer
        if buffer is not None and buffer.path not in files and "kind: contract" in studio.current_text():
            files.insert(0, buffer.path)
        texts = {p: studio.current_text() if buffer is not None and buffer.path == p else calls.read_text(p) for p in files}
        self.analyze_contracts(texts)

    @work(thread=True, exclusive=True, group="debug-contracts", exit_on_error=False)
    def analyze_contracts(self, texts: dict[Path, str]) -> None:
        """The runnable contracts of these texts (each file with its own folder's trust)."""
        contracts, problem = calls.runnable_contracts(list(texts), texts.__getitem__, self.studio.context_for)
        self.post_message(ContractsFound(contracts, problem))

    @on(ContractsFound)
    def _contracts_found(self, message: ContractsFound) -> None:
        contracts, self._problem = message.contracts, message.problem
        untrusted = calls.untrusted_classes(contracts, self.studio.trust.allows)
        self._problem = " · ".join(n for n in (self._problem, untrusted) if n)
        unchanged = calls.signature(contracts) == calls.signature(self.contracts)
        self.contracts = contracts  # fresh documents for the next session, even when the choices stay the same
        self._contracts_ready = True
        select = self.query_one("#contract-select", Select)
        if unchanged and select.value != Select.NULL:
            self._status()
            self._contracts_loaded()
            return  # coming back from a dialog or another mode keeps the session where it was
        current = select.value
        options = [(doc.name, i) for i, (path, doc) in enumerate(self.contracts)]
        select.set_options(options)
        buffer = self.studio.buffer
        preferred = next((i for i, (p, _) in enumerate(self.contracts) if buffer is not None and p == buffer.path), 0)
        if options:
            select.value = current if isinstance(current, int) and current < len(options) else preferred
            self._fill_choices()
        if self.session is None and self.trace_file is None:
            self._reset()
        self._last_setup = self._setup_key()  # the Select.Changed messages still queued are not user choices
        self._status()
        self._contracts_loaded()

    @property
    def contract_doc(self) -> tuple[Path, Any] | None:
        """The chosen (file, contract document)."""
        value = self.query_one("#contract-select", Select).value
        return self.contracts[value] if isinstance(value, int) and value < len(self.contracts) else None

    def _setup_key(self) -> tuple[Any, Any, Any]:
        contract, given, model = (self.query_one(f"#{name}-select", Select).value for name in ("contract", "input", "model"))
        return contract, given, model

    def _setup_changed(self) -> bool:
        # Select.Changed arrives after the fact (also for values set by code): only a real change resets the call.
        return self._setup_key() != self._last_setup

    @on(Select.Changed, "#contract-select")
    def _contract_changed(self) -> None:
        if self._setup_changed():
            self._fill_choices()
            self._reset()

    def _fill_choices(self) -> None:
        from contractstudio.runtime.model_choice import choices_for

        chosen = self.contract_doc
        traces = [f.path for f in self.studio.workspace.of_kind("trace")]
        if chosen is not None:
            traces = calls.traces_beside(chosen[0], traces)
        inputs = calls.input_choices(chosen[1], traces) if chosen else [("typed YAML…", "typed")]
        models = [(c.label(chosen[1]), str(c)) for c in choices_for(chosen[1], calls.traces_of(chosen[1], traces))] if chosen else []
        self.query_one("#input-select", Select).set_options(inputs)
        self.query_one("#model-select", Select).set_options(models)
        if inputs:
            self.query_one("#input-select", Select).value = inputs[0][1]
        if models:
            self.query_one("#model-select", Select).value = models[0][1]
            self._pair_model()

    def _input_model(self) -> str | None:
        chosen = self.contract_doc
        value = self.query_one("#input-select", Select).value
        return calls.paired_model(chosen[1], value) if chosen is not None and isinstance(value, str) else None

    def _pair_model(self) -> None:
        """Choose the model that belongs to the chosen input (its scenario's replies, its trace's replay), if offered."""
        paired = self._input_model()
        models = self.query_one("#model-select", Select)
        if paired is not None and paired in offered_values(models):
            models.value = paired

    def model_paired(self) -> bool:
        """Whether the chosen model is the chosen input's own (the status line says so)."""
        paired = self._input_model()
        return paired is not None and paired == self._model_choice()

    @on(Select.Changed, "#input-select")
    def _input_changed(self, event: Select.Changed) -> None:
        if not self._setup_changed():
            return
        if event.value == "typed":
            chosen = self.contract_doc
            start = self.typed_text if self.typed_text is not None else (calls.input_skeleton(chosen[1]) if chosen else "{}\n")
            self.app.push_screen(TextPrompt("Input for the call (YAML or JSON)", start, check=calls.yaml_problem), self._typed)
        self._pair_model()  # chosen with its input; a model picked by hand afterwards stays until the next input
        self._reset()

    def _typed(self, text: str | None) -> None:
        if text is None:
            return
        from contractstudio.reading.source import read_value  # the documents' reader and limits (depth, aliases, tags)

        self.typed_text = text  # reopening the dialog shows what was typed, comments and all
        try:
            self.typed_input = read_value(text, "input")  # the dialog accepted only text this reads
        except ValueError as err:
            self.notify(f"The input cannot be used: {err}", severity="error")

    def _input_value(self) -> Any:
        chosen = self.contract_doc
        value = self.query_one("#input-select", Select).value
        if chosen is None or not isinstance(value, str):
            return None
        return calls.input_value(chosen[1], value, self.typed_input)

    def _model_choice(self) -> str | None:
        value = self.query_one("#model-select", Select).value
        return value if isinstance(value, str) else None

    def _live_chosen(self) -> bool:
        return (self._model_choice() or "").partition(":")[0] == "live"

    def _model(self, contract: Any) -> Any:
        from contractstudio.runtime.model_choice import ModelChoice

        return ModelChoice.parse(self._model_choice() or "live").model(contract)

    def _ask_trust(self, path: Path, why: str, then: Callable[[], None] | None = None) -> None:
        """Hooks (and keys sent where a file says) need the file's folder trusted: ask; the answer is for that folder only.
        Once trusted, what was asked for (`then`: the step, run or restart) goes on."""
        from contractstudio.studio.screens.dialogs import Choice
        from contractstudio.trust import folder_of

        folder = folder_of(path)
        trust = self.studio.trust

        def answer(choice: str | None) -> None:
            if choice == "once":
                trust.grant(folder)  # this session, this folder (and its subfolders) only
            elif choice == "always":
                try:
                    trust.remember(folder)
                except OSError as err:
                    trust.grant(folder)
                    self.notify(f"Could not remember the trust: {err}; trusted for this session", severity="warning")
            if choice in ("once", "always"):
                self.notify(f"Trusted {folder}.", timeout=3)
                if then is not None and self.is_current:
                    then()

        self.app.push_screen(Choice("Trust this folder?", f"{why}\n\nTrust {folder} (and its subfolders) to run its Python "
                                    "hooks and send keys where its files say?",
                                    [("once", "Trust now"), ("always", "Always"), ("cancel", "Cancel")]), answer)
