"""The analyzer's front door: text or paths in, ordered diagnostics out.

The CLI, the studio and `cs.load` call these same functions; there is one analyzer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from contractstudio.analysis.loaded import Context, ExpressionChecks, Loaded, file_regex_budget
from contractstudio.analysis.rules import loaded_class, rules_for
from contractstudio.analysis.rules.registry import UNREAD, EntryUse
from contractstudio.analysis.shape import validate
from contractstudio.collector import paused_gc
from contractstudio.documents.models import Model
from contractstudio.documents.patterns import RegexBudget, shared_budget
from contractstudio.expressions.sandbox import ExpressionBudget, active_expression_budget, shared_expression_budget
from contractstudio.findings.diagnostics import Diagnostic, finalize, make
from contractstudio.reading.dialect_registry import for_file
from contractstudio.reading.dialects.synth import relocate, texts
from contractstudio.reading.dialects.translate import read_dialects
from contractstudio.reading.files import IGNORE_FILE, decode, discover, kind_of_text, read_text, survey
from contractstudio.reading.kinds import KNOWN_KINDS, NATIVE
from contractstudio.reading.project import is_python, project_for
from contractstudio.reading.source import SourceDocument, SourceFile, read_source
from contractstudio.trust import hook_folder

# decode, discover, kind_of_text and read_text live in reading/files.py (no models: the studio's first screen uses them)
__all__ = ["Context", "FileReport", "IGNORE_FILE", "KNOWN_KINDS", "Loaded", "analyze_document", "check_file", "check_paths",
           "check_text", "decode", "discover", "file_findings", "findings_of", "is_python", "kind_of_text", "load", "read_any",
           "read_text", "run_rules", "survey"]

def load(file: str, text: str, doc: SourceDocument, model: Model | None, ctx: Context, regex: RegexBudget | None = None) -> Loaded:
    """The per-document object of a document's kind (its facts are computed on first use); `regex`: the file's budget."""
    cls = loaded_class(doc.kind) if model is not None else None
    item = (cls or Loaded)(file, text, doc, model, ctx)
    if regex is not None:
        item.regex = regex
    return item


def run_rules(item: Loaded, record: list[Ran] | None = None) -> list[Diagnostic]:
    """The checkers and every rule of the document's kind, on one loaded document whose shape validated.

    `record`: each pass's findings and the expression budget it used are added to it (analysis/by_entry.py).
    """
    found: list[Diagnostic] = []
    budget = active_expression_budget()
    for _, run in rule_passes(item):
        used = budget.used if budget is not None else 0
        out = run_pass(item, run)
        found.extend(out)
        if record is not None:
            record.append(Ran(run, out, (budget.used if budget is not None else 0) - used))
    found.extend(item.resource_limits)  # YML006: regexes that ran past the file's budget while the rules ran
    return found


class Ran(NamedTuple):
    """One pass as it ran on a document: its function, its findings, the expression budget it used."""

    run: Pass
    found: list[Diagnostic]
    used: int


Pass = Callable[[Loaded], Iterable[Diagnostic]]
# The checkers read no entry of a contract's examples (see rules/registry.py's UNREAD).
_CHECKERS_ENTRIES: Mapping[str, EntryUse] = {"examples": UNREAD}


def rule_passes(item: Loaded) -> list[tuple[Mapping[str, EntryUse], Pass]]:
    """What runs on a loaded document, in order, each with how it reads the entries of long lists: the expression
    checker (EXP) and the constraint checker (SCH103/105-107) over the sites and fields the document's kind lists
    (imported only by kinds that have them), then one function per rule; none when its shape did not validate."""
    kind = item.kind
    if item.model is None or kind not in KNOWN_KINDS:
        return []
    passes: list[tuple[Mapping[str, EntryUse], Pass]] = []
    if item.expression_sites:
        from contractstudio.analysis.expression_findings import expression_findings

        passes.append((_CHECKERS_ENTRIES, expression_findings))
    if item.field_sets:
        from contractstudio.analysis.field_constraints import constraint_findings

        passes.append((_CHECKERS_ENTRIES, constraint_findings))
    passes += [(entry.entries, entry.run) for entry in rules_for(kind)]
    return passes


def run_pass(item: Loaded, run: Pass) -> list[Diagnostic]:
    """One pass's findings (a document nested too deeply for it: YML006)."""
    found: list[Diagnostic] = []
    try:
        found.extend(run(item))  # what it found before the error is kept
    except RecursionError:
        found.append(make("YML006", "the document is too deeply nested to analyze", item.file, item.span(())))
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

    `expressions`: expression checks kept from earlier analyses of the file (analysis/incremental.py).
    """
    with paused_gc():
        return _analyze(source, ctx, expressions)


def _analyze(source: SourceFile, ctx: Context | None, expressions: ExpressionChecks | None) -> FileReport:
    ctx = ctx or Context()
    found: list[Diagnostic] = list(source.diagnostics)
    loaded: list[Loaded] = []
    budget = file_regex_budget()  # every regex of the file's documents together
    # Type patterns checked by the rules (scenario responses, examples) draw on the regex budget too, and every
    # expression the rules evaluate (scenario conditions) on one expression budget of the file.
    with shared_budget(budget), shared_expression_budget(ExpressionBudget(what="this file's analysis")):
        for doc in source.documents:
            item, findings = analyze_document(source, doc, ctx, budget, expressions)
            loaded.append(item)
            found.extend(findings)
    return FileReport(source.path, source.text, source, loaded, file_findings(found, source))


def analyze_document(source: SourceFile, doc: SourceDocument, ctx: Context, regex: RegexBudget,
                     expressions: ExpressionChecks | None, record: list[Ran] | None = None) -> tuple[Loaded, list[Diagnostic]]:
    """One document of a read file: its loaded object and its shape's and rules' findings (under the file's budgets,
    which the caller holds); `record` as for `run_rules`."""
    model, shape = validate(doc, source.path)
    found = list(shape)
    item = load(source.path, source.text, doc, model, ctx, regex)
    item.source = source  # positions of inherited parts map back to their base file (Loaded.place)
    item.expression_cache = expressions
    found.extend(run_rules(item) if record is None else run_rules(item, record))
    return item, found


def file_findings(found: list[Diagnostic], source: SourceFile) -> list[Diagnostic]:
    """The findings of every document of a file as reported: moved back to the files read along, suppressed, sorted."""
    # A value whose tag was refused is null; its shape error would only repeat YML004.
    refused = {(d.line, d.column) for d in found if d.code == "YML004"}
    if refused:
        found = [d for d in found if not (d.code.startswith("SCH") and (d.line, d.column) in refused)]
    found = relocate(found, source)  # positions in files read along (bases) go back to those files
    return finalize(found, texts(source))


def check_text(text: str, path: str = "<text>", ctx: Context | None = None, location: Path | None = None) -> FileReport:
    """Analyze YAML text (the studio's path on every edit); `location` is the file on disk when `path` is a display name."""
    with paused_gc():
        return analyze_source(read_file_source(read_any(text, path), path, ctx, location), ctx)


def read_any(text: str, path: str) -> SourceFile:
    """A file's first reading: a file dialect's own (a `.py` file's contracted classes, read statically, never imported),
    anything else as YAML."""
    own = for_file(path)
    return own.read_file(text, path) if own is not None else read_source(text, path)


def read_file_source(reading: SourceFile, path: str, ctx: Context | None, location: Path | None) -> SourceFile:
    """A file's reading with every document of another format read as its native kind (reading/dialects)."""
    if location is None and not path.startswith("<"):
        location = Path(path)
    return read_dialects(reading, dialect=ctx.dialect if ctx else None, location=location,
                         settings=ctx.settings if ctx else None)


def check_file(path: Path, ctx: Context | None = None, display: str | None = None) -> FileReport:
    """Analyze one file from disk."""
    name = display or str(path)
    text, problem = read_text(path)
    if text is None:
        return FileReport(name, "", None, [], [problem] if problem else [])
    if ctx is None:
        ctx = Context(hooks=hook_folder(path, False))
    elif ctx.root is None:
        ctx = replace(ctx, hooks=hook_folder(path, ctx.trusted))
    if ctx.settings is None:  # the file's folder settings, from its project (the analysis reads none itself)
        ctx = replace(ctx, settings=project_for(path).settings_of(path.parent))
    return check_text(text, name, ctx, location=path)


def check_paths(paths: Iterable[str | Path], ctx: Context | None = None) -> list[FileReport]:
    """Analyze files and folders; a missing path is reported by the caller (CLI exit 2)."""
    return [check_file(p, ctx) for p in discover(paths, python=True)]


def findings_of(reports: Iterable[FileReport]) -> list[Diagnostic]:
    """The findings of several files, each once: a finding in a base is found again through every file that
    extends it, so keep one (the base's own, the one without the "through this file" related notes, when found)."""
    kept: dict[tuple[str, int, int, str, str], Diagnostic] = {}
    for d in (d for r in reports for d in r.diagnostics):
        key = (d.file, d.line, d.column, d.code, d.message)
        if key not in kept or len(d.related) < len(kept[key].related):
            kept[key] = d
    return list(kept.values())
