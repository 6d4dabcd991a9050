"""Running contracted calls, tools and pipelines: the engine, models, traces and perf (never re-analyzes)."""
