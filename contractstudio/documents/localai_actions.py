"""LocalAI-RAG's actions as a catalog (`catalog: localai-rag`): what each needs, sets, and where it may jump.

Written from the behaviour of LocalAI-RAG's actions (code_query_engine/pipeline/actions)
and ADR-0002. A field goes under `requires_state` only when the action fails (or
silently does nothing useful) without it; fields it reads but tolerates empty are
left out, so PIP201 reports real ordering mistakes, not style; an action that goes on without
them (it records why and does nothing) says so in `skips`, and its requirements are soft. Both generations of
the format are here: the current one (prefix_router with `routes:`,
json_decision_router, ...) and the first one (handle_prefix, fetch_more_context,
...); no name is shared with different meanings.
"""

from __future__ import annotations

from contractstudio.documents.action_spec import ActionSpec

# State fields the runner fills from the request before the first step (DynamicPipelineRunner.run).
REQUEST_FIELDS = (
    "user_query", "session_id", "consultant", "request_id", "branch", "translate_chat",
    "user_id", "repository", "snapshot_id", "snapshot_id_b", "snapshot_set_id",
)

_SEARCH_SETS = (
    "retrieval_seed_nodes", "retrieval_hits", "retrieval_query", "retrieval_mode", "search_type", "rerank",
    "last_search_query", "last_search_type", "last_search_filters", "retrieval_filters",
    "retrieval_queries_asked", "retrieval_queries_asked_norm",
)

# Settings DynamicPipelineRunner fills in when a pipeline leaves them out ("safe defaults" for the budget
# contract, code_query_engine/dynamic_pipeline.py at ee61cd24), so the actions that read them never miss them.
_BUDGET_DEFAULTS: tuple[tuple[str, object], ...] = (
    ("settings.max_context_tokens", 5000), ("settings.max_history_tokens", 0), ("settings.budget_safety_margin_tokens", 128))

