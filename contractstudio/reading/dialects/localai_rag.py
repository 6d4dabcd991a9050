"""LocalAI-RAG pipelines (`YAMLpipeline:` / `YAMLpipelines:` / `pipelines:`) read as `kind: pipeline` documents.

Their `extends:` is resolved as LocalAI-RAG's loader does it (a deep merge: settings
by key, steps by id, the child winning), but on nodes, so every value keeps the
place it was written: a step the child touched is reported in the child, a step
only the base has is reported in the base. What the mapping does key by key is in
docs/dialects.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.findings.diagnostics import Diagnostic, Payload, Related, Span, declare, make
from contractstudio.reading.dialect_registry import BaseDialect, YamlFile, forced_hint, register
from contractstudio.reading.dialects.localai_merge import merge_pipeline, without
from contractstudio.reading.dialects.synth import data_of, entry, mapping, scalar, sequence, text_of
from contractstudio.reading.nodes import Included, MapNode, Node, ScalarNode, SeqNode, SourceDocument

NAME = "localai-rag"
CONTAINERS = ("YAMLpipelines", "pipelines")  # several pipelines in one file
ROUTERS = ("prefix_router", "json_decision_router")  # their steps nest `routes:`; the native reading flattens them
MAX_EXTENDS = 20  # LocalAI-RAG's own cap on the depth of an extends chain
# Characters the pipelines of one file may inherit through `extends:`, counted at every merge (like the alias bound):
# each entry merges its whole chain again, so 200 entries over 21 bases of 14 KB took 90 s and 2.4 GB.
MAX_MERGED_CHARS = 2_000_000
declare("REF203", "bad-extends", "error", "An `extends:` base that cannot be found or read, or a chain of bases that loops.")

COMPAT_MODES = ("locked", "latest", "strict")
# The state the runner fills from each request (their DynamicPipelineRunner), before the first step.
REQUEST_FIELDS = (
    "user_query", "session_id", "consultant", "request_id", "branch", "translate_chat",
    "user_id", "repository", "snapshot_id", "snapshot_id_b", "snapshot_set_id",
)

Loader = Callable[[Path, tuple[Related, ...]], "tuple[list[SourceDocument], str | None]"]

_SHAPE = re.compile(r"^(?:YAMLpipeline[ \t]*:"
                    r"|(?:YAMLpipelines|pipelines)[ \t]*:[ \t]*(?:\[|(?:#.*)?\n(?:[ \t]*(?:#.*)?\n)*[ \t]*- ))", re.M)
# A LocalAI-RAG test manifest: a `YAMLpipelines:` list whose rows name files (pipeline_file, scenario_file) and
# hold no pipeline (no steps, settings or extends key anywhere): their scenario runner's input, not a pipeline.
_MANIFEST_ROW = re.compile(r"^[ \t]+(?:- )?(?:pipeline_file|scenario_file)[ \t]*:", re.M)
_PIPELINE_KEY = re.compile(r"^[ \t]*(?:- )?(?:steps|settings|extends)[ \t]*:", re.M)


class LocalAIRag(BaseDialect):
    """The dialect: a file with a top-level `YAMLpipeline:` (or a list of pipelines) reads as `kind: pipeline`."""

    name = NAME
    kinds: tuple[str, ...] = ("pipeline",)
    described = "LocalAI-RAG pipelines (a top-level YAMLpipeline:)"

    def sniff(self, text: str) -> str | None:
        """`pipeline` for a text with LocalAI-RAG's top-level keys."""
        return "pipeline" if _SHAPE.search(text) else None

    def foreign(self, text: str) -> str | None:
        """A LocalAI-RAG scenario manifest is theirs, not a pipeline."""
        if _SHAPE.search(text) and _MANIFEST_ROW.search(text) and not _PIPELINE_KEY.search(text):
            return "a LocalAI-RAG scenario manifest (its rows name pipeline_file/scenario_file; no row has steps or settings)"
        return None

    def shaped(self, root: Node | None) -> bool:
        """LocalAI-RAG's shape (`is_localai`)."""
        return is_localai(root)

    def reader(self, file: YamlFile) -> ShapedReader:
        """One resolver of `extends:` for the whole file (bases read once)."""
        return ShapedReader(Resolver(file.source.path, _real(file.location), _pipelines_root(file.location, file.pipelines_root),
                                     file.load_base))


