"""Type strings ("list[Document]", "int | None", "Literal['a', 'b']") -> TypeExpr -> pydantic models.

A contract declares its types in YAML; the runtime validates LLM output
against pydantic models built from them, the expression checker walks field
chains through them, and prompts describe them to the model (`schema_text`).
"""

from __future__ import annotations

import functools
import itertools
import keyword
import re
import threading
import typing
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic_core import PydanticCustomError, SchemaValidator, core_schema

from contractstudio.documents import patterns
from contractstudio.documents.models import FieldSpec, TypeDecl

PRIMITIVES = ("str", "int", "float", "bool", "any", "none")
MAX_TYPE_DEPTH = 32  # list[list[...]] deeper than this is a mistake (and would exhaust the parser's recursion)


class TypeSyntaxError(ValueError):
    """A malformed type string; `offset` is the character where the problem is."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class TypeBuildError(ValueError):
    """A declared type pydantic cannot turn into a validator; `field` names the field at fault when known."""

    def __init__(self, type_name: str, reason: str, field: str | None = None) -> None:
        where = f" (field '{field}')" if field else ""
        super().__init__(f"type '{type_name}' cannot be built{where}: {reason}")
        self.type_name = type_name
        self.reason = reason
        self.field = field


@dataclass(frozen=True, slots=True)
class Prim:
    name: str  # one of PRIMITIVES

    def __str__(self) -> str:
        return "None" if self.name == "none" else self.name


@dataclass(frozen=True, slots=True)
class Ref:
    name: str  # a declared type name

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ListOf:
    item: TypeExpr

    def __str__(self) -> str:
        return f"list[{self.item}]"


@dataclass(frozen=True, slots=True)
class DictOf:
    value: TypeExpr

    def __str__(self) -> str:
        return f"dict[str, {self.value}]"


@dataclass(frozen=True, slots=True)
class Union:
    options: tuple[TypeExpr, ...]

    def __str__(self) -> str:
        return " | ".join(str(o) for o in self.options)


@dataclass(frozen=True, slots=True)
class LiteralOf:
    values: tuple[Any, ...]

    def __str__(self) -> str:
        return "Literal[" + ", ".join(repr(v) for v in self.values) + "]"


TypeExpr = Prim | Ref | ListOf | DictOf | Union | LiteralOf
ANY = Prim("any")
NONE = Prim("none")


def union_of(options: typing.Iterable[TypeExpr]) -> TypeExpr:
    """A flattened, de-duplicated union (a single option is itself; `any` absorbs the rest)."""
    flat: list[TypeExpr] = []
    for opt in options:
        for o in opt.options if isinstance(opt, Union) else (opt,):
            if o == ANY:
                return ANY
            if o not in flat:
                flat.append(o)
    if not flat:
        return ANY
    return flat[0] if len(flat) == 1 else Union(tuple(flat))


def without_none(t: TypeExpr) -> TypeExpr:
    """The type with `None` removed from a union (T | None -> T)."""
    if isinstance(t, Union):
        rest = [o for o in t.options if o != NONE]
        return union_of(rest) if rest else NONE
    return t


# ----------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<str>'[^'\\]*'|\"[^\"\\]*\")"
    r"|(?P<num>-?\d+(?:\.\d+)?)|(?P<punct>[\[\],|]))"
)
_ALIASES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "Any": "any", "None": "none", "null": "none"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        stop = len(text.rstrip())  # never `text[pos:].strip()` per token: that is quadratic in the type's length
        while pos < stop:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                bad = pos + len(text[pos:]) - len(text[pos:].lstrip())
                raise TypeSyntaxError(f"unexpected character {text[bad]!r} in type", bad)
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def expect(self, value: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != value:
            where = tok[2] if tok else len(self.text)
            got = f"'{tok[1]}'" if tok else "the end"
            raise TypeSyntaxError(f"expected '{value}' but found {got}", where)
        self.i += 1

    def union(self) -> TypeExpr:
        options = [self.primary()]
        while (tok := self.peek()) is not None and tok[1] == "|":
            self.i += 1
            options.append(self.primary())
        return union_of(options)

    def primary(self) -> TypeExpr:
        self.depth += 1
        try:
            return self._primary()
        finally:
            self.depth -= 1

    def _primary(self) -> TypeExpr:
        tok = self.peek()
        if self.depth > MAX_TYPE_DEPTH:
            raise TypeSyntaxError(f"the type nests deeper than {MAX_TYPE_DEPTH} levels", tok[2] if tok else len(self.text))
        if tok is None:
            raise TypeSyntaxError("a type name is missing", len(self.text))
        kind, value, where = tok
        if kind != "name":
            raise TypeSyntaxError(f"expected a type name but found '{value}'", where)
        self.i += 1
        name = _ALIASES.get(value, value)
        if name in ("list", "List"):
            self.expect("[")
            item = self.union()
            self.expect("]")
            return ListOf(item)
        if name in ("dict", "Dict"):
            self.expect("[")
            key = self.union()
            if key != Prim("str"):
                raise TypeSyntaxError("dictionary keys must be str (JSON objects have string keys)", where)
            self.expect(",")
            val = self.union()
            self.expect("]")
            return DictOf(val)
        if name == "Optional":
            self.expect("[")
            inner = self.union()
            self.expect("]")
            return union_of([inner, NONE])
        if name == "Literal":
            self.expect("[")
            values: list[Any] = [self.literal()]
            while (t := self.peek()) is not None and t[1] == ",":
                self.i += 1
                values.append(self.literal())
            self.expect("]")
            return LiteralOf(tuple(dict.fromkeys(values)))
        if name in PRIMITIVES:
            return Prim(name)
        if (nxt := self.peek()) is not None and nxt[1] == "[":
            raise TypeSyntaxError(f"'{value}' takes no parameters (generic types: list, dict, Literal, Optional)", nxt[2])
        return Ref(value)

    def literal(self) -> Any:
        tok = self.peek()
        if tok is None:
            raise TypeSyntaxError("a literal value is missing", len(self.text))
        kind, value, where = tok
        self.i += 1
        if kind == "str":
            return value[1:-1]
        if kind == "num":
            return float(value) if "." in value else int(value)
        if value in ("True", "False"):
            return value == "True"
        if value == "None":
            return None
        raise TypeSyntaxError(f"Literal values are quoted strings, numbers, True, False or None, not '{value}'", where)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> TypeExpr:
    return _parse(text)


def parse_type(text: str) -> TypeExpr:
    """Parse a type string; raises TypeSyntaxError(message, offset). Results are shared (TypeExpr is frozen)."""
    if not isinstance(text, str):
        raise TypeSyntaxError("the type is empty", 0)
    return _parse_cached(text)  # files repeat the same few type strings: parse each once


def _parse(text: str) -> TypeExpr:
    if not text.strip():
        raise TypeSyntaxError("the type is empty", 0)
    parser = _Parser(text)
    result = parser.union()
    extra = parser.peek()
    if extra is not None:
        raise TypeSyntaxError(f"unexpected '{extra[1]}' after the type", extra[2])
    return result


def refs(t: TypeExpr) -> list[str]:
    """Every declared-type name a type expression mentions."""
    if isinstance(t, Ref):
        return [t.name]
    if isinstance(t, ListOf):
        return refs(t.item)
    if isinstance(t, DictOf):
        return refs(t.value)
    if isinstance(t, Union):
        return [n for o in t.options for n in refs(o)]
    return []


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

    # -- pydantic models

    def model(self, name: str) -> type[BaseModel]:
        """The pydantic model of a declared type (built once, cached); raises TypeBuildError when pydantic refuses it."""
        if name not in self.decls:
            raise KeyError(f"type '{name}' is not declared")
        if name in self._models or name in self._broken:
            return self._build(name, set())
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
            annotation, constraints = _with_pattern(self._annotation(t, building), _constraints(spec, t))
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
            except Exception:  # resolved later, when its forward references exist
                pass
        for other in list(self._models.values()):
            if not getattr(other, "__pydantic_complete__", True):
                try:
                    other.model_rebuild(_types_namespace=dict(self._models))
                except Exception:
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
            annotation, constraints = _with_pattern(self._annotation(t, set()), _constraints(spec, t))
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
            parts = [str(t), "required" if spec.required else f"optional, default {_show(spec.default)}"]
            parts.extend(_constraint_words(_constraints(spec, t)))
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


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    return str(value)


NUMBER_BOUNDS = ("ge", "gt", "le", "lt")
LENGTH_BOUNDS = ("min_length", "max_length")
CONSTRAINTS = NUMBER_BOUNDS + LENGTH_BOUNDS + ("pattern",)


def _base_kind(t: TypeExpr) -> str:
    """'number', 'str', 'sized' (list/dict) or '' for a type's non-None part."""
    t = without_none(t)
    if isinstance(t, Prim):
        return {"int": "number", "float": "number", "str": "str"}.get(t.name, "")
    if isinstance(t, (ListOf, DictOf)):
        return "sized"
    return ""


