"""One analyzed document, as every rule and every face sees it.

`Loaded` holds a document's text, nodes and validated model, and builds
diagnostics at model objects or document paths. Each kind has a subclass
(`LoadedContract`, `LoadedPipeline`, ...) whose per-document facts, such as the
step graph, the state flow or the type system, are cached properties: computed
on first use, once per analysis, and shared by every rule that asks and by
whoever reads the analysis result afterwards (the CLI, the studio, editing help).

Facts that several kinds have (the types written in the document, its
expressions, its Python hooks, its condition lists, its declared fields) are
declared here, empty, so a rule that serves several kinds reads them the same
way on each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from contractstudio.analysis.subjects import subject_at
from contractstudio.documents.models import Condition, Model
from contractstudio.documents.patterns import RegexBudget
from contractstudio.findings.diagnostics import Diagnostic, Related, Span, Subject, make
from contractstudio.reading.dialects.synth import locate
from contractstudio.reading.folder_settings import FolderSettings
from contractstudio.reading.source import Node, SourceDocument, SourceFile, key_at, nearest
from contractstudio.trust import HookFolder

if TYPE_CHECKING:  # at run time only the kinds that use types import them (a pipeline never does)
    from typing import TypeAlias

    from contractstudio.documents.type_syntax import TypeExpr, TypeSyntaxError
    from contractstudio.documents.types import TypeSystem
    from contractstudio.expressions import ExprIssue

    Scope: TypeAlias = dict[str, TypeExpr]  # the names an expression sees, and their types

REGEX_BUDGET_S = 1.0  # seconds of regex work (tool and type patterns) in the analysis of one file, all documents together


def file_regex_budget() -> RegexBudget:
    """A new budget for the regexes of one file's analysis (shared by its documents)."""
    return RegexBudget(REGEX_BUDGET_S)


@dataclass(slots=True)
class Context:
    """What the analysis may know about its surroundings."""

    hooks: HookFolder = HookFolder()  # where python: hooks are imported from and whether they may be (trust.hook_folder)
    dialect: str | None = None  # read every document as this format (--dialect); None: by setting and shape
    model: str | None = None  # the model to classify output clauses for (check --model); None: the one a contract names
    # The servers the user's own config lets keys go to (config.yaml's trusted_api_bases), read once by the face
    # (a command, the studio, the language server): the analysis never reads the user's disk itself (CON110).
    api_bases: tuple[str, ...] = ()
    # The file's folder settings (the nearest .contractstudio.yaml: its dialect, LocalAI-RAG's pipelines_root), read by
    # the face from the file's project (reading/project.py's settings_of, cached); None: none (a text with no folder).
    settings: FolderSettings | None = None

    @property
    def trusted(self) -> bool:
        """Whether the file's hooks may be imported (its resolved folder is trusted)."""
        return self.hooks.trusted

    @property
    def root(self) -> Path | None:
        """The resolved folder hook modules are looked up in."""
        return self.hooks.folder


@dataclass(frozen=True, slots=True)
class TypeString:
    """A type written in the document (a role, a field, a parameter) and what parsing it gave."""

    path: tuple[Any, ...]  # document path of the scalar
    text: str
    label: str  # how messages name it: "input", "type of field 'T.f'", "type of parameter 'p'"
    parsed: TypeExpr | None  # None when it does not parse
    error: TypeSyntaxError | None = None
    ref_label: str = ""  # how an undeclared name in it is introduced (contracts): "input type", "type of field 'T.f':"
    # Where only built-in types exist (agents, tools), how REF201 ends: "an agent can use"; "" where `types:` declares them.
    builtin_only: str = ""


@dataclass(frozen=True, slots=True)
class ExpressionSite:
    """One scalar of a document that holds an expression (or a message template), and what it sees."""

    path: tuple[Any, ...]  # document path of the scalar
    src: str
    scope: Scope
    types: TypeSystem
    template: bool = False  # a `message`: text with {expr} placeholders
    tool: str | None = None  # a tool's condition: its names are the tool's parameters (an unknown one is TOL101)
    plain_text: bool = False  # a fallback value written as words, not code (a parse error there is CON103)


@dataclass(frozen=True, slots=True)
class CheckedExpression:
    """An expression site through the expression checker: the type it gives (None: unknown) and its issues."""

    site: ExpressionSite
    type: TypeExpr | None
    issues: list[ExprIssue]


class ExpressionChecks(Protocol):
    """Expression checks kept between analyses (analysis/incremental.py's ExpressionCache)."""

    def check(self, site: ExpressionSite) -> tuple[TypeExpr | None, list[ExprIssue]]:
        """The site's type and issues, as the expression checker gives them."""
        ...


@dataclass(frozen=True, slots=True)
class Hook:
    """A `python:` hook named in the document ('package.module:function')."""

    path: tuple[Any, ...]
    spec: Any  # as written (a malformed one may not even be a string)


@dataclass(frozen=True, slots=True)
class ConditionList:
    """A list of conditions whose ids must be unique (`pre`, `post`, a tool's preconditions, ...)."""

    path: tuple[Any, ...]
    conditions: list[Condition]
    label: str  # how messages name the list: "pre", "search.preconditions"


@dataclass(frozen=True, slots=True)
class FieldSet:
    """The fields of one declared type (a contract type, an agent's schema, a tool's parameters) and how to name them."""

    types: TypeSystem  # where `type_name` is declared
    type_name: str
    fields_path: tuple[Any, ...]  # document path of its `fields:` (or `params:`) mapping
    what: str = "field '{type}.{name}'"  # how messages name one field


def no_types() -> TypeSystem:
    """The empty type system (documents that declare no types)."""
    from contractstudio.documents.types import TypeSystem

    return TypeSystem.from_decls({})


