"""Declared types -> pydantic models (the TypeExprs they are read into: type_syntax.py).

A contract declares its types in YAML; the runtime validates LLM output
against pydantic models built from them, the expression checker walks field
chains through them, and prompts describe them to the model (`schema_text`).
"""

from __future__ import annotations

import itertools
import keyword
import re
import threading
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from contractstudio.documents.constraints import constraint_words, constraints_for, show_value, with_pattern
from contractstudio.documents.models import FieldSpec, TypeDecl
from contractstudio.documents.type_nesting import MAX_TYPE_NESTING, nesting_of
from contractstudio.documents.type_syntax import (
    ANY,
    DictOf,
    ListOf,
    LiteralOf,
    Prim,
    Ref,
    TypeExpr,
    TypeSyntaxError,
    Union,
    parse_type,
    refs,
)


class TypeBuildError(ValueError):
    """A declared type pydantic cannot turn into a validator; `field` names the field at fault when known.

    `nesting` is set when the type nests past MAX_TYPE_NESTING (a resource limit, YML006, rather than pydantic's refusal).
    """

    def __init__(self, type_name: str, reason: str, field: str | None = None, nesting: int | None = None) -> None:
        where = f" (field '{field}')" if field else ""
        super().__init__(f"type '{type_name}' cannot be built{where}: {reason}")
        self.type_name = type_name
        self.reason = reason
        self.field = field
        self.nesting = nesting


# ----------------------------------------------------------------- the type system


def _safe_field_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_") and not hasattr(BaseModel, name)