def applicable_constraints(t: TypeExpr) -> tuple[str, ...]:
    """The constraint keys a field of this type can have: bounds on numbers, lengths on str/list/dict, pattern on str."""
    kind = _base_kind(t)
    if kind == "number":
        return NUMBER_BOUNDS
    if kind == "sized":
        return LENGTH_BOUNDS
    if kind == "str":
        return LENGTH_BOUNDS + ("pattern",)
    return ()


def _constraints(spec: FieldSpec, t: TypeExpr) -> dict[str, Any]:
    """The pydantic Field constraints that apply to the field's type (the analyzer reports the others: SCH105)."""
    out: dict[str, Any] = {}
    for key in applicable_constraints(t):
        value = getattr(spec, key)
        if value is None:
            continue
        if key in NUMBER_BOUNDS and without_none(t) == Prim("int") and float(value).is_integer():
            value = int(value)  # an int field keeps int bounds, so schemas and prompts say `>= 1`, not `>= 1.0`
        out[key] = value
    return out


@functools.lru_cache(maxsize=1024)
def _linear_engine_compiles(pattern: str) -> bool:
    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except Exception:  # noqa: BLE001 - look-around, back-references, or not a regex at all
        return False
    return True


def needs_backtracking(pattern: str) -> bool:
    """Whether pydantic's linear-time engine cannot run the pattern (look-around, back-references, ...)."""
    return not _linear_engine_compiles(pattern)