def condition_sites(conditions: list[Condition], scope: Scope, types: TypeSystem, tool: str | None = None) -> list[ExpressionSite]:
    """The expression sites of a list of conditions: each one's `when`, `assert` and `message`."""
    sites = []
    for cond in conditions:
        for key, src in (("when", cond.when), ("assert", cond.assert_)):
            if src is not None:
                sites.append(ExpressionSite(cond.src + (key,), src if isinstance(src, str) else str(src), scope, types, tool=tool))
        if cond.message is not None:
            sites.append(ExpressionSite(cond.src + ("message",), cond.message, scope, types, template=True, tool=tool))
    return sites


@dataclass
class Loaded:
    """One validated document: its model (None when its shape is too broken), its nodes and the analysis context.

    Not slotted: the subclasses of each kind keep their cached facts in the instance dict.
    """

    file: str
    text: str
    doc: SourceDocument
    model: Model | None
    ctx: Context = field(default_factory=Context)
    # Facts other layers compute once per analysis and keep with the document (analysis/facts.py).
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    regex: RegexBudget = field(default_factory=file_regex_budget, repr=False, compare=False)  # one per file (analysis/check.py)
    # Resource limits met while analyzing (a regex past the file's budget): YML006s, reported after the rules.
    resource_limits: list[Diagnostic] = field(default_factory=list, repr=False, compare=False)
    source: SourceFile | None = field(default=None, repr=False, compare=False)  # with the files read along (bases)
    # Expression checks kept between analyses of one file as it is edited (analysis/incremental.py); None: check each site.
    expression_cache: ExpressionChecks | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str | None:
        """The document's `kind:` as written (None when it has none)."""
        return self.doc.kind

    @property
    def dialect(self) -> str:
        """The format the document was read as."""
        return self.doc.dialect

    @property
    def unsupported(self) -> dict[str, str]:
        """What the document's format cannot express, and why (a rule then says "not checkable")."""
        return self.doc.unsupported

    def node(self, path: Iterable[Any], *, key: bool = False) -> Node | None:
        """The node at a document path (its key node with `key`), or the nearest existing one."""
        path = tuple(path)
        if key:
            return key_at(self.doc.root, path) or nearest(self.doc.root, path)
        return nearest(self.doc.root, path)

    def span(self, where: Model | Iterable[Any], *sub: Any, key: bool = False) -> Span:
        """The span of a model object (by its source path) or of a path, plus sub-keys."""
        base = where.src if isinstance(where, Model) else tuple(where)
        node = self.node(tuple(base) + sub, key=key)
        return node.span if node is not None else Span(self.doc.line, 1, self.doc.line, 2)

    def place(self, where: Model | Iterable[Any], *sub: Any, key: bool = False) -> tuple[str, Span]:
        """The file and span of a model object or path: an inherited step is in its base file."""
        span = self.span(where, *sub, key=key)
        return locate(self.source, span) if self.source is not None else (self.file, span)

    def diag(self, code: str, message: str, where: Model | Iterable[Any], *sub: Any, key: bool = False, **kw: Any) -> Diagnostic:
        """A diagnostic of `code` at a model object or path, with the subject (step, type, tool, ...) it is about."""
        path = self.path_of(where, *sub)
        return make(code, message, self.file, self.span(where, *sub, key=key), subject=self.subject(path), **kw)

    def related(self, message: str, where: Model | Iterable[Any], *sub: Any, key: bool = False) -> Related:
        """A related place (one step of a path, the first definition, ...) at a model object or path, with its subject."""
        span = self.span(where, *sub, key=key)
        return Related(self.file, span.line, span.column, message, self.subject(self.path_of(where, *sub)))

    @staticmethod
    def path_of(where: Model | Iterable[Any], *sub: Any) -> tuple[Any, ...]:
        """The document path of a model object (its source path) or of a path, plus sub-keys."""
        return (tuple(where.src) if isinstance(where, Model) else tuple(where)) + sub

    def subject(self, path: Iterable[Any]) -> Subject | None:
        """What a document path is about: the step, type, field, tool, policy, task or scenario it is inside."""
        return subject_at(self.kind, self.doc.data, path)

    def carry(self, before: Loaded, index: int) -> None:
        """Take over facts of `before` (the last analysis) that an edit inside entry `index` of the kind's long list
        did not change (analysis/by_entry.py); none by default."""

    # ----------------------------------------------------------------- facts several kinds have

    @property
    def types(self) -> TypeSystem:
        """The declared types the document's expressions resolve against (none by default)."""
        return no_types()

    @property
    def type_strings(self) -> list[TypeString]:
        """Every type written in the document."""
        return []

    @property
    def expression_sites(self) -> list[ExpressionSite]:
        """Every expression and message template the analyzer checks, with the scope each sees."""
        return []

    @cached_property
    def checked_expressions(self) -> list[CheckedExpression]:
        """Each expression site through the expression checker, once per analysis (findings and rules read it)."""
        if not self.expression_sites:
            return []
        from contractstudio.expressions import check, check_template  # only documents with expressions pay for it

        found = []
        cache = self.expression_cache
        for site in self.expression_sites:
            if cache is not None:
                found.append(CheckedExpression(site, *cache.check(site)))
                continue
            if site.template:
                found.append(CheckedExpression(site, None, check_template(site.src, site.scope, site.types)))
            else:
                found.append(CheckedExpression(site, *check(site.src, site.scope, site.types)))
        return found

    @property
    def hooks(self) -> list[Hook]:
        """Every `python:` hook, in the order a run meets them."""
        return []

    @property
    def condition_lists(self) -> list[ConditionList]:
        """Every list of conditions."""
        return []

    @property
    def field_sets(self) -> list[FieldSet]:
        """Every declared set of fields, whose constraints the analyzer checks."""
        return []
