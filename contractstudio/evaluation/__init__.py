"""Evaluation: a contract (or a pipeline) run over a dataset, with results, a reply cache and a summary.

The layer above `runtime`: every row goes through the same engine as `run`
(`runtime.session.Session`), driven by one of three engines called one way
(`engines.py`): this process (`local.py`), worker processes (`workers.py`) or
Ray actors (`ray_engine.py`, the only module that imports `ray`, behind the
`contractstudio[ray]` extra). Results stream to a JSON Lines file as rows
finish; the summary is aggregated from those records, never from memory.
"""
