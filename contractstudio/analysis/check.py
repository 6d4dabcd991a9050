"""The analyzer's front door: text or paths in, ordered diagnostics out.

The CLI, the studio and `cs.load` call these same functions; there is one analyzer.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from contractstudio.analysis.loaded import KNOWN_KINDS, Context, ExpressionChecks, Loaded, file_regex_budget
from contractstudio.analysis.rules import loaded_class, rules_for
from contractstudio.analysis.shape import validate
from contractstudio.documents.models import Model
from contractstudio.documents.patterns import RegexBudget, shared_budget
from contractstudio.findings.diagnostics import Diagnostic, Span, finalize, make
from contractstudio.reading.dialects import NATIVE, SETTINGS_FILE, folder_settings, read_dialects, sniff_kind
from contractstudio.reading.dialects.synth import relocate, texts
from contractstudio.reading.source import SourceDocument, SourceFile, paused_gc, read_source

__all__ = ["KNOWN_KINDS", "Context", "FileReport", "Loaded", "check_file", "check_paths", "check_text", "discover", "load", "run_rules"]

IGNORE_FILE = ".contractstudioignore"
_KIND_LINE = re.compile(r"^kind:\s*['\"]?([A-Za-z_]+)", re.M)


def kind_of_text(text: str) -> str | None:
    """The first top-level `kind:` of a YAML text (or the kind another format reads as), without parsing it."""
    m = _KIND_LINE.search(text)
    return m.group(1) if m else sniff_kind(text)


def load(file: str, text: str, doc: SourceDocument, model: Model | None, ctx: Context, regex: RegexBudget | None = None) -> Loaded:
    """The per-document object of a document's kind (its facts are computed on first use); `regex`: the file's budget."""
    cls = loaded_class(doc.kind) if model is not None else None
    item = (cls or Loaded)(file, text, doc, model, ctx)
    if regex is not None:
        item.regex = regex
    return item


def run_rules(item: Loaded) -> list[Diagnostic]:
    """The checkers and every rule of the document's kind, on one loaded document whose shape validated."""
    kind = item.kind
    if item.model is None or kind not in KNOWN_KINDS:
        return []
    found: list[Diagnostic] = []
    # The expression checker (EXP) and the constraint checker (SCH103/105-107) over the sites and
    # fields the document's kind lists (imported only by kinds that have them), then one function per rule.
    passes: list[Callable[[Loaded], Iterable[Diagnostic]]] = []
    if item.expression_sites:
        from contractstudio.analysis.expression_findings import expression_findings

        passes.append(expression_findings)
    if item.field_sets:
        from contractstudio.analysis.field_constraints import constraint_findings

        passes.append(constraint_findings)
    passes += [entry.run for entry in rules_for(kind)]
    for run in passes:
        try:
            found.extend(run(item))
        except RecursionError:
            found.append(make("YML006", "the document is too deeply nested to analyze", item.file, item.span(())))
    found.extend(item.resource_limits)  # YML006: regexes that ran past the file's budget while the rules ran
    return found


@dataclass(slots=True)
class FileReport:
    """Everything the analyzer found in one file."""

    path: str
    text: str
    source: SourceFile | None
    documents: list[Loaded] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def dialect(self) -> str:
        """The format the file was read as (its first document of another format decides)."""
        return next((d.dialect for d in self.documents if d.dialect != NATIVE), NATIVE)

    @property
    def texts(self) -> dict[str, str]:
        """The file's text and that of every file it read along (bases), by path."""
        return texts(self.source) if self.source is not None else {self.path: self.text}


def analyze_source(source: SourceFile, ctx: Context | None = None, *, expressions: ExpressionChecks | None = None) -> FileReport:
    """Run every rule on a parsed file; one broken document never hides another's findings.

    `expressions`: expression checks kept from earlier analyses of the file (analysis/session.py).
    """
    with paused_gc():
        return _analyze(source, ctx, expressions)