class TypeSystem:
    """The declared types of one document, as TypeExprs and (lazily) pydantic models."""

    def __init__(self, decls: dict[str, TypeDecl]) -> None:
        self.decls = dict(decls)
        self._types: dict[str, dict[str, TypeExpr]] = {}
        self._unusable: dict[tuple[str, str], str] = {}  # fields whose type is broken: checked as `any`, never enforced so
        for name, decl in self.decls.items():
            parsed: dict[str, TypeExpr] = {}
            for fname, spec in decl.fields.items():
                try:
                    parsed[fname] = parse_type(spec.type)
                except TypeSyntaxError as err:
                    parsed[fname] = ANY
                    self._unusable[(name, fname)] = f"its type {spec.type!r} does not parse: {err.message}"
                    continue
                missing = [r for r in refs(parsed[fname]) if r not in self.decls]
                if missing:
                    self._unusable[(name, fname)] = f"its type names '{missing[0]}', which is not declared"
            self._types[name] = parsed
        self._models: dict[str, type[BaseModel]] = {}
        self._broken: dict[str, TypeBuildError] = {}
        self._defaults: dict[tuple[str, str], str | None] = {}  # analysis asks on every edit: answer once
        self._parts: dict[str, tuple[Any, ...]] | None = None  # each declaration as a key (models shared between systems)
        self._nesting: dict[str, tuple[int, str | None, str | None, tuple[str, ...]]] | None = None  # _nesting's answer
        self._users: dict[str, list[str]] | None = None

    @classmethod
    def from_decls(cls, decls: dict[str, TypeDecl] | None) -> TypeSystem:
        """Build from declarations; never raises (broken field types behave as `any`).

        Identical declarations share one system, so live re-analysis on every
        edit does not rebuild the same pydantic models again.
        """
        decls = decls or {}
        try:
            parts = {name: _decl_key(name, decl) for name, decl in decls.items()}
            key = tuple(parts.values())
            system = _SHARED.get(key)
        except Exception:  # noqa: BLE001 - an unusual default value (a list, a mapping): just do not share
            return cls(decls)
        if system is None:
            system = cls(decls)
            system._parts = parts
            _remember(_SHARED, key, system, _SHARED_MAX)
        return system

    # -- lookups

    def names(self) -> list[str]:
        """The declared type names."""
        return list(self.decls)

    def declared(self, t: TypeExpr | str) -> str | None:
        """The declared name behind a type (Ref or name), or None."""
        name = t.name if isinstance(t, Ref) else t if isinstance(t, str) else None
        return name if name in self.decls else None

    def fields(self, t: TypeExpr | str) -> dict[str, FieldSpec] | None:
        """The field specs of a declared type, or None for anything else."""
        name = self.declared(t)
        return dict(self.decls[name].fields) if name else None

    def field_types(self, t: TypeExpr | str) -> dict[str, TypeExpr] | None:
        """The parsed field types of a declared type, or None."""
        name = self.declared(t)
        return dict(self._types[name]) if name else None

    def field_type(self, t: TypeExpr | str, field: str) -> TypeExpr | None:
        """The type of one field of a declared type (None when there is no such field)."""
        types = self.field_types(t)
        return types.get(field) if types is not None else None

    # -- nesting

    def nesting(self, name: str) -> int:
        """How many levels a declared type nests (MAX_TYPE_NESTING says what counts); 0 for a name not declared."""
        return self._nesting_of().get(name, (0, None, None, ()))[0]

    def deepest_path(self, name: str, steps: int = 6) -> tuple[str, ...]:
        """The deepest path of a declared type as `Type.field` steps, ending at the last declared type reached (the
        type met again, for a recursion); longer than `steps`, its first three steps, "...", and its last two."""
        found = self._nesting_of()
        path: list[str] = []
        seen: set[str] = set()
        here = name
        while here in found and len(path) <= steps:
            seen.add(here)
            _, field, nxt, _ = found[here]
            if field is None or nxt is None:  # its own fields are its deepest: the path ends here
                return (*path, here)
            path.append(f"{here}.{field}")
            if nxt in seen:
                return (*path, nxt)  # a recursion: the type it reaches again
            here = nxt
        return (*path[:3], "...", *found[name][3])

    def users(self, name: str) -> list[str]:
        """The declared types with a field whose type names `name`."""
        if self._users is None:
            users: dict[str, list[str]] = {}
            for n, fields in self._types.items():
                for r in dict.fromkeys(r for t in fields.values() for r in refs(t)):
                    users.setdefault(r, []).append(n)
            self._users = users
        return self._users.get(name, [])

    def _nesting_of(self) -> dict[str, tuple[int, str | None, str | None, tuple[str, ...]]]:
        if self._nesting is None:
            self._nesting = nesting_of(self.decls, self._types)
        return self._nesting

    def _too_deep(self, name: str) -> TypeBuildError | None:
        levels = self.nesting(name)
        if levels <= MAX_TYPE_NESTING:
            return None
        path = self.deepest_path(name)
        first = path[0].split(".", 1)[1] if "." in path[0] else None
        return TypeBuildError(name, f"it nests {levels} levels deep ({' -> '.join(path)}), more than the "
                              f"{MAX_TYPE_NESTING} levels a type may nest", first, nesting=levels)

    # -- pydantic models

    def model(self, name: str) -> type[BaseModel]:
        """The pydantic model of a declared type (built once, cached); raises TypeBuildError when pydantic refuses it."""
        if name not in self.decls:
            raise KeyError(f"type '{name}' is not declared")
        if name in self._models or name in self._broken:
            return self._build(name, set())
        too_deep = self._too_deep(name)
        if too_deep is not None:  # refused before anything is built or keyed (a key walks every type it reaches)
            self._broken[name] = too_deep
            raise too_deep
        # A model is a function of the declarations it reaches alone: another system (the previous analysis
        # of a file being edited) that declared them the same way has built it already.
        key = self.reach_key([name])
        built = _BUILT.get(key) if key is not None else None
        if built is not None:
            for n, m in built.items():
                if isinstance(m, TypeBuildError):
                    self._broken.setdefault(n, m)
                else:
                    self._models.setdefault(n, m)
        try:
            return self._build(name, set())
        finally:
            if key is not None and built is None:
                _remember(_BUILT, key, {n: self._models.get(n) or self._broken[n] for n in self._closure([name])
                                        if n in self._models or n in self._broken}, _BUILT_MAX)

    def _closure(self, names: list[str]) -> set[str]:
        """The names and every declared-type name they reach through field types (undeclared ones included)."""
        seen: set[str] = set()
        todo = list(names)
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(r for t in self._types.get(n, {}).values() for r in refs(t))
        return seen

    def reach_key(self, names: list[str]) -> tuple[Any, ...] | None:
        """Everything the declarations of `names` reach, as a key: what depends on those alone (their models, the
        constraint findings of their fields) is the same in every system with an equal key. None when a value
        cannot be part of a key (an unusual default): compute it here, do not share it."""
        if self._parts is None:
            try:
                self._parts = {name: _decl_key(name, decl) for name, decl in self.decls.items()}
            except Exception:  # noqa: BLE001 - an unusual default value
                self._parts = {}
        if any(n not in self._parts for n in names if n in self.decls):
            return None
        key = tuple((n, self._parts.get(n, "undeclared")) for n in sorted(self._closure(names)))
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def annotation(self, t: TypeExpr) -> Any:
        """The Python annotation of a type expression (declared types as their models)."""
        return self._annotation(t, set())

    def _annotation(self, t: TypeExpr, building: set[str]) -> Any:
        if isinstance(t, Prim):
            return {"str": str, "int": int, "float": float, "bool": bool, "none": type(None)}.get(t.name, Any)
        if isinstance(t, Ref):
            if t.name not in self.decls:
                return Any
            if t.name in building:
                return t.name  # a forward reference, resolved by model_rebuild
            return self._build(t.name, building)
        if isinstance(t, ListOf):
            return list[self._annotation(t.item, building)]  # type: ignore[misc]
        if isinstance(t, DictOf):
            return dict[str, self._annotation(t.value, building)]  # type: ignore[misc]
        if isinstance(t, LiteralOf):
            return typing.Literal[t.values]
        if isinstance(t, Union):
            return typing.Union[tuple(self._annotation(o, building) for o in t.options)]  # noqa: UP007
        return Any

    def _build(self, name: str, building: set[str]) -> type[BaseModel]:
        if name in self._models:
            return self._models[name]
        if name in self._broken:
            raise self._broken[name]
        too_deep = self._too_deep(name)
        if too_deep is not None:  # pydantic would run out of recursion writing its JSON Schema: refused, never a crash
            self._broken[name] = too_deep
            raise too_deep
        building = building | {name}
        decl = self.decls[name]
        for fname in decl.fields:
            if (name, fname) in self._unusable:  # an expression may treat it as `any`; validation never does
                self._broken[name] = TypeBuildError(name, self._unusable[(name, fname)], fname)
                raise self._broken[name]
        definitions: dict[str, Any] = {}
        taken = {f for f in decl.fields if _safe_field_name(f)}  # a generated name must not replace a declared one
        py_names: dict[str, str] = {}
        for fname, spec in decl.fields.items():
            t = self._types[name].get(fname, ANY)
            annotation, constraints = with_pattern(self._annotation(t, building), constraints_for(spec, t))
            kwargs: dict[str, Any] = {"description": spec.description, **constraints}
            if not spec.required:
                kwargs["default"] = spec.default
            py_name = fname
            if not _safe_field_name(fname):
                py_name = next(f"field_{i}" for i in itertools.count(len(definitions)) if f"field_{i}" not in taken)
                taken.add(py_name)
                kwargs["alias"] = fname
            definitions[py_name] = (annotation, Field(**kwargs))
            py_names[py_name] = fname
        config = ConfigDict(extra=decl.extra, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True,
                            validate_default=True)
        model_name = name if name.isidentifier() else "Model"
        try:
            model: type[BaseModel] = create_model(model_name, __config__=config, __doc__=decl.description, **definitions)
        except Exception as err:  # noqa: BLE001 - never a looser model in its place: the type is refused
            broken = TypeBuildError(name, _first_line(err), _culprit(err, py_names))
            self._broken[name] = broken
            raise broken from None
        self._models[name] = model
        if not getattr(model, "__pydantic_complete__", True):
            try:
                model.model_rebuild(_types_namespace=dict(self._models))
            except Exception:  # noqa: BLE001 - whatever the user's annotations raise: resolved later, when its forward references exist
                pass
        for other in list(self._models.values()):
            if not getattr(other, "__pydantic_complete__", True):
                try:
                    other.model_rebuild(_types_namespace=dict(self._models))
                except Exception:  # noqa: BLE001 - as above: a type still waiting for another is rebuilt when that one comes
                    pass
        return model

    def default_problem(self, name: str, field: str) -> str | None:
        """Why a field's declared default is not a valid value of the field (type and constraints), or None."""
        if (name, field) not in self._defaults:
            # Like a model, the answer depends only on the field and the declarations its type reaches.
            key = self.reach_key([name])
            shared = (key, field)
            if key is not None and shared in _DEFAULT_PROBLEMS:
                self._defaults[(name, field)] = _DEFAULT_PROBLEMS[shared]
            else:
                self._defaults[(name, field)] = problem = self._default_problem(name, field)
                if key is not None:
                    _remember(_DEFAULT_PROBLEMS, shared, problem, _BUILT_MAX * 16)
        return self._defaults[(name, field)]

    def _default_problem(self, name: str, field: str) -> str | None:
        spec = self.decls[name].fields[field]
        if spec.required:
            return None
        t = self._types[name].get(field, ANY)
        try:
            annotation, constraints = with_pattern(self._annotation(t, set()), constraints_for(spec, t))
            field_type: Any = Annotated[annotation, Field(**constraints)]
            adapter: TypeAdapter[Any] = TypeAdapter(field_type)
            adapter.validate_python(spec.default)
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            return str(first.get("msg", "invalid"))
        except Exception:  # noqa: BLE001 - a field that cannot be built at all is reported as such (TypeBuildError)
            return None
        return None

    def json_schema(self, name: str) -> dict[str, Any]:
        """The JSON Schema of a declared type."""
        return self.model(name).model_json_schema(by_alias=True)

    # -- descriptions for prompts

    def schema_text(self, name: str) -> str:
        """A readable description of a type and the types it uses: fields, types, descriptions, constraints."""
        order: list[str] = []

        def visit(n: str) -> None:
            if n in order or n not in self.decls:
                return
            order.append(n)
            for t in self._types[n].values():
                for r in refs(t):
                    visit(r)

        visit(name)
        blocks = [self._describe(n, top=(n == name)) for n in order]
        return "\n\n".join(blocks)

    def _describe(self, name: str, *, top: bool) -> str:
        decl = self.decls[name]
        head = f"{name}: a JSON object" + (" (no other keys allowed)" if decl.extra == "forbid" else "")
        lines = [head + (f": {decl.description}" if decl.description else "."), "Fields:"]
        for fname, spec in decl.fields.items():
            t = self._types[name].get(fname, ANY)
            parts = [str(t), "required" if spec.required else f"optional, default {show_value(spec.default)}"]
            parts.extend(constraint_words(constraints_for(spec, t)))
            line = f"- {fname} ({', '.join(parts)})"
            if spec.description:
                line += f": {spec.description}"
            lines.append(line)
        return "\n".join(lines)


