"""The exact messages sent to the model: the task, the input, the schema, and in a remedy the rejected reply and why.

A remedy repairs: it is the original request plus the model's previous reply
(as the assistant turn) plus the errors, numbered oldest first when errors
accumulate. Nothing carries over from one call to the next.
"""

from __future__ import annotations

from typing import Any

from contractstudio.runtime.json_text import dumps
from contractstudio.safe_text import shorten

# A rejected reply echoed back in a remedy keeps this many characters (about 8,000 tokens): enough for any
# real answer, while a runaway reply of megabytes cannot overflow the model's context window.
REMEDY_REPLY_LIMIT = 32_000

REPLY_RULE = "Reply with one JSON object that matches the schema, and nothing else: no prose, no comments."


def _json_block(value: Any) -> str:
    return "```json\n" + dumps(value, indent=2) + "\n```"  # the stdlib's text, made faster (json_text.py)


def system_message(prompt: str, schema_name: str, schema_text: str) -> dict[str, str]:
    """The fixed task prompt and the output schema with descriptions and constraints."""
    content = f"{prompt.strip()}\n\n## Output schema ({schema_name})\n{schema_text}\n\n{REPLY_RULE}"
    return {"role": "system", "content": content}


def input_message(type_name: str, value: Any) -> dict[str, str]:
    """The per-call data as JSON."""
    return {"role": "user", "content": f"## Input ({type_name})\n{_json_block(value)}"}


def generate_messages(system: dict[str, str], type_name: str, value: Any) -> list[dict[str, str]]:
    """The first request of a call."""
    return [system, input_message(type_name, value)]


def error_list(errors: list[str]) -> str:
    return "\n".join(f"{i}. {e}" for i, e in enumerate(errors, 1))


def clip(text: str, limit: int) -> str:
    """The text, or its first `limit` characters and a marker that says how much was cut."""
    if len(text) <= limit:
        return text
    return shorten(text, limit, marker=f"\n[... truncated by contractstudio: the reply has {len(text):,} characters; "
                                       f"only the first {limit:,} are shown]")


def rejected_heading(accumulating: bool) -> str:
    """The heading over the errors: it says what the list holds, which the remedy setting decides (not how many there are)."""
    return "## Why it was rejected (every error so far, oldest first)" if accumulating else "## Why it was rejected"


def repair_messages(base: list[dict[str, str]], previous_reply: str, errors: list[str], what: str,
                    accumulating: bool) -> list[dict[str, str]]:
    """A remedy request: the original messages, the rejected reply, the errors, and the ask for a corrected object."""
    heading = rejected_heading(accumulating)
    ask = (f"Your previous reply was rejected as {what}.\n\n{heading}\n{error_list(errors)}\n\n"
           f"Return the corrected JSON object only, fixing every error above while keeping what was right.")
    return [*base, {"role": "assistant", "content": clip(previous_reply, REMEDY_REPLY_LIMIT)}, {"role": "user", "content": ask}]


def pre_remedy_messages(prompt: str, schema_name: str, schema_text: str, value: Any, errors: list[str],
                        accumulating: bool) -> list[dict[str, str]]:
    """A request to correct an input that fails `pre`: the task, the input schema, the input and why it fails."""
    system = {
        "role": "system",
        "content": (f"{prompt.strip()}\n\nBefore this task can run, its input must satisfy the preconditions below.\n\n"
                    f"## Input schema ({schema_name})\n{schema_text}\n\n{REPLY_RULE}"),
    }
    heading = rejected_heading(accumulating)
    user = {
        "role": "user",
        "content": (f"## Input ({schema_name})\n{_json_block(value)}\n\n{heading}\n{error_list(errors)}\n\n"
                    "Return a corrected input as one JSON object that satisfies every precondition."),
    }
    return [system, user]
