"""The action catalog of pipelines: built-in action contracts plus those a file declares.

This is the one place that says what each action requires and ensures; the
analyzer (PIP2xx), the runner's runtime assertions, `simulate` and
docs/actions.md all read it.
"""

from __future__ import annotations

from contractstudio.documents.action_spec import SETTINGS, ActionSpec
from contractstudio.documents.localai_actions import LOCALAI_ACTIONS
from contractstudio.documents.models import Pipeline

__all__ = ["BUILTIN_ACTIONS", "CALL_MODEL", "CATALOGS", "LOCALAI_ACTIONS", "PREFIX_ROUTER", "SETTINGS", "ActionSpec", "action_catalog"]

# prefix_router routes on the model's reply; this action is special-cased by the
# graph (its on_* keys are routes) and by the runner (it is built in).
PREFIX_ROUTER = "prefix_router"
CALL_MODEL = "call_model"


# The built-in actions of the LocalAI-RAG ADR (seed 002), as in FORMAT.md.
BUILTIN_ACTIONS: dict[str, ActionSpec] = {
    a.name: a
    for a in (
        ActionSpec(
            CALL_MODEL,
            requires_step=("prompt",),
            ensures_state=("last_model_response",),
            why="Sends a fixed prompt to the model; every later step that reads the model's text "
            "(a router, persist_turn) needs the reply in the state.",
        ),
        ActionSpec(
            PREFIX_ROUTER,
            requires_state=("last_model_response",),
            ensures_state=("retrieval_mode", "followup_query"),
            routing="prefix",
            route_state=("retrieval_mode", "followup_query"),
            why="Parses the router model's reply (first matching prefix wins); the matched route "
            "becomes retrieval_mode and the rest of the reply, trimmed, the followup_query.",
        ),
        ActionSpec(
            "search_nodes",
            requires_state=("retrieval_mode",),
            requires_any_state=(("followup_query", "retrieval_query"),),
            ensures_state=("context_blocks", "seed_nodes"),
            why="Searching needs to know how (the mode) and what (a query); it fills the context "
            "and the seed nodes that graph expansion starts from.",
        ),
        ActionSpec(
            "expand_dependency_tree",
            requires_state=("seed_nodes",),
            ensures_state=("seed_nodes",),
            why="Walks the dependency graph outward from the seed nodes and adds what it finds to them.",
        ),
        ActionSpec(
            "fetch_node_texts",
            requires_state=("seed_nodes",),
            ensures_state=("context_blocks",),
            why="Turns node ids into text blocks for the prompt; without seed nodes there is nothing to fetch.",
        ),
        ActionSpec(
            "persist_turn",
            requires_state=("last_model_response",),
            why="Stores the conversation turn; a turn without a model reply is not worth storing.",
        ),
    )
}


# The built-in catalogs a pipeline can name with `catalog:` (LocalAI-RAG's in documents/localai_actions.py).
CATALOGS: dict[str, dict[str, ActionSpec]] = {"contractstudio": BUILTIN_ACTIONS, "localai-rag": LOCALAI_ACTIONS}


def action_catalog(pipeline: Pipeline) -> dict[str, ActionSpec]:
    """The pipeline's built-in catalog plus its `actions:`; a declared action overrides a built-in of that name."""
    catalog = dict(CATALOGS.get(pipeline.catalog, BUILTIN_ACTIONS))
    for name, contract in pipeline.actions.items():
        catalog[name] = ActionSpec.declared(name, contract)
    return catalog
