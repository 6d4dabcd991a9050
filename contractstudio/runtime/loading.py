"""The one loader: a file (or the text a face holds for it) checked, and refused with its error findings.

Every face loads here: `run`, `test` and `cs.load`; eval's rows (its local threads and each Ray worker build
their contract from the job's text); the studio's list of runnable contracts. So "which file can run" has one
answer. Which of a file's contracts runs is `runtime/choosing.py`'s; what runs for a document is built by
`runtime.api.build` (`load_contract` there: load, choose, build).

A `.py` file's contracted classes are read statically by the analyzer (never imported to be checked); one is
built by importing it, behind the same trust as hooks (`runtime/python_classes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contractstudio.runtime.errors import ContractError

if TYPE_CHECKING:
    from contractstudio.analysis.check import Context, FileReport
    from contractstudio.findings.diagnostics import Diagnostic


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """A checked file without errors: its documents (`runtime.api.build` makes what runs of each)."""

    path: Path
    report: FileReport
    trusted: bool  # the file's folder is trusted: its hooks run, its class may be imported, keys go where it says

    @property
    def python(self) -> bool:
        """Whether the file holds contracted Python classes (each runs by its name: `path.py:ClassName`)."""
        from contractstudio.analysis.check import is_python

        return is_python(self.path)

    def documents(self, kind: str | None = None) -> list[Any]:
        """The document models of the file (of one kind), in file order."""
        return [d.model for d in self.report.documents
                if d.model is not None and (kind is None or getattr(d.model, "kind", None) == kind)]


class Refused(ContractError):
    """A file the analyzer found errors in: the message lists them; `loaded` keeps what the file holds (a face that
    lists files names those left out)."""

    def __init__(self, path: Path, errors: list[Diagnostic], loaded: LoadedFile) -> None:
        count = f"{len(errors)} error{'s' if len(errors) != 1 else ''}"
        super().__init__(f"{path}: {count}; fix them before running", errors, str(path))
        self.loaded = loaded


def load_file(path: str | Path, *, text: str | None = None, trust: bool = False, dialect: str | None = None,
              context: Context | None = None) -> LoadedFile:
    """Check a file (or `text`, what a face holds for it), refuse it with its error findings, else the loaded file.

    `context` is a face's own analysis context (the studio's); otherwise `trust` and `dialect` make it.
    """
    from contractstudio.analysis.check import Context, check_file, check_text
    from contractstudio.reading.project import project_for
    from contractstudio.trust import hook_folder, user_api_bases

    p = Path(path)
    ctx = context if context is not None else Context(hooks=hook_folder(p, trust), dialect=dialect, api_bases=user_api_bases(),
                                                      settings=project_for(p).settings_of(p.parent))
    if text is None:
        if not p.exists():
            raise ContractError(f"{p}: no such file")
        report = check_file(p, ctx)
    else:
        report = check_text(text, str(p), ctx)
    loaded = LoadedFile(p, report, ctx.trusted)
    errors = [d for d in report.diagnostics if d.severity == "error"]
    if errors:
        raise Refused(p, errors, loaded)
    return loaded
