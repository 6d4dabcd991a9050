"""Textual's private API is reached through one module, studio/textual_internals.py (issue 36.7).

Every other module of the package uses Textual's public API only: a private Textual import, a private attribute of a
Textual object, an override of a Textual class's private method or attribute, or a `__class__` swap anywhere else
fails here, naming its file and line. Each private name the adapter uses is pinned against the installed Textual (and
each private step it hooks, to Textual still taking it), so an upgrade that renames one fails here saying what it was for.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
import textual

import contractstudio

PACKAGE = Path(contractstudio.__file__).parent
ADAPTER = PACKAGE / "studio" / "textual_internals.py"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _textual_module(name: str) -> bool:
    return name == "textual" or name.startswith("textual.")


@functools.cache
def _textual_names() -> frozenset[str]:
    """Every private name Textual's own code defines, sets or reads as an attribute anywhere (read as text: parsing
    its 250 modules takes seconds)."""
    found = re.compile(r"(?:\bdef |\bclass |\.)(_[A-Za-z]\w*)")
    names = {m for file in Path(textual.__file__).parent.rglob("*.py") for m in found.findall(file.read_text(encoding="utf-8"))}
    return frozenset(n for n in names if _private(n))


@functools.cache
def _set_on_self(file: str) -> dict[str, frozenset[str]]:
    """For each class of a Textual module, the attributes its methods set on `self`."""
    tree = ast.parse(Path(file).read_text(encoding="utf-8"))
    return {node.name: frozenset(n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                                 and isinstance(n.value, ast.Name) and n.value.id == "self")
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


@functools.cache
def _textual_members(cls: type) -> frozenset[str]:
    """The private names the Textual classes among a class's bases define, or set on their instances."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not _textual_module(base.__module__):
            continue
        names |= set(vars(base)) | set(vars(base).get("__annotations__", {}))
        file = inspect.getsourcefile(base)
        if file is not None:
            names |= _set_on_self(file).get(base.__name__, frozenset())
    return frozenset(n for n in names if _private(n))


