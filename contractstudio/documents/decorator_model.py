"""SymbolicAI's `@contract(...)` keywords as settings: one model for the decorator (runtime) and `check` (the reader).

`@contract(pre_remedy=..., post_remedy=..., accumulate_errors=..., verbose=..., remedy_retry_params={...})` means a
contract's `remedy:` block. The decorator validates its keywords with `DecoratorRemedy`; the static reader of `.py`
files writes the same keywords into the `remedy:` of the contract it reads, and the analyzer validates that contract
as a `PythonContract`, whose `remedy` is this model. So `check` and the decorator find the same things, at the same
severity: an unknown keyword or retry key is an error (the decorator refuses the class), with a did-you-mean over
the decorator's own names (the fields' aliases).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from contractstudio.documents.contract_model import Contract, Remedy, Retry


class DecoratorRetry(Retry):
    """`remedy_retry_params={...}`: the retry settings; keys not given keep seed 000's defaults."""

    UNKNOWN_KEYS: ClassVar[str] = "error"  # the decorator refuses the class: check says so at the same level
    SHOWN_AS: ClassVar[str] = "remedy_retry_params"  # how a finding names this mapping


class DecoratorRemedy(Remedy):
    """The keywords of `@contract(...)`; each field's alias is the decorator's name for it."""

    UNKNOWN_KEYS: ClassVar[str] = "error"
    SHOWN_AS: ClassVar[str] = "@contract"

    pre: bool = Field(False, alias="pre_remedy", description="LLM-correct an input that fails `pre`.")
    post: bool = Field(True, alias="post_remedy", description="LLM-correct an output that fails type checks or `post`.")
    accumulate_errors: bool = Field(False, description="Feed every earlier error of the loop to each retry, not only the last.")
    verbose: bool = Field(False, description="Print each call's prompts, schemas and errors on stdout, as SymbolicAI does.")
    retry: DecoratorRetry = Field(default_factory=DecoratorRetry, alias="remedy_retry_params", description="Retry bounds and waits.")


class PythonContract(Contract):
    """A contracted Python class, read by the static reader: a contract whose remedy settings are the decorator's."""

    remedy: DecoratorRemedy = Field(default_factory=DecoratorRemedy, description="The decorator's settings.")
