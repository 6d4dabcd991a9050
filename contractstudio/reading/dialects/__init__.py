"""Dialects: files of other tools' formats read into the native document shapes (LocalAI-RAG, AgentAnvil, SymbolicAI).

A dialect is a reader, not a second analyzer: each document of another format is replaced by its native reading
(`kind: pipeline` with `catalog: localai-rag`, `kind: agent`, a `.py` class as `kind: contract`) built from the
user's own nodes, so every rule runs unchanged and every position is in the user's file. One module per dialect,
registered with reading/dialect_registry.py; translate.py applies them to a file.
"""