def _own_names(tree: ast.Module) -> set[str]:
    """The private names a module defines itself (its functions, classes and the attributes and names it sets)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return {n for n in names if _private(n)}


def _defined_in_class(item: ast.stmt) -> list[str]:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [item.name]
    targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _is_self(node: ast.expr) -> bool:
    """`self`, `cls` or `super()`: an attribute of the class the code is in."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def private_uses(path: str, source: str, namespace: dict[str, Any] | None) -> list[str]:
    """Each use of Textual's private API in a module, as `path:line: what` (`namespace`: the module's names, to know
    which of its classes are Textual's; None: a module that does not import textual, whose attributes are not looked at)."""
    tree = ast.parse(source)
    found: list[str] = []

    def say(node: ast.AST, what: str) -> None:
        found.append(f"{path}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _textual_module(alias.name) and any(map(_private, alias.name.split("."))):
                    say(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and _textual_module(node.module):
            if any(map(_private, node.module.split("."))):
                say(node, f"from {node.module} import ...")
            for alias in node.names:
                if _private(alias.name):
                    say(node, f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr == "__class__" and isinstance(node.ctx, ast.Store):
            say(node, "a __class__ swap")
    if namespace is None:
        return found
    own = _own_names(tree)

    def visit(node: ast.AST, cls: type | None) -> None:
        members = _textual_members(cls) if isinstance(cls, type) else frozenset()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                inner = namespace.get(child.name) if node is tree else getattr(cls, child.name, None)
                inner = inner if isinstance(inner, type) else None
                inner_members = _textual_members(inner) if inner is not None else frozenset()
                for item in child.body:
                    for name in _defined_in_class(item):
                        if name in inner_members:
                            say(item, f"{child.name}.{name} overrides Textual's own {name}")
                visit(child, inner)
                continue
            if isinstance(child, ast.Attribute) and _private(child.attr):
                if _is_self(child.value) and cls is not None:
                    if child.attr in members:
                        say(child, f".{child.attr} (Textual's, of {cls.__name__})")
                elif child.attr in _textual_names() and child.attr not in own:
                    say(child, f".{child.attr} (a private name of Textual's)")
            visit(child, cls)

    visit(tree, None)
    return found


def _imports_textual(source: str) -> bool:
    tree = ast.parse(source)
    return any(_textual_module(a.name) for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names) or any(
        n.module and _textual_module(n.module) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))


def test_only_the_adapter_uses_textuals_private_api() -> None:
    found: list[str] = []
    for file in sorted(PACKAGE.rglob("*.py")):
        if file == ADAPTER:
            continue
        source = file.read_text(encoding="utf-8")
        if "textual" not in source and "__class__" not in source:
            continue  # neither a Textual import nor a class swap: nothing to look at
        namespace = None
        if _imports_textual(source):
            name = ".".join(file.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
            namespace = vars(importlib.import_module(name))
        found += private_uses(str(file.relative_to(PACKAGE.parent)), source, namespace)
    assert not found, "Textual's private API outside studio/textual_internals.py (move it there):\n" + "\n".join(found)


PLANTED = '''\
from textual._time import get_time
from textual.widgets import TextArea
from textual.widgets.text_area import Document


class Editor(TextArea):
    _mine = 1

    def _on_key(self, event):
        return self._mine

    def shown(self):
        return self._line_cache


def nodes(app):
    return app._registry


def swap(document):
    document.__class__ = Document
'''


def test_each_kind_of_private_use_is_named_with_its_file_and_line() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(PLANTED, "planted.py", "exec"), namespace)  # the planted module's classes, to judge
    assert private_uses("planted.py", PLANTED, namespace) == [
        "planted.py:1: from textual._time import ...",
        "planted.py:21: a __class__ swap",
        "planted.py:9: Editor._on_key overrides Textual's own _on_key",
        "planted.py:13: ._line_cache (Textual's, of Editor)",
        "planted.py:17: ._registry (a private name of Textual's)",
    ]


# Each private name the adapter uses: (module, attribute path, the adapter's item that uses it). A name Textual
# calls itself (a step the adapter hooks) is also checked to be still called, as `self.<name>(` in its class's source.
PINNED = [
    ("textual._time", "get_time", "textual_time"),
    ("textual.widgets._footer", "FooterKey", "FooterKey"),
    ("textual.keys", "_character_to_key", "key_name"),
    ("textual.app", "App._registry", "app_nodes"),
    ("textual.dom", "DOMNode._merged_bindings", "class_bindings"),
    ("textual.dom", "DOMNode._bindings", "own_bindings"),
    ("textual.widgets", "Select._options", "offered_values"),
    ("textual.widgets", "OptionList._clear_caches", "measure_rows_again"),
    ("textual.widgets.text_area", "EditHistory._undo_stack", "undo_steps"),
    ("textual.widgets.text_area", "WrappedDocument._offset_to_line_info", "row_lines, lay_out_one_row_per_line"),
    ("textual.widgets.text_area", "WrappedDocument._width", "wrap_settings, lay_out_one_row_per_line"),
    ("textual.widgets.text_area", "WrappedDocument._tab_width", "wrap_settings, lay_out_one_row_per_line"),
    ("textual.widgets.text_area", "WrappedDocument._wrap_offsets", "lay_out_one_row_per_line"),
    ("textual.widgets.text_area", "WrappedDocument._line_index_to_offsets", "lay_out_one_row_per_line"),
    ("textual.widgets.text_area", "WrappedDocument._tab_width_cache", "lay_out_one_row_per_line"),
    ("textual.app", "App._shutdown", "AppSteps.before_shutdown"),
    ("textual.app", "App._handle_exception", "AppSteps.exception_in_handler"),
    ("textual.screen", "Screen._compositor_refresh", "ModalScreenSteps.painted"),
    ("textual.widgets", "TextArea._set_document", "TextAreaSteps.set_document"),
    ("textual.widgets", "TextArea._build_highlight_map", "TextAreaSteps.build_highlight_map"),
    ("textual.widgets", "TextArea._render_line", "TextAreaSteps.render_row"),
    ("textual.widgets", "TextArea._watch_selection", "TextAreaSteps.selection_changed"),
    ("textual.widgets", "TextArea._line_cache", "TextAreaSteps.drawn_rows"),
    ("textual.widgets", "TextArea._highlights", "TextAreaSteps.highlights"),
    ("textual.widgets", "TextArea._highlight_query", "TextAreaSteps.highlight_query"),
    ("textual.widgets", "TextArea._cursor_offset", "TextAreaSteps.cursor_offset"),
    ("textual.widgets", "TextArea._recompute_cursor_offset", "TextAreaSteps.recompute_cursor_offset"),
    ("textual.widgets", "TextArea._has_cursor", "TextAreaSteps.has_cursor"),
    ("textual.widgets", "TextArea._cursor_visible", "TextAreaSteps.cursor_shown"),
    ("textual.widgets", "TextArea._replace_via_keyboard", "TextAreaSteps.replace_via_keyboard"),
    ("textual.widgets", "TextArea._rewrap_and_refresh_virtual_size", "TextAreaSteps.refresh_layout"),
    ("textual.widgets", "TextArea._get_builtin_highlight_query", "builtin_grammar"),
    ("textual._tree_sitter", "get_language", "builtin_grammar"),
]
# The private steps Textual takes itself, which the adapter forwards to public methods: where and how it takes them.
CALLED = {"App._shutdown": ("textual.app", "._shutdown()"),
          "App._handle_exception": ("textual.app", "._handle_exception("),
          "Screen._compositor_refresh": ("textual.screen", "self._compositor_refresh()"),
          "TextArea._set_document": ("textual.widgets._text_area", "self._set_document("),
          "TextArea._build_highlight_map": ("textual.widgets._text_area", "self._build_highlight_map()"),
          "TextArea._render_line": ("textual.widgets._text_area", "self._render_line("),
          "TextArea._watch_selection": ("textual.reactive", 'getattr(obj, f"_watch_{name}", None)')}


@pytest.mark.parametrize(("module", "attribute", "item"), PINNED, ids=[f"{m}.{a}" for m, a, _ in PINNED])
def test_each_internal_the_adapter_uses_still_exists(module: str, attribute: str, item: str) -> None:
    why = f"{module}.{attribute} is gone or renamed: studio/textual_internals.py's {item} needs it (see its docstring)"
    found: object = importlib.import_module(module)
    for part in attribute.split("."):
        if not hasattr(found, part) and isinstance(found, type):
            assert part in _textual_members(found), why  # an instance attribute: the class (or a Textual base) sets it
            return
        assert hasattr(found, part), why
        found = getattr(found, part)
    if attribute in CALLED:
        where, call = CALLED[attribute]
        assert call in inspect.getsource(importlib.import_module(where)), (
            f"Textual no longer calls {attribute} ({call} in {where}): studio/textual_internals.py's {item} would never run")


def test_every_private_name_the_adapter_uses_is_pinned() -> None:
    tree = ast.parse(ADAPTER.read_text(encoding="utf-8"))
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _private(n.attr)}
    used |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(n.name)}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names if _private(a.name)}
    used |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
             and any(map(_private, n.module.split(".")))}
    pinned = {a.split(".")[-1] for _, a, _ in PINNED} | {m for m, _, _ in PINNED}
    assert used <= pinned, f"pin these in PINNED with the adapter's item that needs them: {sorted(used - pinned)}"
