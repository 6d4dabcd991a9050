"""One document analyzed again after an edit within one entry of a long list: only what that entry can change.

A 5 MB file of one document is mostly one list: a pipeline's `steps` (44,000 of them) or a contract's `examples`
(32,000). The reading of an edit is already incremental (reading/reread.py reads the edited entry again and says
which one, `SourceFile.edited`); `EntriesKept` does the same for the analysis. It keeps the last analysis of a
one-document file: its model, and each pass's findings (a checker's or a rule's, in order). After an edit inside
entry i of such a list,

- the model is the last one with entry i validated again on its own and put in its place (when the last document
  validated without a finding and the new entry does: then the whole validates the same, with no finding);
- each pass is asked how it reads the list's entries (its `entries`, rules/registry.py): a pass that reads none of
  them, or reads the same of entry i before and after (its view of the entry is equal), keeps its findings, the
  ones after the entry moved by the lines the edit added; a pass whose findings are per entry (`Each`) keeps the
  others' and finds entry i's again; a pass whose findings are each entry's own given facts of the whole list
  (`Touched`: a step is unreachable, its target is not a step) names the entries the edit can change the findings
  of (the steps whose reachability changed, ...), keeps the others' and finds those again; any other pass runs
  again whole. A kept finding that touches entry i's old lines (or a named entry's, or spans them) is not trusted:
  its pass runs again.

The result is what `check_text` gives for the text (tests/test_by_entry.py edits generated pipelines and
contracts at random and compares every finding, with its subject and payload). Anything else is analyzed whole:
several documents, a dialect's document, other files read along, a document that did not validate cleanly, an
edit in the list's last entry or outside every entry, a budget that ran out (YML006, the expression budget), a
change in what runs. As for documents (analysis/by_document.py), the regex budget is time and a kept finding
spends none of it again; a hook module changed on disk is seen by the passes that run again.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from contractstudio.analysis import check
from contractstudio.analysis.loaded import Context, ExpressionChecks, Loaded, file_regex_budget
from contractstudio.analysis.rules.registry import UNREAD, Each, EntryUse, Touched
from contractstudio.analysis.shape import with_paths
from contractstudio.documents.patterns import shared_budget
from contractstudio.expressions.sandbox import ExpressionBudget, shared_expression_budget
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.reading.kinds import NATIVE
from contractstudio.reading.nodes import Edited, SeqNode, SourceFile, node_at


def _item_models() -> dict[tuple[str, str], type[BaseModel]]:
    from contractstudio.documents.contract_model import Example
    from contractstudio.documents.pipeline_model import Step

    return {("pipeline", "steps"): Step, ("contract", "examples"): Example}


LISTS = {"pipeline": "steps", "contract": "examples"}  # the long list of each kind whose entries are analyzed apart

ENTRY_EDIT = "analysis.entry_edit"  # the memo key of an analysis per entry's `EntryEdit`
_MAX_CARRIED = 16  # entries an EntryEdit may name: past them, a fact kept per entry is found again whole


@dataclass(frozen=True, slots=True)
class EntryEdit:
    """Kept in the memo of an analysis made per entry: it is the analysis whose memo is `before` with entries
    `indices` of list `key` analyzed again. Facts another layer keeps per entry (the editing help's symbols,
    editing/symbol_index.py) are carried over from `before`'s and found again for those entries only; the layer drops
    this from the memo once it has its fact.

    Analyses in a row that nobody asked such a fact of (the studio's next key stops the symbols' collection each
    time) make one EntryEdit, not a chain: each reaches past the one before to its `before`, adding its entry. A
    chain of 16 was cut, and the next collection was whole: 180-230 ms of the studio's worker while keys came."""

    before: dict[str, Any]
    key: str
    indices: frozenset[int]


@dataclass(slots=True)
class _Kept:
    """The last analysis of a one-document file, as `EntriesKept` reuses it."""

    path: str
    ctx: Context
    text: str  # the text analyzed: an edit's reading must have been made from it
    reading: SourceFile | None  # its reading as the reader gave it (before dialect readers), to read the next edit from
    item: Loaded
    passes: list[check.Ran]  # each pass as it ran: its function, findings, expression budget used


