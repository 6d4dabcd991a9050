"""How the debugger draws a call's events: a one-line timeline entry, and a full view with diffs.

Events are the runtime's typed `Event` objects (live, scripted or read back from a trace file, which
reads each line as its class), so recorded traces draw the same way. What is shown is read from the
event's data redacted first; the class decides how it is drawn.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

from contractstudio.runtime import events as ev
from contractstudio.safe_text import redact

_BULKY = ("messages", "text", "params", "value", "output")
ICONS: dict[type[ev.Event], str] = {
    ev.StageStart: "▸", ev.StageEnd: "◂", ev.ConditionChecked: "?", ev.ModelRequest: "→", ev.ModelReply: "←",
    ev.ValidationFailure: "✗", ev.RetryWait: "…", ev.TransportFailure: "⚡", ev.CallResult: "■", ev.ReplyParsed: "{}",
    ev.EarlyStop: "✂",
}


def event_line(event: Any, breakpoints: set[str]) -> Text:
    """One timeline row: seq, stage, type, and the detail that matters most (redacted before the row is cut)."""
    d = {k: v for k, v in event.data.items() if k not in _BULKY}  # a row never shows messages or reply text
    d = redact(d)
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(f"{event.seq:>3} ", style="dim")
    if isinstance(event, ev.StageStart):
        mark = "● " if event.stage in breakpoints else "  "
        t.append(mark, style="bold red")
        attempt = d.get("attempt")
        t.append(f"{event.stage}" + (f" #{attempt}" if attempt else ""), style="bold")
        return t
    t.append("    ")
    t.append(ICONS.get(type(event), "·") + " ", style="dim")
    match event:
        case ev.ConditionChecked():
            ok = d.get("passed")
            applies = d.get("applies", True)
            t.append("skip " if not applies else ("pass " if ok else "FAIL "),
                     style="dim" if not applies else ("green" if ok else "bold red"))
            if d.get("id"):  # the condition's name says which one failed before its expression does
                t.append(f"{d['id']} ", style="bold")
            t.append(str(d.get("expression", "")), style="dim" if d.get("id") else "")
        case ev.ModelRequest():
            t.append(f"request #{d.get('attempt', 0)} {d.get('purpose', '')}", style="cyan")
            if d.get("structured_output"):
                t.append(f" · {d['structured_output']}", style="dim")
        case ev.ModelReply():
            t.append(f"reply #{d.get('attempt', 0)}" + (" (edited)" if d.get("edited") else ""), style="cyan")
            if event.chunk_s:
                t.append(f" · streamed, first token {event.chunk_s[0] * 1000:.0f} ms", style="dim")
        case ev.EarlyStop():
            t.append(f"cut at character {d.get('position', 0)}", style="bold yellow")
            t.append(f" · {d.get('clause', '')}", style="dim")
        case ev.ValidationFailure():
            t.append(f"{d.get('where', '')} errors: {len(d.get('errors') or [])}", style="bold red")
        case ev.StageEnd():
            t.append("ok" if d.get("ok") else "failed", style="green" if d.get("ok") else "red")
        case ev.RetryWait():
            t.append(f"wait {float(d.get('seconds', 0)):.2f}s" + ("" if d.get("waited") else " (skipped)"), style="yellow")
        case ev.TransportFailure():
            t.append(f"{d.get('exception', '')} {d.get('status') or ''}", style="bold yellow")
        case ev.StructureFallback():
            t.append(f"fell back {d.get('from_mode', '')} → {d.get('to_mode', '')}"
                     + (f" ({d['to_shape']} shape)" if d.get("to_shape") else ""), style="bold yellow")
        case ev.CallResult():
            t.append("success" if d.get("successful") else "failed", style="bold green" if d.get("successful") else "bold red")
        case _:
            t.append(event.type)
    return t


def _messages(messages: list[dict[str, Any]]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for m in messages:
        out.append(Rule(Text(str(m.get("role", "?")), style="bold"), align="left", style="dim"))
        out.append(Text(str(m.get("content", ""))))
    return out


def _json(value: Any) -> RenderableType:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return Syntax(text, "json", word_wrap=True, background_color="default")


def _diff(old: str, new: str, old_name: str, new_name: str) -> RenderableType:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="", n=1))
    if not lines:
        return Text("(no difference)", style="dim")
    t = Text()
    for line in lines:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "dim"
        t.append(line + "\n", style=style)
    return t


def _structure(d: dict[str, Any], live: tuple[str, Any] | None = None) -> list[RenderableType]:
    """The structure mode a request asked in and the exact `response_format` it sent; for a request that asked for
    none (a scripted run), what a live call to `live`'s model would have sent (its structure, runtime/structured.py)."""
    sent = (d.get("params") or {}).get("response_format")
    mode = d.get("structured_output")
    if mode is None and sent is None and live is not None:
        model, structure = live
        out: list[RenderableType] = [Rule(f"structured output a live call to {model} would send: {structure.mode}"
                                          + (" · its response_format" if structure.response_format is not None else
                                             " · no response_format") + " (this run sent none)",
                                          align="left", style="magenta")]
        if structure.note:
            out.append(Text(f"request shape: {redact(structure.note)}", style="magenta"))
        if structure.response_format is not None:
            out.append(_json(redact(structure.response_format)))
        return out
    if mode is None and sent is None:
        return []
    out = [Rule(f"structured output: {mode or 'response_format written in the contract'}"
                                      + (" · the exact response_format sent" if sent is not None else " · none sent"),
                                      align="left", style="magenta")]
    shape = d.get("structure_shape")
    if shape:  # at an OpenAI-compatible server: the shape the schema was sent in, and why that one
        out.append(Text(f"request shape: {shape}", style="magenta"))
    if sent is not None:
        out.append(_json(sent))
    return out