class ShapedReader:
    """The resolver's reading, refusing a document forced to this dialect (--dialect) without its shape."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.diagnostics = resolver.diagnostics

    def read(self, doc: SourceDocument) -> list[SourceDocument]:
        """The document's pipelines, or YML003 when it has none of LocalAI-RAG's keys."""
        if not is_localai(doc.root):
            span = doc.root.span if doc.root is not None else Span(doc.line, 1, doc.line, 2)
            self.diagnostics.append(make("YML003", f"read as {NAME}, but the document has no YAMLpipeline:, YAMLpipelines: "
                                         "or pipelines: list", self.resolver.path, span,
                                         hint=forced_hint(doc.root, NAME)))
            return []
        return self.resolver.read(doc)


def _real(location: Path) -> Path:
    try:
        return location.resolve()
    except OSError:
        return location


def _pipelines_root(location: Path, configured: Path | None) -> Path:
    """Where `extends: <name>` is looked up last: the folder settings' pipelines_root, else the nearest `pipelines`."""
    if configured is not None:
        return configured
    folder = location.parent.resolve()
    return next((p for p in (folder, *folder.parents) if p.name == "pipelines"), folder)


def is_localai(root: Node | None) -> bool:
    """A mapping with a `YAMLpipeline:` mapping or a `YAMLpipelines:` / `pipelines:` list, and no `kind:`."""
    if not isinstance(root, MapNode) or root.get("kind") is not None:
        return False
    return isinstance(root.get("YAMLpipeline"), MapNode) or any(isinstance(root.get(k), SeqNode) for k in CONTAINERS)


def pipelines_in(root: Node | None) -> list[tuple[Node, MapNode]]:
    """(anchor, pipeline mapping) of each pipeline a document holds; a list entry with no steps, extends or settings
    (a test manifest row) is not a pipeline."""
    if not isinstance(root, MapNode):
        return []
    single = root.get("YAMLpipeline")
    if isinstance(single, MapNode):
        return [(root.key_node("YAMLpipeline") or single, single)]
    for key in CONTAINERS:
        items = root.get(key)
        if isinstance(items, SeqNode):
            return [(i, i) for i in items.items
                    if isinstance(i, MapNode) and any(i.get(k) is not None for k in ("steps", "extends", "settings"))]
    return []


