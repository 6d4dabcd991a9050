"""Imports every rule family so their @analyzer registrations run."""

# Each family module registers its rule functions with check.analyzer.
from contractstudio.analysis import contract, agent, pipeline, tools  # noqa: F401
