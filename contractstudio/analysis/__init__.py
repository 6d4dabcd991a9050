"""The analyzer: pure functions from documents to diagnostics (never runs anything)."""
