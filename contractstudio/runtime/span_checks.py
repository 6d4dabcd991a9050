"""Would this contract have accepted what production produced? A foreign GenAI call checked against a contract.

The call's reply goes through the contract's own engine as a one-reply scripted model (a `Session`: the same
checks `run` makes, no second implementation); the answer is every failing condition of that first attempt (the
reply's type, each post condition that applied and failed, with its message), before any remedy would have asked
the model again. The input is the call's recorded input when ContractStudio made it, else the last user message
read as JSON (a mapping for an object input), else that message's text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from contractstudio.runtime.events import ConditionChecked, ModelRequest, ValidationFailure
from contractstudio.runtime.span_import import ForeignCall


@dataclass(slots=True)
class Verdict:
    """One call checked: accepted or not, and every failing condition (`post.id: message`, `type: error`)."""

    call: ForeignCall
    accepted: bool
    failures: list[str] = field(default_factory=list)


def input_of(call: ForeignCall) -> Any:
    recorded = call.span.attributes.get("contractstudio.input")
    if isinstance(recorded, str):
        try:
            return json.loads(recorded)
        except ValueError:
            pass
    user = next((m["content"] for m in reversed(call.messages) if m.get("role") == "user"), None)
    if user is None:
        return None
    try:
        return json.loads(user)
    except ValueError:
        return user


def check(contract: Any, call: ForeignCall) -> Verdict:
    """The contract's verdict on the call's reply (the first attempt only: what production produced)."""
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.runtime.models import ScriptedModel

    if call.reply is None:
        return Verdict(call, False, ["the span records no reply (export with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_"
                                     "CONTENT=true, or the instrumentation's own content capture)"])
    session = contract.session(input_of(call), ScriptedModel([call.reply], name=call.model or "production"),
                               options=CallOptions(wait=False))
    failures: list[str] = []
    requests = 0
    while (event := session.step()) is not None:
        if isinstance(event, ModelRequest) and not event.transport_retry:
            requests += 1
            if requests > 1:
                break  # a remedy would ask again: production's reply has been judged
        elif isinstance(event, ValidationFailure) and event.where in ("type", "input"):
            failures.extend(f"{event.where}: {error}" for error in event.errors)
        elif isinstance(event, ConditionChecked) and event.failed:
            failures.append(f"{event.name}: {event.message or event.expression}")
    if requests == 0 and not failures:  # refused before the model was asked (the input, a pre condition)
        result = session.result
        failures.extend(result.errors if result is not None else ["the call never asked the model"])
    return Verdict(call, not failures, failures)