class EntriesKept:
    """One file's last one-document analysis, kept so that the next one after an edit in one entry redoes only that."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self.again = 0  # analyses done from the kept one (tests and benches read it)

    def forget(self) -> None:
        self._kept = None

    def reading(self) -> SourceFile | None:
        """The reading of the text whose analysis is kept (None: none is)."""
        return self._kept.reading if self._kept is not None else None

    def analyze(self, source: SourceFile, ctx: Context | None, expressions: ExpressionChecks | None,
                edited: tuple[str, Edited] | None = None, reading: SourceFile | None = None) -> check.FileReport:
        """The analysis of `source`, as `analyze_source` gives it; `edited`: the text its reading was made from, and
        how (`SourceFile.edited`); `reading`: the reader's own (kept with the analysis, `reading()`).

        An analysis stopped midway (the studio stops a stale one) changes nothing kept: the next one starts from the
        last analysis that finished, whose reading the Analyzer reads the new text from.
        """
        ctx = ctx or Context()
        kept = self._kept
        if len(source.documents) != 1 or source.includes:
            self._kept = None
            return check.analyze_source(source, ctx, expressions=expressions)
        again = None
        if kept is not None and edited is not None and edited[0] == kept.text:
            regex, spend = file_regex_budget(), ExpressionBudget(what="this file's analysis")
            with shared_budget(regex), shared_expression_budget(spend):
                again = _again(kept, source, edited[1], ctx, expressions, regex, spend)
        shape: list[Diagnostic] = []
        if again is not None:
            self.again += 1
            item, passes = again
            found = [d for _, out, _ in passes for d in out]
        else:  # with budgets of its own: what an attempt above spent is not this analysis's
            regex, spend = file_regex_budget(), ExpressionBudget(what="this file's analysis")
            with shared_budget(regex), shared_expression_budget(spend):
                passes = []
                item, all_found = check.analyze_document(source, source.documents[0], ctx, regex, expressions, passes)
            found = [d for _, out, _ in passes for d in out] + item.resource_limits
            shape = all_found[:len(all_found) - len(found)]  # the shape's findings come first
        report = check.FileReport(source.path, source.text, source, [item],
                                  check.file_findings([*source.diagnostics, *shape, *found], source))
        keep = (not shape and item.model is not None and not item.resource_limits and not spend.spent and not spend.reported
                and LISTS.get(item.kind or "") is not None and item.dialect == NATIVE
                and not any(d.code == "YML006" for d in found))
        self._kept = _Kept(source.path, ctx, source.text, reading, item, passes) if keep else None
        return report


def _again(kept: _Kept, source: SourceFile, edited: Edited, ctx: Context, expressions: ExpressionChecks | None,
           regex: Any, spend: ExpressionBudget) -> tuple[Loaded, list[check.Ran]] | None:
    """The analysis after an edit inside one entry of the kind's long list, from the kept one; None: analyze it whole."""
    doc, old = source.documents[0], kept.item.doc
    kind = doc.kind
    key = LISTS.get(kind or "")
    path = edited.path
    if (key is None or kind != old.kind or doc.dialect != NATIVE or kept.path != source.path or kept.ctx != ctx
            or len(path) < 2 or path[0] != key or not isinstance(path[1], int)):
        return None
    i = path[1]
    old_seq, new_seq = node_at(old.root, (key,)), node_at(doc.root, (key,))
    if not isinstance(old_seq, SeqNode) or not isinstance(new_seq, SeqNode) or len(old_seq.items) != len(new_seq.items):
        return None
    if i + 1 >= len(old_seq.items):
        return None  # the last entry: where it ends is where the list ends, which its findings may span
    first, end, new_end = old_seq.items[i].line, old_seq.items[i + 1].line, new_seq.items[i + 1].line
    delta = new_end - end
    if new_seq.items[i].line != first or delta != edited.delta or not first <= edited.first <= edited.end <= end:
        return None
    old_entry, new_entry = _entry(old.data, key, i), _entry(doc.data, key, i)
    if old_entry is None or new_entry is None:
        return None
    model = _model_with(kept.item.model, kind or "", key, i, new_entry)
    if model is None:
        return None
    item = check.load(source.path, source.text, doc, model, ctx, regex)
    item.source = source
    item.expression_cache = expressions
    item.carry(kept.item, i)
    prior = kept.item.memo.get(ENTRY_EDIT)
    if isinstance(prior, EntryEdit) and prior.key == key:  # nobody asked the kept analysis: reach past it
        if len(prior.indices | {i}) <= _MAX_CARRIED:
            item.memo[ENTRY_EDIT] = EntryEdit(prior.before, key, prior.indices | {i})
    else:
        item.memo[ENTRY_EDIT] = EntryEdit(kept.item.memo, key, frozenset({i}))
    runs = check.rule_passes(item)
    if [run for _, run in runs] != [run for run, _, _ in kept.passes]:
        return None
    passes = []
    entries = _Entries(old_seq, new_seq, i)
    for (uses, run), (_, out, used) in zip(runs, kept.passes, strict=True):
        use = uses.get(key)
        if isinstance(use, Touched) and (use.view is None or use.view(old_entry) != use.view(new_entry)):
            again = _touched(use, run, kept.item, item, key, entries, out)
        elif isinstance(use, Touched):
            again = _moved(out, first, end, new_end - end)
        else:
            again = _reused(use, item, key, i, old_entry, new_entry, out, (first, end, new_end))
        if again is not None:
            spend.used += used
            passes.append(check.Ran(run, again, used))
        else:
            before = spend.used
            passes.append(check.Ran(run, check.run_pass(item, run), spend.used - before))
    if item.resource_limits or spend.spent or spend.reported:
        return None
    return item, passes


def _entry(data: Any, key: str, i: int) -> Any:
    items = data.get(key) if isinstance(data, dict) else None
    return items[i] if isinstance(items, list) and i < len(items) else None