LOCALAI_ACTIONS: dict[str, ActionSpec] = {
    a.name: a
    for a in (
        ActionSpec("translate_in_if_needed", ensures_state=("user_question_neutral",),
                   why="Puts the user's question into the model's language (a no-op when it already is)."),
        ActionSpec("load_conversation_history", ensures_state=("history_qa_neutral", "history_dialog", "history_blocks"),
                   why="Loads the session's earlier turns for prompts that use history."),
        ActionSpec("call_model", requires_step=("prompt_key",),
                   ensures_state=("last_model_response", "banner_neutral", "banner_translated"),
                   # a part's source is a state field or one of the state's prompt helpers (history and context joined)
                   reads_from=("user_parts", "source"), derived_sources=("composed_context_for_prompt", "history_for_prompt"),
                   why="Renders prompts/<prompt_key>.txt with the step's user_parts and stores the reply."),
        ActionSpec("prefix_router", requires_state=("last_model_response",), ensures_state=("last_prefix",),
                   routing="prefix", route_state=("last_prefix", "last_model_response"), strict_router=True,
                   why="Matches the model's reply against each route's prefix (first match wins), records the route "
                   "in last_prefix and leaves the rest of the reply as the payload; no match goes to on_other."),
        ActionSpec("json_decision_router", requires_state=("last_model_response",), routing="decision", strict_router=True,
                   why="Reads the model's JSON reply; its decision (or route, or mode) value picks the route, "
                   "anything else goes to on_other."),
        ActionSpec("inbox_dispatcher", ensures_state=("inbox",),
                   why="Turns the reply's directives into messages for later steps."),
        ActionSpec("json_inbox_dispatcher", ensures_state=("inbox",), why="Alias of inbox_dispatcher."),
        ActionSpec("search_nodes", requires_state=("last_model_response",),
                   requires_step=("search_type", "top_k|settings.top_k"), ensures_state=_SEARCH_SETS,
                   why="Searches the index with the query parsed from the reply; it decides the retrieval mode "
                   "itself and seeds graph expansion."),
        ActionSpec("expand_dependency_tree", requires_state=("retrieval_seed_nodes",),
                   requires_step=("max_depth_from_settings", "max_nodes_from_settings", "edge_allowlist_from_settings"),
                   ensures_state=("graph_seed_nodes", "graph_expanded_nodes", "graph_nodes", "graph_edges", "graph_debug"),
                   skips="expands nothing and goes on (graph_debug.reason 'no_seeds', the graph fields empty)",
                   why="Expands the search's seed nodes along the dependency graph: search before expansion."),
        ActionSpec("fetch_node_texts", requires_any_state=(("retrieval_seed_nodes", "graph_expanded_nodes"),),
                   requires_step=("budget_tokens|budget_tokens_from_settings|max_chars|settings.max_context_tokens",),
                   defaults=_BUDGET_DEFAULTS,
                   ensures_state=("node_texts", "classification_labels_union", "acl_labels_union", "doc_level_max"),
                   skips="fetches nothing and goes on (graph_debug.reason 'no_nodes_for_fetch_node_texts', node_texts empty)",
                   why="Fetches the texts of the seed or expanded nodes within a token budget."),
        ActionSpec("manage_context_budget", requires_step=("on_ok", "on_over", "settings.max_context_tokens"),
                   defaults=_BUDGET_DEFAULTS,
                   ensures_state=("context_blocks",),
                   why="Adds the fetched texts to the context while they fit settings.max_context_tokens."),
        ActionSpec("loop_guard", ensures_state=("loop_counters",), bound=("max_turn_loops", 4, "allow", "deny"),
                   why="Counts passes through a loop; on_allow while under settings.max_turn_loops, else on_deny."),
        ActionSpec("repeat_query_guard", requires_step=("on_ok", "on_repeat"),
                   ensures_state=("sufficiency_search_mode_constraint",),
                   why="Stops a retrieval loop that would ask the same query again."),
        ActionSpec("set_variables", requires_step=("rules",), ensures_from=("rules", "set"),
                   why="Copies or transforms state fields; each rule's `set` is a field it sets."),
        ActionSpec("translate_out_if_needed", ensures_state=("answer_translated",),
                   why="Translates the neutral answer back to the user's language when needed."),
        ActionSpec("add_command_action", why="Appends UI commands to the answer."),
        ActionSpec("finalize", ensures_state=("final_answer",), why="Produces the final answer and stores the turn."),
        ActionSpec("parallel_roads_action", ensures_state=("parallel_roads",),
                   why="Prepares a retrieval that runs once per snapshot."),
        ActionSpec("fork_action", requires_state=("parallel_roads",), requires_step=("snapshots", "search_action"),
                   ensures_state=("snapshot_id",), branches=("search_action",),
                   why="Picks the next snapshot and jumps to its search_action step; on_done when every snapshot is done."),
        ActionSpec("merge_action", requires_state=("parallel_roads",), requires_step=("snapshots",),
                   ensures_state=("context_blocks",), returns_to="fork_action",
                   why="Collects one snapshot's texts and jumps back to the fork until every snapshot is done."),
        # The first generation of the format (ADR-0002, December 2025).
        ActionSpec("handle_prefix", requires_state=("last_model_response",), ensures_state=("query_type",),
                   routing="prefix", route_state=("query_type", "followup_query"),
                   why="First-generation router: flat <route>_prefix / on_<route> keys."),
        ActionSpec("fetch_more_context", ensures_state=("retrieval_seed_nodes", "context_blocks"),
                   why="First-generation search and fetch in one step."),
        ActionSpec("check_context_budget", ensures_state=("budget_debug",),
                   why="First-generation budget check: on_ok or on_over_limit."),
        ActionSpec("finalize_heuristic", ensures_state=("answer_en", "query_type"),
                   why="First-generation answer clean-up."),
        ActionSpec("persist_turn_and_finalize", why="First-generation end of a turn."),
    )
}
