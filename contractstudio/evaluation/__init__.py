"""Evaluation: a contract (or a pipeline) run over a dataset, with results, a reply cache and a summary.

The layer above `runtime`: every row goes through the same engine as `run`
(`runtime.session.Session`), driven by a local thread pool (`local.py`) or by
Ray tasks (`ray_engine.py`, the only module that imports `ray`, behind the
`contractstudio[ray]` extra). Results stream to a JSON Lines file as rows
finish; the summary is aggregated from those records, never from memory.
"""