_SHARED: dict[tuple[Any, ...], TypeSystem] = {}
_SHARED_MAX = 64
# Models (or why pydantic refused them) and default problems, by the text of the declarations they reach.
_BUILT: dict[tuple[Any, ...], dict[str, type[BaseModel] | TypeBuildError]] = {}
_DEFAULT_PROBLEMS: dict[tuple[Any, ...], str | None] = {}
_BUILT_MAX = 256


_REMEMBERING = threading.Lock()  # the studio's and the language server's workers analyze in threads


def _remember(cache: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    with _REMEMBERING:
        cache[key] = value
        while len(cache) > limit:
            cache.pop(next(iter(cache)))


def _decl_key(name: str, decl: TypeDecl) -> tuple[Any, ...]:
    """A declaration as a key: what it declares, which defaults are set, and where it is (plain attribute tuples:
    deterministic for YAML-loaded values, far cheaper than model_dump or a repr, and hashed in C)."""
    fields = tuple((f, tuple(spec.__dict__.items()), frozenset(spec.model_fields_set), spec.src) for f, spec in decl.fields.items())
    return (name, decl.description, decl.extra, decl.src, fields)


def _first_line(err: Exception) -> str:
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    return lines[-1] if lines else type(err).__name__


def _culprit(err: Exception, py_names: dict[str, str]) -> str | None:
    """The declared field named in pydantic's schema error (`Field "x":`), when there is one."""
    m = re.search(r'Field "([^"]+)"', str(err))
    return py_names.get(m.group(1)) if m else None
