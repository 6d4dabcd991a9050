"""Rules of kind: contract documents (filled in by its family's work)."""