def _model_with(model: Any, kind: str, key: str, i: int, data: Any) -> Any:
    """The document's model with entry i validated again on its own (None when it does not validate)."""
    cls = _item_models()[(kind, key)]
    try:
        entry = cls.model_validate(with_paths(data, (key, i)))
    except ValidationError:
        return None
    items = list(getattr(model, key))
    items[i] = entry
    return model.model_copy(update={key: items})


def _reused(use: EntryUse | None, item: Loaded, key: str, i: int, old_entry: Any, new_entry: Any, out: list[Diagnostic],
            lines: tuple[int, int, int]) -> list[Diagnostic] | None:
    """A pass's findings after the edit without running it whole, or None: run it."""
    first, end, new_end = lines
    if use is None:
        return None
    if isinstance(use, Each):
        others = [d for d in out if not _inside(d, first, end)]
        mine = use.findings(item, key, i)
        if mine is None:
            return None
        mine = list(mine)
        if not all(_inside(d, first, new_end) for d in mine):
            return None
        moved = _moved(others, first, end, new_end - end)
        if moved is None:
            return None
        return [d for d in moved if d.line < first] + mine + [d for d in moved if d.line >= first]
    if use == UNREAD or (callable(use) and use(old_entry) == use(new_entry)):
        return _moved(out, first, end, new_end - end)
    return None


class _Entries:
    """Where each entry of the edited list begins, before the edit and after it (computed when a `Touched` rule asks)."""

    def __init__(self, old: SeqNode, new: SeqNode, edited: int) -> None:
        self.old, self.new, self.edited = old, new, edited
        self._starts: tuple[list[int], list[int]] | None = None

    def starts(self) -> tuple[list[int], list[int]]:
        if self._starts is None:
            self._starts = [n.line for n in self.old.items], [n.line for n in self.new.items]
        return self._starts


def _touched(use: Touched, run: check.Pass, before: Loaded, item: Loaded, key: str, entries: _Entries,
             out: list[Diagnostic]) -> list[Diagnostic] | None:
    """A `Touched` rule's findings after the edit: the last ones of the entries it did not name, moved, and those of
    the entries it named found again; None: run it whole (the rule could not tell, it named most of the list or the
    last entry, or a finding lies across entries it named)."""
    touched = use.entries(before, item, key, entries.edited)
    if touched is None:
        return None
    named = {*touched, entries.edited}
    count = len(entries.old.items)
    if max(named) + 1 >= count or len(named) > count // 4:
        return None  # the last entry's end is the list's; a quarter of the list costs about what the whole does
    old_starts, new_starts = entries.starts()
    lo, hi = old_starts[min(named)], old_starts[max(named) + 1]  # the named entries lie within lines lo..hi-1
    kept = []
    for d in out:
        if not d.related and (d.end_line < lo or d.line >= hi):
            kept.append(d)
            continue
        lines = [d.line, d.end_line, *(r.line for r in d.related)]
        at = {bisect_right(old_starts, line) - 1 for line in lines}
        if at.isdisjoint(named) and not _spans(d, old_starts, named):
            kept.append(d)
        elif len(at) != 1 or not at <= named:
            return None  # across entries, one of them named: it cannot be told apart
    i = entries.edited
    moved = _moved(kept, old_starts[i], old_starts[i + 1], new_starts[i + 1] - old_starts[i + 1])
    if moved is None:
        return None
    found = list(cast(Any, run)(item, sorted(named)))  # a Touched rule takes the entries' indices (rules/registry.py)
    for d in found:
        at = {bisect_right(new_starts, line) - 1 for line in (d.line, d.end_line, *(r.line for r in d.related))}
        if len(at) != 1 or not at <= named:
            return None
    return sorted(moved + found, key=lambda d: bisect_right(new_starts, d.line))  # stable: an entry's own order kept


def _spans(d: Diagnostic, starts: list[int], named: set[int]) -> bool:
    """Whether a finding's lines run across a named entry between its first and last line."""
    first, last = bisect_right(starts, d.line) - 1, bisect_right(starts, d.end_line) - 1
    return last - first > 1 and any(first < j < last for j in named)


def _inside(d: Diagnostic, first: int, end: int) -> bool:
    """Whether a finding and every place it names lie within lines first..end-1."""
    return first <= d.line and d.end_line < end and all(first <= r.line < end for r in d.related)


def _moved(found: Iterable[Diagnostic], first: int, end: int, delta: int) -> list[Diagnostic] | None:
    """The findings with every line from `end` on moved by `delta`; None when one touches lines first..end-1."""
    out = []
    for d in found:
        if not _clear(d.line, d.end_line, first, end) or not all(_clear(r.line, r.line, first, end) for r in d.related):
            return None
        if delta and (d.end_line >= end or any(r.line >= end for r in d.related)):
            d = replace(d, line=d.line + delta if d.line >= end else d.line, end_line=d.end_line + delta,
                        related=tuple(replace(r, line=r.line + delta) if r.line >= end else r for r in d.related))
        out.append(d)
    return out


def _clear(line: int, end_line: int, first: int, end: int) -> bool:
    """Whether lines line..end_line lie wholly before line `first` or wholly from line `end` on."""
    return end_line < first or line >= end