def _analyze(source: SourceFile, ctx: Context | None, expressions: ExpressionChecks | None) -> FileReport:
    ctx = ctx or Context()
    found: list[Diagnostic] = list(source.diagnostics)
    loaded: list[Loaded] = []
    budget = file_regex_budget()  # every regex of the file's documents together
    with shared_budget(budget):  # type patterns checked by the rules (scenario responses, examples) draw on it too
        for doc in source.documents:
            model, shape = validate(doc, source.path)
            found.extend(shape)
            item = load(source.path, source.text, doc, model, ctx, budget)
            item.source = source  # positions of inherited parts map back to their base file (Loaded.place)
            item.expression_cache = expressions
            loaded.append(item)
            found.extend(run_rules(item))
    # A value whose tag was refused is null; its shape error would only repeat YML004.
    refused = {(d.line, d.column) for d in found if d.code == "YML004"}
    if refused:
        found = [d for d in found if not (d.code.startswith("SCH") and (d.line, d.column) in refused)]
    found = relocate(found, source)  # positions in files read along (bases) go back to those files
    return FileReport(source.path, source.text, source, loaded, finalize(found, texts(source)))


def check_text(text: str, path: str = "<text>", ctx: Context | None = None, location: Path | None = None) -> FileReport:
    """Analyze YAML text (the studio's path on every edit); `location` is the file on disk when `path` is a display name."""
    with paused_gc():
        return analyze_source(read_file_source(read_source(text, path), path, ctx, location), ctx)


def read_file_source(reading: SourceFile, path: str, ctx: Context | None, location: Path | None) -> SourceFile:
    """A file's reading with every document of another format read as its native kind (reading/dialects)."""
    if location is None and not path.startswith("<"):
        location = Path(path)
    return read_dialects(reading, dialect=ctx.dialect if ctx else None, location=location)


def read_text(path: Path) -> tuple[str | None, Diagnostic | None]:
    """Read a file as UTF-8; an unreadable file is a diagnostic, not a crash."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        return None, make("YML001", f"cannot read the file: {err.strerror or err}", str(path), Span(1, 1, 1, 2))
    return decode(raw, str(path))


def decode(raw: bytes, path: str) -> tuple[str | None, Diagnostic | None]:
    """A file's bytes as UTF-8 text (a BOM dropped), or None and the finding (the CLI and the studio say the same)."""
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        return None, make("YML001", f"the file is not UTF-8 text (byte {err.start})", path, Span(line, 1, line, 2))


def check_file(path: Path, ctx: Context | None = None, display: str | None = None) -> FileReport:
    """Analyze one file from disk."""
    name = display or str(path)
    text, problem = read_text(path)
    if text is None:
        return FileReport(name, "", None, [], [problem] if problem else [])
    if ctx is None:
        ctx = Context(root=path.parent)
    elif ctx.root is None:
        ctx = Context(trusted=ctx.trusted, root=path.parent, dialect=ctx.dialect)
    return check_text(text, name, ctx, location=path)


def _ignored(rel: str, patterns: list[str], is_dir: bool) -> bool:
    for pat in patterns:
        if pat.endswith("/"):
            if is_dir and fnmatch.fnmatch(rel, pat.rstrip("/")):
                return True
        elif fnmatch.fnmatch(rel, pat):
            return True
    return False


def discover(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files to analyze: explicit files always; in folders, *.yaml/*.yml with a top-level kind (or of a dialect).

    A folder's `.contractstudioignore` lists glob patterns (a trailing '/'
    for folders) that discovery skips; naming a file or folder explicitly
    still analyzes it.
    """
    for given in paths:
        p = Path(given)
        if not p.is_dir():
            yield p
            continue
        for dirpath, dirnames, filenames in os.walk(p):
            here = Path(dirpath)
            patterns: list[str] = []
            ignore = here / IGNORE_FILE
            if ignore.is_file():
                patterns = [ln.strip() for ln in ignore.read_text(errors="replace").splitlines() if ln.strip() and not ln.startswith("#")]
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not _ignored(d, patterns, True))
            # A folder whose .contractstudio.yaml names a dialect: every YAML file in it is of that format.
            every = any(n.endswith((".yaml", ".yml")) for n in filenames) and folder_settings(here).dialect not in (None, NATIVE)
            for name in sorted(filenames):
                if not name.endswith((".yaml", ".yml")) or name == SETTINGS_FILE or _ignored(name, patterns, False):
                    continue
                f = here / name
                if not f.is_file():  # a FIFO or a device in a folder would block the scan; named explicitly, it is read
                    continue
                try:
                    head = f.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if every or kind_of_text(head):
                    yield f


def check_paths(paths: Iterable[str | Path], ctx: Context | None = None) -> list[FileReport]:
    """Analyze files and folders; a missing path is reported by the caller (CLI exit 2)."""
    return [check_file(p, ctx) for p in discover(paths)]
