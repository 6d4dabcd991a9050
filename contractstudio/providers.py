"""Which provider a litellm model string goes to: the one answer for the key's usual variable (trust.py), the
structured-output profile (documents/provider_profiles.py) and the live model's client (runtime/live.py).

Pure: no litellm import (the analyzer asks it for models it never calls). A prefixed name is its prefix's provider
(`openai/...`, `hosted_vllm/...`, `azure/...`); a bare name is the provider of its well-known family, as litellm
sends it (`gpt-4o`, `o3-mini`, `ft:gpt-4o-mini:org::id`: openai; `claude-...`: anthropic).
"""

from __future__ import annotations

# Bare names of well-known families (no "provider/" prefix) and the provider litellm sends them to.
_FAMILIES = (("gpt-", "openai"), ("ft:gpt-", "openai"), ("chatgpt", "openai"), ("o1", "openai"), ("o3", "openai"),
             ("o4", "openai"), ("claude", "anthropic"), ("gemini", "gemini"), ("mistral", "mistral"), ("command", "cohere"))


def provider_of(model: str | None) -> str:
    """The provider of a litellm model string, lower-case ("openai", "anthropic", "hosted_vllm", ...); "" when unknown."""
    name = (model or "").strip().lower()
    if "/" in name:
        return name.split("/", 1)[0]
    return next((provider for prefix, provider in _FAMILIES if name.startswith(prefix)), "")