@dataclass(slots=True)
class Resolver:
    """Resolves `extends:` chains of one file; files it reads come from `load` (cached, placed past the file)."""

    path: str  # the file as the user named it
    real: Path  # the file on disk (resolved), or a path in the folder it would be in
    root_dir: Path  # LocalAI-RAG's pipelines_root: the last place `extends:` is looked up
    load: Loader
    diagnostics: list[Diagnostic] = field(default_factory=list)
    inherited: int = 0  # characters merged in from bases so far (MAX_MERGED_CHARS)
    over: bool = False  # the bound was crossed: no more merging in this file
    weights: dict[int, int] = field(default_factory=dict)  # characters of a node, by id (nodes kept alive in `kept`)
    kept: list[Node] = field(default_factory=list)

    def report(self, code: str, message: str, at: Node, hint: str | None = None, payload: Payload | None = None) -> None:
        self.diagnostics.append(make(code, message, self.path, at.span, hint=hint, payload=payload))

    def read(self, doc: SourceDocument) -> list[SourceDocument]:
        """The native reading of every pipeline of one document."""
        out = []
        for i, (anchor, node) in enumerate(pipelines_in(doc.root)):
            was_over = self.over
            merged = self.resolve(node, self.real, ((self.real, text_of(node.get("name"))),), ())
            if self.over and not was_over:  # reported at the entry whose chain crossed the bound
                self.report("YML006", f"the pipelines of this file inherit more than {MAX_MERGED_CHARS:,} characters through extends:",
                            node.get("extends") or anchor, hint="each entry merges its whole extends chain: share fewer, "
                            "smaller bases, or split the file")
            root = self.native(merged, anchor)
            data = _reuse(root, node, _raw(doc.data, i)) if merged is node else data_of(root)
            out.append(SourceDocument(doc.index, root, data, anchor.line, dialect=NAME))
        if not out and isinstance(doc.root, MapNode):
            self.report("YML003", "the file holds no LocalAI-RAG pipeline: no entry of its list has steps, settings or extends",
                        doc.root, hint="a pipeline is a mapping with name, settings and steps")
        return out

    # ------------------------------------------------------------- extends

    def resolve(self, node: MapNode, real: Path, chain: tuple[tuple[Path, str | None], ...], via: tuple[Related, ...]) -> MapNode:
        """The pipeline with its `extends:` chain merged in (LocalAI-RAG's semantics), `extends` removed."""
        ext = node.get("extends")
        if ext is None or self.over or (isinstance(ext, ScalarNode) and ext.value is None):  # `extends: ""` is REF203
            return without(node, "extends")
        value = text_of(ext)
        if value is None:
            self.report("SCH103", "extends: must be a string 'path' or 'path#pipeline_name'", ext)
            return without(node, "extends")
        target, _, name = value.partition("#")
        target, pick = target.strip(), name.strip() or None
        if len(chain) > MAX_EXTENDS:
            self.report("REF203", f"the extends chain is deeper than {MAX_EXTENDS} files", ext)
            return without(node, "extends")
        found = self._locate(target, real.parent) if target else None
        if found is None:
            where = "names no file" if not target else f"names '{target}', which is not a file"
            self.report("REF203", f"extends {where}", ext,
                        hint=f"looked next to this file, then in the pipelines root {self.root_dir}" if target else None)
            return without(node, "extends")
        here = Related(self.path, ext.line, ext.column, f"inherits from '{value}' here")
        docs, problem = self.load(found, (here, *via))
        if problem is not None:
            self.report("REF203", f"extends target '{target}' cannot be read: {problem}", ext)
            return without(node, "extends")
        parent, why = _select(docs, pick)
        if parent is None:
            self.report("REF203", f"extends target '{value}' {why}", ext)
            return without(node, "extends")
        link = (found, text_of(parent.get("name")))
        if link in chain:
            loop = (*chain[chain.index(link):], link)  # the loop itself, the same from wherever it is entered
            names = " -> ".join(_short(p, n) for p, n in loop)
            self.report("REF203", f"circular extends: {names}", ext, hint="a base must not extend (directly or not) its own child")
            return without(node, "extends")
        parent = self.resolve(parent, found, (*chain, link), (here, *via))
        if self.over:
            return without(node, "extends")
        self.inherited += self._weight(parent)
        if self.inherited > MAX_MERGED_CHARS:
            self.over = True
            return without(node, "extends")
        merged = merge_pipeline(parent, node)
        self.weights[id(merged)] = self._weight(parent) + self._weight(node)  # an upper bound: the child may override
        self.kept.append(merged)
        return merged

    def _weight(self, node: Node) -> int:
        """The characters of a node's scalars (keys included), counted once per node."""
        known = self.weights.get(id(node))
        if known is None:
            known = self.weights[id(node)] = _chars(node)
            self.kept.append(node)
        return known

    def _locate(self, target: str, folder: Path) -> Path | None:
        """LocalAI-RAG's lookup order: absolute, next to the file, under pipelines_root, then <root>/<name>.yaml|.yml."""
        candidate = Path(target)
        tries = [candidate] if candidate.is_absolute() else [folder / candidate, self.root_dir / candidate,
                                                             self.root_dir / f"{target}.yaml", self.root_dir / f"{target}.yml"]
        for path in tries:
            try:
                if path.is_file():
                    return path.resolve()
            except OSError:
                continue
        return None

    # ------------------------------------------------------------- the native reading

    def native(self, p: MapNode, anchor: Node) -> MapNode:
        """kind: pipeline with catalog: localai-rag; settings.entry_step_id as entry_step_id; routes flattened."""
        pairs = [entry("kind", scalar("pipeline", anchor), anchor), entry("catalog", scalar(NAME, anchor), anchor)]
        for key in ("name", "description"):
            if p.get(key) is not None:
                pairs.append((p.key_node(key), p.get(key)))  # type: ignore[arg-type]
        settings = p.get("settings")
        if isinstance(settings, MapNode):
            eid = settings.get("entry_step_id")
            if eid is not None:
                pairs.append((settings.key_node("entry_step_id"), eid))  # type: ignore[arg-type]
            self._required_settings(settings, p.key_node("settings") or anchor)
        elif settings is not None:
            self.report("SCH103", "settings: must be a mapping", settings)
        else:
            self._required_settings(None, p.key_node("name") or anchor)
        if isinstance(settings, MapNode):
            pairs.append((p.key_node("settings"), settings))  # type: ignore[arg-type]
        pairs.append(entry("inputs", sequence((scalar(f, anchor) for f in REQUEST_FIELDS), anchor), anchor))
        steps = p.get("steps")
        if isinstance(steps, SeqNode):
            steps = sequence((self._step(s) for s in steps.items), steps)
        if steps is not None:
            pairs.append((p.key_node("steps"), steps))  # type: ignore[arg-type]
        return mapping(pairs, p)

    def _required_settings(self, settings: MapNode | None, at: Node) -> None:
        """What LocalAI-RAG's validator refuses to load without (entry_step_id is PIP101's)."""
        version = settings.get("behavior_version") if settings is not None else None
        if version is None:
            self.report("SCH101", "missing required key 'behavior_version' in settings", at, payload=Payload(key="behavior_version"),
                        hint="LocalAI-RAG's validator requires it, e.g. behavior_version: \"0.2.0\"")
        elif not (text_of(version) or "").strip():
            self.report("SCH103", "settings.behavior_version must be a non-empty string", version)
        mode = settings.get("compat_mode") if settings is not None else None
        if mode is None:
            self.report("SCH101", "missing required key 'compat_mode' in settings", at, hint="one of: locked, latest, strict",
                        payload=Payload(key="compat_mode"))
        elif (text_of(mode) or "").strip().lower() not in COMPAT_MODES:
            self.report("SCH104", f"settings.compat_mode must be one of {', '.join(COMPAT_MODES)}", mode)

    def _step(self, step: Node) -> Node:
        """A step with its nested `routes:` flattened into on_<route> (and <route>_prefix) keys."""
        if type(step) is not MapNode:
            return step
        action = routes = None
        for k, v in step.pairs:  # one pass: most steps are not routers and leave unchanged
            key = k[5] if type(k) is ScalarNode else None
            if key == "action":
                action = v[5] if type(v) is ScalarNode else None
            elif key == "routes":
                routes = v
        if action not in ROUTERS:
            return step
        if routes is None:
            if action == "json_decision_router":
                self.report("SCH101", "json_decision_router needs 'routes: {<decision>: <step>}'", step.key_node("action") or step)
            return step
        if not isinstance(routes, MapNode):
            self.report("SCH103", "routes: must be a mapping", routes)
            return without(step, "routes")
        flat: list[tuple[Node, Node]] = []
        for key, value in routes.pairs:
            route = key.value if isinstance(key, ScalarNode) else None
            if not isinstance(route, str):
                continue
            if action == "json_decision_router":
                flat.append(entry(f"on_{route}", value, key))
            elif isinstance(value, MapNode):
                prefix, target = value.get("prefix"), value.get("next")
                if prefix is None and target is None:
                    self.report("SCH101", f"route '{route}' needs a prefix and a next step", key)
                if prefix is not None:
                    flat.append(entry(f"{route}_prefix", prefix, key))
                if target is not None:
                    flat.append(entry(f"on_{route}", target, key))
            else:
                self.report("SCH103", f"route '{route}' must be a mapping with prefix and next", value)
        pairs: list[tuple[Node, Node]] = []
        for k, v in step.pairs:
            pairs.extend(flat if isinstance(k, ScalarNode) and k.value == "routes" else [(k, v)])
        return mapping(pairs, step)