def _flatten(messages: list[dict[str, Any]]) -> str:
    return "\n".join(f"[{m.get('role')}]\n{m.get('content', '')}" for m in messages)


def previous(events: list[Any], event: Any) -> Any | None:
    """The last event of the same class before this one, in its stage (the previous attempt)."""
    earlier = [e for e in events if type(e) is type(event) and e.seq < event.seq and e.stage == event.stage]
    return earlier[-1] if earlier else None


def event_view(event: Any, events: list[Any], live: tuple[str, Any] | None = None) -> RenderableType:
    """Everything about one event; requests and replies are diffed against the previous attempt (all redacted).
    `live`: for a request that asked for no structure, the model and structure a live call would have asked in."""
    d = redact(event.data)
    title = Text(f"#{event.seq}  {event.stage} / {event.type}", style="bold")
    title.append(f"   t = {event.t:.4f}s", style="dim")
    parts: list[RenderableType] = [title]
    if isinstance(event, ev.ModelRequest):
        parts.append(Text(f"attempt {d.get('attempt')} · purpose {d.get('purpose')} · model {d.get('model')}", style="cyan"))
        messages = list(d.get("messages") or [])
        before = previous(events, event)
        if before is not None:  # first: what this attempt adds (the rejected output and the errors)
            parts.append(Rule(f"diff of the messages vs request #{before.get('attempt')}", style="magenta"))
            parts.append(_diff(_flatten(redact(before.get("messages") or [])), _flatten(messages),
                               f"request #{before.get('attempt')}", f"request #{d.get('attempt')}"))
            parts.append(Rule("the exact messages sent", style="magenta"))
        parts += _messages(messages)
        parts += _structure(d, live)
    elif isinstance(event, ev.ModelReply):
        usage = (f"tokens {d.get('prompt_tokens', 0)} + {d.get('completion_tokens', 0)} · ${float(d.get('cost_usd') or 0):.6f}"
                 f" · {float(d.get('latency_s') or 0) * 1000:.1f} ms")
        if event.chunk_s:
            usage += f" · streamed in {len(event.chunk_s)} chunks, the first after {event.chunk_s[0] * 1000:.1f} ms"
        parts.append(Text(usage, style="cyan"))
        parts.append(Rule("raw reply", align="left", style="dim"))
        parts.append(Text(str(d.get("text", ""))))
        parsed = next((e for e in events
                       if isinstance(e, ev.ReplyParsed) and e.seq > event.seq and e.get("attempt") == d.get("attempt")), None)
        if parsed is not None:
            parts.append(Rule("parsed JSON", align="left", style="dim"))
            parts.append(_json(redact(parsed.get("output"))))
        before = previous(events, event)
        if before is not None:
            parts.append(Rule(f"diff of the output vs reply #{before.get('attempt')}", style="magenta"))
            parts.append(_diff(_pretty(redact(before.get("text", ""))), _pretty(d.get("text", "")),
                               f"reply #{before.get('attempt')}", f"reply #{d.get('attempt')}"))
    elif isinstance(event, ev.EarlyStop):
        parts += _early_stop(d, events, event)
    elif isinstance(event, ev.ValidationFailure):
        parts.append(Text(f"where: {d.get('where')} · attempt {d.get('attempt')}", style="red"))
        for i, err in enumerate(d.get("errors") or [], 1):
            parts.append(Text(f"{i}. {err}", style="red"))
        parts.append(Text("\nE edits these texts before the remedy sends them to the model.", style="dim"))
    elif isinstance(event, ev.ConditionChecked):
        ok = d.get("passed")
        if d.get("id"):
            parts.append(Text(f"condition {d['id']}", style="bold"))
        parts.append(Text(str(d.get("expression", "")), style="bold"))
        parts.append(Text("passed" if ok else "failed", style="green" if ok else "red"))
        if d.get("message"):
            parts.append(Text(str(d.get("message"))))
    else:
        parts.append(_json(dict(d)))
    return Group(*parts)


