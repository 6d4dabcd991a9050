"""What the engine owns in every live call, whatever litellm's process-wide settings say.

The engine decides transport retries (its fault policy), which model a request goes to (a call's list of models),
and counts, traces and budgets every request; so no request may be retried, sent to another model, or answered
from a cache behind its back. The live model passes `CALL_ARGUMENTS` on every request, which litellm lets decide
over its globals: `num_retries` 0 (litellm's awaited path), a retry policy of none for every error kind (its
synchronous wrapper reads `kwargs.get("num_retries") or litellm.num_retries`, where a per-call 0 loses to a global a
user set, but a retry policy wins), the OpenAI client's `max_retries` 0, and no reply read from litellm's cache.
litellm reads `fallbacks or litellm.model_fallbacks`, which no argument overrides: with that global set, a live call
is refused before anything is sent (`foreign_fallbacks`).

What stays the user's: logging callbacks (they watch calls, they send none of ours), `drop_params` and
`modify_params` (what a provider is sent, never how many times), `litellm.api_base` and headers for a model
without its own `api_base` (where litellm's own client sends, as the provider's variables do), `max_budget`.
"""

from __future__ import annotations

from typing import Any

# litellm's RetryPolicy fields: retries per error kind; an error of a kind not named gets none either.
_NO_RETRY_POLICY = {kind: 0 for kind in ("BadRequestErrorRetries", "AuthenticationErrorRetries", "TimeoutErrorRetries",
                                         "RateLimitErrorRetries", "ContentPolicyViolationErrorRetries",
                                         "InternalServerErrorRetries")}
# Set on every request: litellm's retries (and the OpenAI client's) off, no reply read from litellm's cache.
CALL_ARGUMENTS: dict[str, Any] = {"num_retries": 0, "max_retries": 0, "retry_policy": _NO_RETRY_POLICY, "caching": False}
# Per-call arguments of litellm that would do the engine's work behind its back; never taken from a model's params.
ENGINE_ARGUMENTS = {*CALL_ARGUMENTS, "retry_strategy", "fallbacks", "context_window_fallback_dict", "cache"}


def foreign_fallbacks(litellm: Any) -> str | None:
    """Why no request can be sent: litellm's process-wide fallback list would send it to other models, or None."""
    if not litellm.model_fallbacks:
        return None
    return ("litellm.model_fallbacks is set in this process: litellm would send a failed request to other models behind "
            "the engine (no call argument turns that off); unset it (litellm.model_fallbacks = None) and give the call a "
            "list of models instead; nothing was sent")