TYPE_PATTERN_S = 1.0  # seconds of regex work for the backtracking patterns of one validation (runtime/validation.py)


def _with_pattern(annotation: Any, constraints: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A field's annotation and Field constraints; a pattern the linear engine cannot run is checked in patterns.py.

    Every pattern valid in Python's `re` is enforced; the linear engine is kept wherever it suffices, and
    the others run on the bounded matcher (a deadline, the GIL released), never on Python's `re`.
    """
    pattern = constraints.get("pattern")
    if pattern is None or not needs_backtracking(pattern):
        return annotation, constraints
    rest = {k: v for k, v in constraints.items() if k != "pattern"}
    rest["json_schema_extra"] = {"pattern": pattern}  # schemas and prompts still show it
    return Annotated[annotation, AfterValidator(_bounded_pattern(pattern))], rest


def _bounded_pattern(pattern: str) -> Any:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            found = patterns.active_budget(TYPE_PATTERN_S).search(pattern, value)
        except patterns.PatternError as err:  # the analyzer reports it (SCH103); the value cannot be checked
            raise PydanticCustomError("string_pattern_unusable", f"{err}: the pattern '{{pattern}}' cannot be checked",
                                      {"pattern": pattern}) from None
        except patterns.RegexTimeout as err:  # fail closed: a value that could not be checked is not accepted
            raise PydanticCustomError("string_pattern_timeout", f"{err} matching the pattern '{{pattern}}'; the value is refused",
                                      {"pattern": pattern}) from None
        if not found:
            raise PydanticCustomError("string_pattern_mismatch", "String should match pattern '{pattern}'", {"pattern": pattern})
        return value

    return check


def _first_line(err: Exception) -> str:
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    return lines[-1] if lines else type(err).__name__


def _culprit(err: Exception, py_names: dict[str, str]) -> str | None:
    """The declared field named in pydantic's schema error (`Field "x":`), when there is one."""
    m = re.search(r'Field "([^"]+)"', str(err))
    return py_names.get(m.group(1)) if m else None


def _constraint_words(constraints: dict[str, Any]) -> list[str]:
    words = []
    for key, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        value = constraints.get(key)
        if value is not None:
            words.append(f"{sym} {_show(value)}")
    if "min_length" in constraints:
        words.append(f"length >= {constraints['min_length']}")
    if "max_length" in constraints:
        words.append(f"length <= {constraints['max_length']}")
    if "pattern" in constraints:
        words.append(f"must match the regular expression {constraints['pattern']!r}")
    return words
