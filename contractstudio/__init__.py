"""ContractStudio: write, analyze, visualize and debug contracts around LLM calls.

The public API (`load`, `toolify`, `ContractError`, `ContractViolation`, `InvalidInput`) is
imported lazily so that `import contractstudio` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = [
    "load", "load_all", "toolify", "ContractError", "ContractViolation", "InvalidInput", "InvalidOutput", "ConditionFailed",
    "ScriptedModel", "ReplayModel", "LiveModel",
    "CallOptions", "TransportRetry", "Trace", "__version__",
]

_LAZY = {
    "load": "contractstudio.runtime.api",
    "load_all": "contractstudio.runtime.api",
    "toolify": "contractstudio.runtime.toolify",
    "ContractError": "contractstudio.runtime.errors",
    "ContractViolation": "contractstudio.runtime.errors",
    "InvalidInput": "contractstudio.runtime.errors",
    "InvalidOutput": "contractstudio.runtime.errors",
    "ConditionFailed": "contractstudio.runtime.errors",
    "ScriptedModel": "contractstudio.runtime.models",
    "ReplayModel": "contractstudio.runtime.models",
    "LiveModel": "contractstudio.runtime.live",
    "CallOptions": "contractstudio.runtime.engine",
    "TransportRetry": "contractstudio.runtime.engine",
    "Trace": "contractstudio.runtime.trace",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contractstudio' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
