"""The decorator's keyword arguments as the format's `remedy:` settings, checked by the analyzer itself.

`@contract(pre_remedy=..., post_remedy=..., accumulate_errors=..., remedy_retry_params={...})` is the same
thing as a YAML contract's `remedy: {pre, post, accumulate_errors, retry: {...}}`; `remedy_settings` is the
one mapping between them (the static reader of `.py` files maps a decorator's keywords with it too), and a
bad value is reported by the analyzer's own shape validator, with the message a YAML file would get.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from contractstudio.documents.contract_model import Remedy
from contractstudio.runtime.errors import ContractError

# Seed 000's documented defaults (SymbolicAI's released code uses others: docs/symbolicai.md).
DEFAULT_RETRY_PARAMS: dict[str, Any] = {"tries": 5, "delay": 0.5, "max_delay": 15, "jitter": 0.1, "backoff": 2, "graceful": False}


def remedy_settings(pre_remedy: Any = False, post_remedy: Any = True, accumulate_errors: Any = False,
                    remedy_retry_params: Any = None) -> dict[str, Any]:
    """The `remedy:` mapping a decorator's keywords mean; retry keys not given keep seed 000's defaults."""
    retry: Any = dict(DEFAULT_RETRY_PARAMS)
    if isinstance(remedy_retry_params, dict):
        retry.update(remedy_retry_params)
    elif remedy_retry_params is not None:
        retry = remedy_retry_params  # not a mapping: the analyzer says so
    return {"pre": pre_remedy, "post": post_remedy, "accumulate_errors": accumulate_errors, "retry": retry}


def checked_remedy(settings: dict[str, Any], owner: str, file: str, line: int) -> Remedy:
    """The settings as a Remedy, or the analyzer's findings about them raised as a ContractError at `file:line`."""
    from contractstudio.analysis.check import check_text

    try:
        block = json.dumps(settings)  # JSON is YAML: the analyzer reads exactly these values
    except (TypeError, ValueError):
        raise ContractError(f"{owner}: the remedy settings must be plain values (numbers, booleans), got {settings!r}") from None
    text = f"kind: contract\nname: python\nprompt: p\ninput: str\noutput: str\nremedy: {block}\n"
    report = check_text(text, "<decorator>")
    found = [replace(d, file=file, line=line, column=1, end_line=line, end_column=1)
             for d in report.diagnostics if d.line == 6 and d.code.startswith("SCH")]
    if found:
        raise ContractError(f"{owner}: the decorator's remedy settings are not valid", found, file)
    return Remedy.model_validate(settings)


def refuse_unknown_parameters(unknown: dict[str, Any], file: str, line: int) -> None:
    """A keyword @contract does not take, raised as the static reader reports it (SCH102, with a 'did you mean')."""
    if not unknown:
        return
    import contractstudio.analysis.shape  # noqa: F401 - declares SCH102 in the rule table
    from contractstudio.findings.diagnostics import Span, did_you_mean, make
    from contractstudio.reading.dialects.symbolicai import DECORATOR_KEYS

    where = Span(line, 1, line, 1)
    found = [make("SCH102", f"unknown parameter '{name}' of @contract", file, where, severity="error",
                  hint=did_you_mean(name, DECORATOR_KEYS) or f"parameters: {', '.join(DECORATOR_KEYS)}") for name in unknown]
    raise ContractError("@contract: unknown parameters", found, file)
