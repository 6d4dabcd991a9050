"""What `@contract(verbose=True)` prints on stdout, as SymbolicAI 2.2.0 prints it: titled text panels.

SymbolicAI prints `\\n--- <title> ---\\n<content>\\n` for the prompt and the input and output schema digests when it asks
for the output, then, for each failed attempt, the errors (`Validation Errors (last error)`, or `(accumulated errors)`)
and the remedy it sends (`New Context`). The panels here are read off the engine's events of the call (the same events
the trace, the debugger and the `contractstudio.symbolic` logger get), redacted and escaped for a terminal.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from contractstudio.runtime.events import ModelRequest, ValidationFailure
from contractstudio.safe_text import printable, redact_text
from contractstudio.symbolic import describe
from contractstudio.symbolic.failure import semantic


def panel(title: str, content: str) -> str:
    """One panel, as SymbolicAI's `display_panel` prints it."""
    return f"\n--- {title} ---\n{printable(redact_text(content), lines=True)}\n"


def digest(annotation: Any) -> str:
    """A type's schema digest (`[[Schema]]` ...); a non-model type is described as the `value` object it is asked as."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return describe.simplified_schema(annotation)
    from contractstudio.symbolic.plan import value_model

    return describe.simplified_schema(value_model(annotation))


def call_panels(events: list[Any], prompt: str, given: Any, asked: type[BaseModel], accumulate: bool) -> str:
    """Every panel of one call's events so far: `given` is the input's type (act's output type with an act)."""
    out: list[str] = []
    errors: list[str] = []
    for event in events:
        if isinstance(event, ModelRequest) and not event.transport_retry:
            if event.purpose.startswith("remedy"):
                asked_text = event.messages[-1].get("content", "") if event.messages else ""
                out.append(panel("New Context", str(asked_text)))
            else:
                out.extend((panel("Prompt", prompt), panel("Input data model", digest(given)),
                            panel("Output data model", digest(asked))))
        elif isinstance(event, ValidationFailure) and event.where in ("type", "pre", "post"):
            last = [semantic(e) if event.where in ("pre", "post") else e for e in event.errors]
            errors.extend(last)
            title = f"Validation Errors ({'accumulated errors' if accumulate else 'last error'})"
            out.append(panel(title, "\n".join(errors if accumulate else last)))
    return "".join(out)
