"""Imports every rule family so their @analyzer registrations run."""

# Each family module registers its rule functions with check.analyzer.
from contractstudio.analysis import agent, contract, pipeline, secrets, tools  # noqa: F401
