"""Budget estimates of an agent task: minimum and typical latency, calls and cost.

Prices come from litellm's bundled price table, read as a local JSON file found
through the import system WITHOUT importing litellm (that import costs seconds
and may reach for the network); nothing is ever fetched.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from contractstudio.documents.models import Backend

PRICE_FILE = "model_prices_and_context_window_backup.json"


@lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    """litellm's bundled model price map ({} when litellm is not installed or the file is unreadable)."""
    try:
        spec = importlib.util.find_spec("litellm")  # finds the package on disk; does not import it
    except (ImportError, ValueError):
        return {}
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, PRICE_FILE)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


@dataclass(frozen=True, slots=True)
class Price:
    """USD per token."""

    prompt: float
    completion: float


def price_of(model: str, table: dict[str, Any] | None = None) -> Price | None:
    """The per-token price of a litellm model string ('openai/gpt-4o-mini' or 'gpt-4o-mini'), if listed."""
    table = price_table() if table is None else table
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = table.get(name)
        if isinstance(entry, dict):
            p, c = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
            if isinstance(p, (int, float)) and isinstance(c, (int, float)):
                return Price(float(p), float(c))
    return None


@dataclass(frozen=True, slots=True)
class Estimate:
    """A lower bound and a typical value of one quantity (None when it cannot be estimated)."""

    minimum: float
    typical: float


def latency_ms(backend: Backend, calls: int) -> Estimate | None:
    """Sequential calls x the backend's minimum and typical latency per call."""
    per = backend.latency_ms_per_call
    if per is None:
        return None
    return Estimate(calls * per.min, calls * per.typical)


def cost_usd(backend: Backend, calls: int) -> Estimate | None:
    """Calls x cost per call. Minimum: the prompt tokens alone (a reply may be near-empty); typical: prompt + completion."""
    if backend.cost_per_call_usd is not None:
        return Estimate(calls * backend.cost_per_call_usd, calls * backend.cost_per_call_usd)
    tokens = backend.tokens_per_call
    price = price_of(backend.model)
    if tokens is None or price is None:
        return None
    minimum = tokens.prompt * price.prompt
    return Estimate(calls * minimum, calls * (minimum + tokens.completion * price.completion))
