"""Rules of kind: pipeline documents (filled in by its family's work)."""
