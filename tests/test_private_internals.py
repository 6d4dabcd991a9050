"""Every private attribute of a dependency the package relies on still exists, each with why we use it.

A pinned upgrade that removes one fails here, naming the reason, instead of failing later in the studio or on
a live call. litellm is read as source (importing it takes seconds); the others are imported.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

# (module, attribute path, why contractstudio uses it, where)
TEXTUAL_AND_OTHERS = [
    ("textual.keys", "_character_to_key", "the keymap turns a configured character into Textual's key name", "studio/keymap.py"),
    ("textual.document._document", "Document", "the editor's highlight guard calls the plain document's replace_range",
     "studio/widgets/editor_documents.py"),
    ("textual.document._document", "EditResult", "the editor's replace_range override returns it", "studio/widgets/editor_documents.py"),
    ("textual.document._document", "Location", "the editor's replace_range override takes it", "studio/widgets/editor_documents.py"),
    ("textual.document._syntax_aware_document", "SyntaxAwareDocument", "the highlight guard subclasses it",
     "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument", "the row-count cache subclasses it", "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument._width",
     "the row count is the line count when the editor does not wrap (0: no wrapping)", "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument._wrap_offsets",
     "an unwrapped text without tabs is laid out without measuring each line", "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument._line_index_to_offsets",
     "an unwrapped text without tabs is laid out without measuring each line", "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument._tab_width_cache",
     "an unwrapped text without tabs is laid out without measuring each line", "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument._tab_width",
     "an unwrapped text without tabs is laid out without measuring each line", "studio/widgets/editor_documents.py"),
    ("textual.document._wrapped_document", "WrappedDocument._offset_to_line_info",
     "finding markers map a screen row to its document line", "studio/widgets/editor.py"),
    ("textual.widgets._footer", "FooterKey", "the footer renders our key hints with Textual's own key widget",
     "studio/widgets/footer.py"),
    ("textual.widgets", "TextArea._set_document", "the editor swaps in the guarded syntax document", "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._on_key", "the editor's key handling wraps Textual's", "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._rewrap_and_refresh_virtual_size",
     "the editor's own _set_document ends as TextArea's does (its text set once, no whole-text tree)", "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._highlights", "the editor fills the highlights of the rows around the view",
     "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._get_builtin_highlight_query", "the editor parses the rows around the view with "
     "TextArea's own YAML highlight query", "studio/widgets/editor_highlight.py"),
    ("textual._tree_sitter", "get_language", "the editor parses the rows around the view with TextArea's own YAML grammar",
     "studio/widgets/editor_highlight.py"),
    ("textual.widgets", "TextArea._render_line", "the editor draws finding markers over each line", "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._build_highlight_map", "the editor highlights the rows around the view from its own parse",
     "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._watch_selection", "the editor repaints the rows a new selection leaves and reaches",
     "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._line_cache", "the editor keys its drawn rows as TextArea does, and forgets changed ones",
     "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._cursor_offset", "part of a drawn row's key (the cursor's row)", "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._has_cursor", "a jump centres the cursor's row as TextArea does (no cursor: no scroll)",
     "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._recompute_cursor_offset", "a jump measures the cursor's place as TextArea does",
     "studio/widgets/editor.py"),
    ("textual.document._history", "EditHistory._undo_stack",
     "a rename's or a quick fix's edits are joined into one step of undo (no public way)", "studio/widgets/editor.py"),
    ("textual._time", "get_time", "a dialog's drawing time is on the clock of a key's `time` (keys typed before are not its)",
     "studio/keys.py"),
    ("textual.widgets", "TextArea._cursor_visible", "part of a drawn row's key (the blink)", "studio/widgets/editor.py"),
    ("textual.widgets", "TextArea._matching_bracket_location",
     "part of a drawn row's key; its rows are repainted when it moves", "studio/widgets/editor.py"),
    ("textual.app", "App._handle_exception", "the studio shows a failing worker's error instead of exiting", "studio/app.py"),
    ("textual.dom", "DOMNode._merged_bindings", "the palette lists a screen's own and inherited keys", "studio/app.py"),
    ("textual.dom", "DOMNode._bindings", "the keymap changes a binding's priority (no public way)", "studio/keymap.py"),
    ("textual.binding", "BindingsMap.key_to_bindings", "the keymap changes a binding's priority (no public way)",
     "studio/keymap.py"),
    ("yaml._yaml", "CParser", "the live reader composes nodes with libyaml's C parser", "reading/builder.py"),
    ("re._parser", "parse", "tool_pattern regexes are checked for nested repeats before they run", "documents/patterns.py"),
    ("pygls.protocol", "LanguageServerProtocol._handle_notification",
     "the language server forgets each notification's future once done (pygls keeps them forever)", "lsp/server.py"),
    ("textual.widgets", "OptionList._clear_caches", "the findings panel measures its rows again when a scroll bar comes or goes",
     "studio/widgets/findings.py"),
    ("textual.widgets", "Select._options", "the studio's pickers check a value is offered before selecting it",
     "studio/screens/eval.py, call_setup.py, recorded_traces.py"),
    ("pygls.protocol", "LanguageServerProtocol._request_futures", "the same leak fix reads the futures' table", "lsp/server.py"),
]


@pytest.mark.parametrize(("module", "attribute", "why", "where"), TEXTUAL_AND_OTHERS,
                         ids=[f"{m}.{a}" for m, a, _, _ in TEXTUAL_AND_OTHERS])
def test_private_attribute_still_exists(module: str, attribute: str, why: str, where: str) -> None:
    found: object = importlib.import_module(module)
    for part in attribute.split("."):
        if not hasattr(found, part) and isinstance(found, type):
            # an instance attribute: the class (or a base) must still set it
            sources = [inspect.getsource(c) for c in found.__mro__ if c.__module__.startswith(module.split(".")[0])]
            assert any(f"self.{part}" in s for s in sources), f"{module}.{attribute} is gone: {why} ({where})"
            return
        assert hasattr(found, part), f"{module}.{attribute} is gone: {why} ({where})"
        found = getattr(found, part)


def _litellm_source(relative: str) -> str:
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    return (Path(spec.submodule_search_locations[0]) / relative).read_text()


def test_litellm_still_looks_up_its_success_logging_executor_on_utils() -> None:
    source = _litellm_source("utils.py")
    reason = ("runtime/success_logging.py replaces litellm.utils.executor so that success logging is not scheduled when nothing "
              "listens; litellm must still bind `executor` in litellm.utils and look it up there on each call")
    assert "import executor" in source or "\nexecutor" in source, reason
    assert 'getattr(sys.modules[__name__], "executor")' in source, reason


def test_litellm_still_queues_async_success_logging_on_its_global_logging_worker() -> None:
    reason = ("runtime/success_logging.py wraps GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue to drop the "
              "Logging.async_success_handler coroutines litellm queues after each awaited call when nothing listens")
    assert "GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue(\n            async_coroutine=logging_obj.async_success_handler(" in (
        _litellm_source("utils.py")), reason
    assert "\n    async def async_success_handler(" in _litellm_source("litellm_core_utils/litellm_logging.py"), reason


def test_litellm_still_makes_its_async_transport_with_a_static_method() -> None:
    source = _litellm_source("llms/custom_httpx/http_handler.py")
    assert "@staticmethod\n    def _create_async_transport(" in source, (
        "runtime/live.py sends eval's async calls through the transport litellm itself uses (aiohttp by default), "
        "wrapped in our deadline transport, by calling AsyncHTTPHandler._create_async_transport()")


def test_litellm_still_keeps_async_success_callbacks_and_hidden_params() -> None:
    assert "\n_async_success_callback" in _litellm_source("__init__.py"), (
        "runtime/success_logging.py reads litellm._async_success_callback to know whether success logging is listened to")
    assert "_hidden_params: dict" in _litellm_source("types/utils.py"), (
        "runtime/live.py reads a reply's _hidden_params['response_cost'] (litellm's own price of the call)")


def test_argparse_still_lists_subparsers_in_actions() -> None:
    parser = argparse.ArgumentParser()
    parser.add_subparsers().add_parser("check")
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert subparsers and "check" in subparsers[0].choices, "cli.py finds the commands through parser._actions"
