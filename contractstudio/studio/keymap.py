"""The user's keymap (binding id -> key or keys), checked before it is applied: a remap works, or is refused with a reason.

Textual applies a keymap silently: an unknown id is ignored, a key another binding uses takes
that binding's key away, and a key the focused editor binds itself (ctrl+w deletes a word) wins
over the remap. Here each entry is checked against every binding of the studio: a remap is
accepted only when it leaves every action a key and can be pressed where its action lives; a
remap of an action that is active in the editor is given priority over the editor's own keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode
from textual.keys import Keys, key_to_character

from contractstudio.findings.diagnostics import did_you_mean
from contractstudio.studio.textual_internals import key_name, own_bindings

MODIFIERS = frozenset({"ctrl", "alt", "shift", "meta", "super", "hyper"})
_NAMED = frozenset(k.value.rpartition("+")[2] for k in Keys if not k.value.startswith("<"))
_FUNCTION_KEYS = frozenset(f"f{i}" for i in range(1, 25))
# Keys a list, a tree, a field or a select uses to move and choose: a remap onto them could not be pressed there.
_WIDGET_KEYS = frozenset({"up", "down", "left", "right", "home", "end", "pageup", "pagedown", "enter", "return",
                          "tab", "space", "backspace", "delete", "insert", "escape"})
EDITOR_SCOPES = ("Everywhere", "Edit mode")  # where the YAML editor may have focus


@dataclass(slots=True)
class CheckedKeymap:
    """The keymap to apply (id -> comma-joined keys), the ids whose remap must beat the editor, and the problems."""

    keys: dict[str, str] = field(default_factory=dict)
    priority: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


def normalize(key: str) -> str:
    """A key as Textual names it (`?` -> question_mark, `Ctrl+W` -> ctrl+w)."""
    key = key.strip()
    *mods, base = key.split("+") if key != "+" else ["plus"]
    mods = [m.strip().lower() for m in mods]
    base = base.strip()
    base = key_name(base) if len(base) == 1 else base.lower()
    return "+".join([*mods, base])


def _key_problem(key: str, scope: str) -> str | None:
    *mods, base = key.split("+")
    unknown = [m for m in mods if m not in MODIFIERS]
    if unknown or not base:
        return f"'{key}' is not a key ({'unknown modifier ' + repr(unknown[0]) if unknown else 'no key after +'})"
    if len(base) != 1 and base not in _NAMED and key_to_character(base) is None:
        hint = did_you_mean(base, sorted(_NAMED))
        return f"'{key}' is not a key name" + (f" ({hint})" if hint else "")
    plain = not (set(mods) - {"shift"})
    if plain and base in _WIDGET_KEYS:
        return f"'{key}' moves or chooses in the studio's lists and fields; use ctrl+…, alt+… or a function key"
    if plain and scope in EDITOR_SCOPES and base not in _FUNCTION_KEYS:
        return f"'{key}' types text in the editor; use ctrl+…, alt+… or a function key"
    return None


# What tmux's send-keys calls the named keys a terminal sends (F1-F12 only; ctrl and shift combine with these).
_TMUX_NAMES = {"up": "Up", "down": "Down", "left": "Left", "right": "Right", "home": "Home", "end": "End",
               "pageup": "PPage", "pagedown": "NPage", "insert": "IC", "delete": "DC", "backspace": "BSpace",
               "tab": "Tab", "enter": "Enter", "escape": "Escape", "space": "Space",
               **{f"f{i}": f"F{i}" for i in range(1, 13)}}
# ctrl+ reaches a program only as a control code (letters, @ [ \\ ] ^ _) or on a named key; ctrl+. or ctrl+1 has none.
_CTRL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz@[\\]^_")
_CHARACTERS = {key_name(c): c for c in map(chr, range(33, 127))}  # question_mark -> ?, plus -> +


def tmux_name(key: str) -> str | None:
    """How `tmux send-keys` names a Textual key (`ctrl+s` -> C-s), or None when no terminal can send it as such."""
    *mods, base = key.split("+")
    char = base if len(base) == 1 else _CHARACTERS.get(base)
    if base == "shift" or not set(mods) <= {"ctrl", "alt", "shift"}:
        return None
    if "shift" in mods and base not in _TMUX_NAMES:
        return None  # shift+letter is the capital letter: a terminal sends no shift of its own
    if "ctrl" in mods and base not in _TMUX_NAMES and (char is None or char.lower() not in _CTRL_CHARACTERS):
        return None
    name = _TMUX_NAMES.get(base) or char
    if name is None:
        return None
    if name == "Tab" and mods == ["shift"]:
        return "BTab"
    return "".join({"ctrl": "C-", "alt": "M-", "shift": "S-"}[m] for m in mods) + name


def terminal_sensitive(key: str) -> bool:
    """A key that reaches the app only from some terminals: Alt (sent as Meta), Shift+F-keys, Ctrl+Space (as Ctrl+@)."""
    *mods, base = key.split("+")
    return "alt" in mods or ("shift" in mods and base in _FUNCTION_KEYS) or key in ("ctrl+space", "ctrl+@", "ctrl+at")


def _keys_of(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [k for k in (normalize(k) for k in value.split(",")) if k]
    if isinstance(value, (list, tuple)) and all(isinstance(k, str) for k in value):
        return [k for k in (normalize(k) for k in value) if k]
    return None


def check_keymap(raw: Mapping[str, Any], scopes: Mapping[str, Iterable[Binding]]) -> CheckedKeymap:
    """Check a keymap against the bindings of each scope ("Everywhere" overlaps every other scope)."""
    out = CheckedKeymap()
    where: dict[str, tuple[str, Binding]] = {}
    for scope, bindings in scopes.items():
        for b in bindings:
            if b.id and b.id not in where:
                where[b.id] = (scope, b)
    taken: dict[tuple[str, str], str] = {}  # (scope, key) -> the binding (id or action) that keeps it
    for scope, bindings in scopes.items():
        for b in bindings:
            if b.id in raw:
                continue  # remapped: its default keys are given up
            for key in b.key.split(","):
                taken.setdefault((scope, normalize(key)), b.id or b.action)
    for binding_id, value in raw.items():
        found = where.get(binding_id)
        if found is None:
            hint = did_you_mean(binding_id, where)
            out.problems.append(f"keymap: unknown binding id '{binding_id}'" + (f" ({hint})" if hint else "") + "; F1 lists every id")
            continue
        scope, binding = found
        keys = _keys_of(value)
        if keys is None:
            out.problems.append(f"keymap: {binding_id}: a key or a list of keys, not {value!r}; the default ({binding.key}) is kept")
            continue
        if not keys:
            out.problems.append(f"keymap: {binding_id} would have no key; the default ({binding.key}) is kept")
            continue
        refusal = next((p for p in (_key_problem(k, scope) for k in keys) if p), None)
        if refusal is None:
            refusal = _clash(keys, scope, taken)
        if refusal is not None:
            out.problems.append(f"keymap: {binding_id}: {refusal}; the default ({binding.key}) is kept")
            for key in binding.key.split(","):  # its defaults stay: later remaps may not take them
                taken.setdefault((scope, normalize(key)), binding_id)
            continue
        for key in keys:
            taken[(scope, key)] = binding_id
        out.keys[binding_id] = ",".join(keys)
        if scope in EDITOR_SCOPES:
            out.priority.add(binding_id)
    return out


def _clash(keys: list[str], scope: str, taken: dict[tuple[str, str], str]) -> str | None:
    overlapping = [s for (s, _) in taken if s == scope or s == "Everywhere" or scope == "Everywhere"]
    for key in keys:
        for other_scope in dict.fromkeys(overlapping):
            owner = taken.get((other_scope, key))
            if owner is not None:
                return f"{key} is already the key of {owner}; remap that one too, or choose another key"
    return None


def bindings_of(bindings: BindingsMap) -> list[Binding]:
    """The bindings of a map, one per action (a map holds one entry per key)."""
    grouped: dict[str, list[Binding]] = {}
    for listed in bindings.key_to_bindings.values():
        for b in listed:
            grouped.setdefault(b.id or b.action, []).append(b)
    return [dataclasses.replace(bs[0], key=",".join(b.key for b in bs)) for bs in grouped.values()]


def give_priority(node: DOMNode, ids: set[str]) -> None:
    """Make the node's remapped bindings win over the focused widget's own keys (the editor's ctrl+w)."""
    if not ids:
        return
    bindings = own_bindings(node).key_to_bindings  # Textual has no public way to change a binding's priority
    for key, listed in bindings.items():
        bindings[key] = [dataclasses.replace(b, priority=True) if b.id in ids else b for b in listed]
