"""The decorator's keyword arguments as the format's `remedy:` settings, validated by the one settings model.

`@contract(pre_remedy=..., post_remedy=..., accumulate_errors=..., verbose=..., remedy_retry_params={...})` is the
same thing as a YAML contract's `remedy: {pre, post, accumulate_errors, retry: {...}}`. `DecoratorRemedy`
(documents/decorator_model.py) is the model of these keywords, each field's alias the decorator's name; the static
reader of `.py` files writes the same keywords into the contract `check` validates with that model, and the
decorator validates them here the same way (the analyzer's shape validator over the values given), so a setting
`check` calls an error is exactly one the decorator refuses, with the same message.
"""

from __future__ import annotations

from typing import Any

from contractstudio.documents.decorator_model import DecoratorRemedy, DecoratorRetry
from contractstudio.runtime.errors import ContractError

# Seed 000's documented defaults (SymbolicAI's released code uses others: docs/symbolicai.md).
DEFAULT_RETRY_PARAMS: dict[str, Any] = {name: field.default for name, field in DecoratorRetry.model_fields.items()}
_FIELD_OF = {field.alias or name: name for name, field in DecoratorRemedy.model_fields.items()}


def remedy_settings(pre_remedy: Any = False, post_remedy: Any = True, accumulate_errors: Any = False,
                    remedy_retry_params: Any = None, **keywords: Any) -> dict[str, Any]:
    """The `remedy:` mapping a decorator's keywords mean (an unknown keyword stays, for the validator to name)."""
    given = {"pre_remedy": pre_remedy, "post_remedy": post_remedy, "accumulate_errors": accumulate_errors, **keywords}
    if remedy_retry_params is not None:
        given["remedy_retry_params"] = remedy_retry_params  # keys not given keep the model's (seed 000's) defaults
    return {_FIELD_OF.get(key, key): value for key, value in given.items()}


def checked_remedy(settings: dict[str, Any], owner: str, file: str, line: int) -> DecoratorRemedy:
    """The settings as the decorator's Remedy, or the analyzer's findings about them raised as a ContractError at `file:line`."""
    from contractstudio.analysis.shape import validate
    from contractstudio.reading.dialects.synth import placed
    from contractstudio.reading.nodes import SourceDocument

    data = {"kind": "contract", "name": owner, "prompt": "p", "input": "any", "output": "any", "remedy": settings}
    doc = SourceDocument(0, placed(data, line), data, line, dialect="symbolicai")
    model, found = validate(doc, file)
    if found or model is None:
        raise ContractError(f"{owner}: the decorator's settings are not valid", found, file)
    remedy = getattr(model, "remedy", None)
    assert isinstance(remedy, DecoratorRemedy)
    return remedy
