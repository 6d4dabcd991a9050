"""A small server on 127.0.0.1 that speaks the Anthropic Messages API shape, for tests: scripted replies, recorded requests.

    with AnthropicServer(['{"answer": "x"}']) as server:
        litellm.completion(model="anthropic/claude-...", api_base=server.base_url, api_key="sk-ant-test", ...)
        server.requests  # every request received at /v1/messages: path, headers, JSON body

The same server as tests/openai_server.py (scripted replies, statuses, delays), answering as Anthropic does: when
the request forces a tool (how litellm sends a JSON Schema to older Claude models), the scripted JSON comes back as
that tool's `tool_use` input, as a provider's decoder would produce it; otherwise (a plain request, or native
structured outputs' `output_format`) as a text block.
"""

from __future__ import annotations

import json
from typing import Any

from openai_server import OpenAIServer, Reply


def _forced_tool(body: dict[str, Any] | None) -> str | None:
    choice = (body or {}).get("tool_choice") or {}
    if isinstance(choice, dict) and choice.get("type") == "tool":
        return str(choice.get("name"))
    tools = (body or {}).get("tools") or []
    return str(tools[0].get("name")) if len(tools) == 1 and isinstance(tools[0], dict) else None


class AnthropicServer(OpenAIServer):
    """Answers POST /v1/messages in the Messages API shape (a text block, or the forced tool's `tool_use`)."""

    @staticmethod
    def answer(reply: Reply, body: dict[str, Any] | None) -> bytes:
        tool = _forced_tool(body)
        content: list[dict[str, Any]]
        if tool is not None:
            content = [{"type": "tool_use", "id": "toolu_test", "name": tool, "input": json.loads(reply.content or "{}")}]
        else:
            content = [{"type": "text", "text": reply.content or ""}]
        return json.dumps({
            "id": "msg_test", "type": "message", "role": "assistant", "model": (body or {}).get("model", "claude-test"),
            "content": content, "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens},
        }).encode()

    @staticmethod
    def error(reply: Reply) -> bytes:
        return json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                      "message": reply.content or f"scripted status {reply.status}"}}).encode()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
