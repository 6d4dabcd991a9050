"""Rules of kind: tools documents (filled in by its family's work)."""
