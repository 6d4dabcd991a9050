"""Every private attribute of a dependency the package relies on still exists, each with why we use it.

A pinned upgrade that removes one fails here, naming the reason, instead of failing later in the studio or on
a live call. litellm is read as source (importing it takes seconds); the others are imported. Textual's are all used
by one module, studio/textual_internals.py, and pinned by its test (tests/studio/test_textual_internals.py).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

# (module, attribute path, why contractstudio uses it, where). Textual's are pinned where the one module that uses
# them is tested: tests/studio/test_textual_internals.py (studio/textual_internals.py).
OTHERS = [
    ("yaml._yaml", "CParser", "the live reader composes nodes with libyaml's C parser", "reading/builder.py"),
    ("re._parser", "parse", "tool_pattern regexes are checked for nested repeats before they run", "documents/patterns.py"),
    ("pygls.protocol", "LanguageServerProtocol._handle_notification",
     "the language server forgets each notification's future once done (pygls keeps them forever)", "lsp/server.py"),
    ("pygls.protocol", "LanguageServerProtocol._request_futures", "the same leak fix reads the futures' table", "lsp/server.py"),
]


@pytest.mark.parametrize(("module", "attribute", "why", "where"), OTHERS, ids=[f"{m}.{a}" for m, a, _, _ in OTHERS])
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


def test_litellm_still_maps_positional_arguments_through_its_caching_handler_s_module_function() -> None:
    reason = ("runtime/live.py replaces litellm.caching.caching_handler.convert_args_to_kwargs so that a call with no "
              "positional arguments is not mapped by inspect.signature after every call; litellm must still look the "
              "function up in that module, by that name, with (original_function, args)")
    source = _litellm_source("caching/caching_handler.py")
    assert "def convert_args_to_kwargs(\n    original_function: Callable,\n    args:" in source, reason
    assert source.count("convert_args_to_kwargs(") >= 2, reason


def test_pydantic_s_model_validate_is_still_its_validator_s_validate_python() -> None:
    # runtime/validation.py calls `__pydantic_validator__.validate_python(value)` where it called model_validate (a
    # Python frame per validation): the same as long as model_validate only passes its defaults on
    from pydantic import BaseModel

    source = inspect.getsource(BaseModel.model_validate)
    assert "return cls.__pydantic_validator__.validate_python(" in source
    assert "model_validator" not in source and "__pydantic_core_schema__" not in source


def test_litellm_still_lets_a_call_s_retry_policy_and_caching_decide_over_its_globals() -> None:
    reason = ("runtime/live_owned.py turns litellm's retries off per call with num_retries=0 and a retry policy of 0 for "
              "every error kind (its synchronous wrapper reads `num_retries or litellm.num_retries`, then lets a retry "
              "policy decide), its cache off with caching=False, and refuses litellm.model_fallbacks (read as `fallbacks or "
              "litellm.model_fallbacks`). If litellm reads these differently now, see what a call argument decides")
    utils, main = _litellm_source("utils.py"), _litellm_source("main.py")
    sync = ('num_retries = kwargs.get("num_retries", None) or litellm.num_retries or None\n'
            '                if kwargs.get("retry_policy", None):')
    assert utils.count(sync) == 2, reason
    assert "        num_retries = get_num_retries_from_retry_policy(" in utils, reason  # the awaited path's, when not None
    assert main.count("fallbacks = fallbacks or litellm.model_fallbacks") == 2, reason
    assert '(kwargs.get("caching", None) is None and litellm.cache is not None)' in utils, reason
    assert ('(kwargs.get("caching", None) is None and litellm.cache is not None) or kwargs.get("caching", False) is True'
            in _litellm_source("caching/caching_handler.py")), reason
    fields = _litellm_source("types/router.py")
    from contractstudio.runtime.live_owned import CALL_ARGUMENTS

    assert all(f"    {kind}: int | None = None" in fields for kind in CALL_ARGUMENTS["retry_policy"]), reason
