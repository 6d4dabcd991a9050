"""How deep a declared type nests: one walk over the declarations, bounded for a hostile file (issue 32.4)."""

from __future__ import annotations

from contractstudio.documents.models import TypeDecl
from contractstudio.documents.type_syntax import DictOf, ListOf, Ref, TypeExpr, Union

# Levels a declared type may nest: itself, and each declared type, list and dict on its deepest path (a union is no
# level; a type that contains itself counts once more, as the $ref its schema has there). pydantic writes a JSON
# Schema with about 22 frames of recursion per declared type and ran out at 44 declared types (issue 32: T0 -> ... ->
# T59 passed check, then every call crashed); at this bound a schema is written with half the recursion limit spent
# (tests/test_type_nesting.py). OpenAI's strict mode takes 10 levels; no real output type comes near 20.
MAX_TYPE_NESTING = 20


def _levels(t: TypeExpr) -> tuple[int, list[tuple[str, int]]]:
    """A field type's own levels (lists and dicts, no declared type) and each declared type it names with the levels
    above it. A type expression nests at most MAX_TYPE_DEPTH deep (its parser says so): recursion is safe here."""
    if isinstance(t, Ref):
        return 0, [(t.name, 0)]
    if isinstance(t, (ListOf, DictOf)):
        own, named = _levels(t.item if isinstance(t, ListOf) else t.value)
        return own + 1, [(n, k + 1) for n, k in named]
    if isinstance(t, Union):
        found = [_levels(o) for o in t.options]
        return max(f[0] for f in found), [x for f in found for x in f[1]]
    return 0, []


def nesting_of(decls: dict[str, TypeDecl], types: dict[str, dict[str, TypeExpr]]
             ) -> dict[str, tuple[int, str | None, str | None, tuple[str, ...]]]:
    """Each declared type's levels, the first step of its deepest path and that path's last two steps:
    (levels, field, next declared type or None, tail).

    One depth-first walk with an explicit stack (a hostile file may chain thousands of types); a type met again while
    it is being walked is a recursion: one level (the $ref its schema has there), not walked again."""
    edges: dict[str, list[tuple[str, str | None, int]]] = {}  # name -> (field, declared type or None, levels above)
    for name in decls:
        out: list[tuple[str, str | None, int]] = []
        for fname, t in types.get(name, {}).items():
            own, named = _levels(t)
            out.append((fname, None, own))
            out.extend((fname, n, k) for n, k in named if n in decls)
        edges[name] = out
    Found = tuple[int, str | None, str | None, tuple[str, ...]]
    done: dict[str, Found] = {}

    def via(name: str, fname: str, target: str, levels: int) -> tuple[int, str | None, str | None, tuple[str, ...]]:
        tail = done[target][3] if target in done else (target,)
        return levels, fname, target, tail if len(tail) >= 2 else (f"{name}.{fname}", *tail)

    for root in decls:
        if root in done:
            continue
        best: dict[str, tuple[int, str | None, str | None, tuple[str, ...]]] = {root: (1, None, None, (root,))}
        walking = {root}
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            name, i = stack[-1]
            if i < len(edges[name]):
                stack[-1] = (name, i + 1)
                fname, target, above = edges[name][i]
                found: Found
                if target is None:
                    found = (1 + above, fname, None, (name,))
                elif target in walking:
                    found = via(name, fname, target, 2 + above)  # a recursion: its $ref
                elif target in done:
                    found = via(name, fname, target, 1 + above + done[target][0])
                else:
                    best[target] = (1, None, None, (target,))
                    walking.add(target)
                    stack.append((target, 0))
                    continue
                if found[0] > best[name][0]:
                    best[name] = found
                continue
            stack.pop()
            walking.discard(name)
            done[name] = best[name]
            if stack:
                parent, j = stack[-1]
                fname, _, above = edges[parent][j - 1]
                if 1 + above + done[name][0] > best[parent][0]:
                    best[parent] = via(parent, fname, name, 1 + above + done[name][0])
    return done