def _chars(node: Node) -> int:
    """Characters of every scalar under a node (an iterative walk: no recursion limit)."""
    total, todo = 0, [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ScalarNode):
            total += len(n.text) or len(str(n.value))
        elif isinstance(n, MapNode):
            for k, v in n.pairs:
                todo += (k, v)
        elif isinstance(n, SeqNode):
            todo += n.items
    return total


def _raw(data: object, i: int) -> dict[str, Any] | None:
    """The reader's own plain data of the i-th pipeline of a document (kept where the native reading reuses it)."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("YAMLpipeline"), dict):
        return data["YAMLpipeline"] if i == 0 else None
    items: list[Any] = next((data[k] for k in CONTAINERS if isinstance(data.get(k), list)), [])
    entries = [e for e in items if isinstance(e, dict) and any(e.get(k) is not None for k in ("steps", "extends", "settings"))]
    return entries[i] if i < len(entries) else None


def _reuse(root: MapNode, p: MapNode, raw: dict[str, Any] | None) -> Any:
    """data_of(root), reusing the reader's data for the settings and the steps left as written (the bulk of a file)."""
    if raw is None or not isinstance(raw.get("steps"), list) or not isinstance(p.get("steps"), SeqNode):
        return data_of(root)
    written = p.get("steps").items  # type: ignore[union-attr]
    out: dict[str, Any] = {}
    for k, v in root.pairs:
        key = k.value  # type: ignore[attr-defined]
        if key == "settings" and v is p.get("settings"):
            out[key] = raw["settings"]
        elif key == "steps" and isinstance(v, SeqNode) and len(v.items) == len(written) == len(raw["steps"]):
            out[key] = [raw["steps"][j] if item is written[j] else data_of(item) for j, item in enumerate(v.items)]
        else:
            out[key] = data_of(v)
    return out