def _pretty(text: str) -> str:
    """A reply as indented JSON when it is JSON, so that a diff shows fields, not one long line."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(text)


def _early_stop(d: dict[str, Any], events: list[Any], event: Any) -> list[RenderableType]:
    """Where a streamed reply was cut and why: the clause, the error the remedy sends, the reply up to the cut."""
    parts: list[RenderableType] = [
        Text(f"the reply was cut while the model was still writing: {d.get('clause', '')}", style="bold yellow"),
        Text(str(d.get("message", "")), style="red"),
        Text(f"at character {d.get('position', 0)} of {d.get('chars', 0)} received · {d.get('tokens', 0)} tokens · "
             f"{float(d.get('seconds') or 0) * 1000:.1f} ms after the request", style="cyan")]
    if d.get("saved_tokens") is not None:
        saved = f"the rest of the reply, not waited for: {d['saved_tokens']} tokens"
        if d.get("saved_s") is not None:
            saved += f", {float(d['saved_s']) * 1000:.1f} ms"
        parts.append(Text(saved, style="green"))
    reply = next((e for e in reversed(events) if isinstance(e, ev.ModelReply) and e.seq < event.seq), None)
    if reply is not None:
        text = str(redact(reply.text))
        at = min(max(int(d.get("position") or 0), 0), len(text))
        shown = Text(text[:at])
        shown.append(text[at:], style="bold reverse red")  # from the character that decided it
        shown.append(" ✂", style="bold yellow")
        parts += [Rule("the reply up to the cut", align="left", style="dim"), shown]
    return parts


def growing_view(text: str, first_token_s: float | None, chunks: int) -> RenderableType:
    """A reply as it streams in: its text so far, the chunks so far and the time to its first token."""
    head = Text("reply streaming in… ", style="bold cyan")
    head.append(f"{chunks} chunks, {len(text)} characters", style="cyan")
    if first_token_s is not None:
        head.append(f" · first token after {first_token_s * 1000:.1f} ms", style="cyan")
    return Group(head, Rule(style="dim"), Text(str(redact(text))))