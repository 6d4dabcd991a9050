"""The analyzer: pure functions from documents to diagnostics (never runs anything)."""

from contractstudio.analysis import registry as _registry  # noqa: F401  (registers every rule code)
