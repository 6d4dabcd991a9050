"""ContractStudio: write, analyze, visualize and debug contracts around LLM calls.

The public API (`load`, `toolify`, `ContractError`, `ContractViolation`) is
imported lazily so that `import contractstudio` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["load", "toolify", "ContractError", "ContractViolation", "__version__"]

_LAZY = {
    "load": "contractstudio.runtime.api",
    "toolify": "contractstudio.runtime.tools",
    "ContractError": "contractstudio.runtime.errors",
    "ContractViolation": "contractstudio.runtime.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contractstudio' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