def _select(docs: list[SourceDocument], pick: str | None) -> tuple[MapNode | None, str]:
    """The pipeline an extends target names (LocalAI-RAG: a single pipeline wins; in a list, by name)."""
    for doc in docs:
        root = doc.root
        if not isinstance(root, MapNode):
            continue
        if isinstance(root.get("YAMLpipeline"), MapNode):
            return root.get("YAMLpipeline"), ""  # type: ignore[return-value]
        items = next((root.get(k) for k in CONTAINERS if isinstance(root.get(k), SeqNode)), None)
        if isinstance(items, SeqNode):
            entries = [i for i in items.items if isinstance(i, MapNode)]
            if pick is not None:
                hit = next((i for i in entries if (text_of(i.get("name")) or "").strip() == pick), None)
                names = ", ".join(n for i in entries if (n := text_of(i.get("name")))) or "none"
                return hit, f"has no pipeline named '{pick}' (it has: {names})"
            if len(entries) == 1:
                return entries[0], ""
            return None, "holds several pipelines: name one with 'extends: <path>#<pipeline name>'"
    return None, "holds no LocalAI-RAG pipeline (no YAMLpipeline:, YAMLpipelines: or pipelines:)"


def _short(path: Path, name: str | None) -> str:
    return path.name


def included(path: str, text: str, first_line: int, via: tuple[Related, ...]) -> Included:
    """The source-map entry of a base file read at `first_line`."""
    return Included(path, text, first_line, text.count("\n") + 1, via)


register(LocalAIRag())
