"""The studio: a Textual app to edit, graph and debug contracts (the only package that imports textual)."""
