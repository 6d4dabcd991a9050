"""Contracts written in Python, as SymbolicAI writes them, run on ContractStudio's one engine.

A SymbolicAI user swaps three import lines and keeps the class:

    from contractstudio.symbolic import Expression       # was: from symai import Expression
    from contractstudio.symbolic import contract         # was: from symai.strategy import contract
    from contractstudio.symbolic import LLMDataModel     # was: from symai.models import LLMDataModel

    with use_model("openai/gpt-4o-mini", trace="calls.jsonl"):
        result = MyContract()(input=MyInput(...))

The decorator builds the same compiled plan a YAML contract runs (runtime/engine.py): the user's
pydantic models are the types, `pre` / `act` / `post` / `forward` the hooks the engine calls.
Differences from SymbolicAI's released decorator are listed in docs/symbolicai.md.
"""

from __future__ import annotations

from contractstudio.symbolic.choice import ModelUse, current_use, use_model
from contractstudio.symbolic.classes import Expression, LLMDataModel
from contractstudio.symbolic.decorator import contract
from contractstudio.symbolic.plan import NoRemedy
from contractstudio.symbolic.settings import DEFAULT_RETRY_PARAMS, remedy_settings

__all__ = ["DEFAULT_RETRY_PARAMS", "Expression", "LLMDataModel", "ModelUse", "NoRemedy", "contract", "current_use",
           "remedy_settings", "use_model"]
