"""Rules of kind: agent documents (filled in by its family's work)."""
