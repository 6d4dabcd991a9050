"""The one chooser: which contract of a loaded file runs, by its name, by a replayed trace or by a scenario.

`run` (`--replay`, `--scenario`), eval's rows (the `path.py:ClassName` or the first contract) and `cs.load(path,
name)` choose here; a ChoiceError is the user's to fix (the CLI's usage error, exit 2), in the words they see.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, Protocol

from contractstudio.runtime.errors import ContractError


class Holder(Protocol):
    """What the chooser reads of a loaded file (runtime.loading.LoadedFile)."""

    @property
    def path(self) -> Path: ...

    @property
    def python(self) -> bool: ...

    def documents(self, kind: str | None = None) -> list[Any]: ...


class ChoiceError(ContractError):
    """No contract of the file can be chosen as asked: a trace recorded for another one, an unknown scenario or name."""


def by_name(items: Sequence[Any], name: str, where: object, what: str) -> Any:
    """The first of `items` named `name`; ChoiceError naming those there are."""
    for item in items:
        if getattr(item, "name", None) == name:
            return item
    found = ", ".join(repr(str(getattr(i, "name", "?"))) for i in items) or "none"
    raise ChoiceError(f"{where}: no {what} named '{name}' (found: {found})", path=str(where))


def choose_contract(loaded: Holder, *, name: str | None = None, replay: str | None = None,
                    scenario: str | None = None) -> Any:
    """The contract document of the file to run: the one named, the one the replayed trace was recorded for, the one
    holding the scenario, else the first. A `.py` file's classes are chosen by name only."""
    if loaded.python and name is None:
        refuse_unnamed_classes(loaded.path, loaded.documents())
    docs = loaded.documents("contract")
    if not docs:
        raise ChoiceError(f"{loaded.path}: the file holds no kind: contract document", path=str(loaded.path))
    if name is not None:
        docs = [by_name(docs, name, loaded.path, "kind: contract document")]
    chosen = docs[0]
    if replay:
        recorded = replayed_contract(replay)
        if recorded is not None:
            matching = [d for d in docs if d.name == recorded]
            if not matching:
                names = ", ".join(repr(d.name) for d in docs)
                raise ChoiceError(f"{replay} was recorded for the contract {recorded!r}, not for {names} in {loaded.path}",
                                  path=str(loaded.path))
            chosen = matching[0]
    if scenario:
        holders = [d for d in docs if any(s.name == scenario for s in d.scenarios)]
        if not holders:
            names = ", ".join(s.name for s in chosen.scenarios) or "none"
            raise ChoiceError(f"contract '{chosen.name}' has no scenario '{scenario}' (scenarios: {names})",
                              path=str(loaded.path))
        chosen = holders[0]
    return chosen


def refuse_unnamed_classes(path: Path, docs: Sequence[Any]) -> NoReturn:
    """A `.py` file's classes run by their name: the ContractError naming those there are."""
    names = [str(getattr(d, "name", "?")) for d in docs]
    raise ContractError(f"{path} holds Python contract classes ({', '.join(names) or 'none readable'}): run one as "
                        f"{path}:{names[0] if names else 'ClassName'}, or import the class and call it", path=str(path))


def choose_class(target: str, *, scenario: str | None = None) -> None:
    """A `path.py:ClassName` target is the class named; ChoiceError for what a class cannot be chosen by."""
    if scenario:
        raise ChoiceError(f"{target}: a Python class has no scenarios; run it offline with --replay TRACE")


def replayed_contract(trace: str) -> str | None:
    """The contract a trace was recorded for (None: it does not say); ChoiceError when the file is not a trace."""
    from contractstudio.runtime.trace import NotATrace, recorded_start

    try:
        start = recorded_start(trace)
    except NotATrace as err:
        raise ChoiceError(str(err)) from None
    return start.contract if start is not None else None
