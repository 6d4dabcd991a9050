"""An output type's JSON Schema compiled for one provider's structured-output mode, clause by clause.

Each constraint of the contract's type is classified: enforced by the provider's decoder (kept in the schema
sent), checked after the reply (removed from the schema: never sent to be refused or silently dropped; the
engine validates the reply with the contract's own type exactly as without structure), or not representable
(the schema cannot be sent at all: the mode falls back to JSON mode or to the prompt alone). The runtime sends
`CompiledSchema.schema`; the analyzer and the editor show `CompiledSchema.clauses`. Provider facts and their
sources, and the one choice of the mode (choose_mode): provider_profiles.py. No litellm here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from contractstudio.documents.constraints import needs_backtracking
from contractstudio.documents.provider_profiles import Choice, Mode, ProviderProfile, Requested, choose_mode, profile_for

__all__ = ["WILDCARD", "Clause", "CompiledSchema", "Enforcement", "Mode", "ProviderProfile", "Requested",
           "compile_schema", "map_back", "path_parts", "profile_for"]

Enforcement = Literal["decoder", "after_reply", "not_representable"]

NULL = {"type": "null"}
_KEPT_ANNOTATIONS = ("description",)
# Annotations never sent: pydantic's titles are noise, and OpenAI's strict mode refuses `default`.
_DROPPED_ANNOTATIONS = ("title", "default", "examples", "$schema", "$id", "$comment", "readOnly", "writeOnly")
_STRUCTURE = ("type", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf", "$ref", "$defs",
              "definitions", "enum", "const")


@dataclass(frozen=True)
class Clause:
    """One constraint of the output type and who enforces it for the chosen provider and mode."""

    path: str  # JSON-pointer-like field path: "" (the whole reply), "/answer", "/items/*/score" (* = any item or key;
    # a field's name is escaped so that no name spells it: `*` is `~2`, `/` is `~1`, `~` is `~0`; path_parts reads one)
    keyword: str  # the JSON Schema keyword ("minLength", "type", "required", ...) or "schema" for the whole
    enforcement: Enforcement
    reason: str  # plain words for the author, e.g. "Anthropic structured outputs do not support numerical constraints"
    value: Any = field(default=None, compare=False, hash=False)  # the keyword's value in the contract's schema


@dataclass(frozen=True)
class CompiledSchema:
    """What is sent for one output type and model, and what each clause of the type relies on."""

    mode: Mode
    strict: bool
    schema: dict[str, Any] | None  # exactly what is sent (None: no schema is sent)
    clauses: tuple[Clause, ...]
    optional_as_nullable: tuple[str, ...]  # paths of optional fields sent as required + nullable (map_back drops the nulls)
    fallback_reason: str | None  # why the mode is not the one asked for (or `auto`'s best), None when it is
    provider: str = "none"  # the ProviderProfile's name
    source: str = ""  # where the provider facts come from
    # (path of a $ref back into a recursive type, path where that type's body starts): map_back repeats the
    # optional_as_nullable paths of the body below each such reference.
    recursion_points: tuple[tuple[str, str], ...] = ()

    def enforced_by(self, enforcement: Enforcement) -> tuple[Clause, ...]:
        """The clauses with one enforcement."""
        return tuple(c for c in self.clauses if c.enforcement == enforcement)


# A path's step for any item of a list or any value of a dict. A field's own name never spells it: `_escape` writes
# a `*` in a name as `~2` (after `~` as `~0` and `/` as `~1`, as JSON Pointer does), so a field named `*` is `/~2`
# and the wildcard `/*` stays a step no field can take (issue 32: a field named `*` was taken for the wildcard).
WILDCARD = "*"


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1").replace("*", "~2")


def path_parts(path: str) -> list[str | None]:
    """A clause path's steps: each field's own name (a field may be named `*`), None for the wildcard."""
    return [None if p == WILDCARD else p.replace("~1", "/").replace("~2", "*").replace("~0", "~")
            for p in path.split("/")[1:]]


def _anchored(pattern: str) -> bool:
    return pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")


class _Compiler:
    """One walk over a schema: the provider's schema, its clauses and what makes it unsendable."""

    def __init__(self, root: dict[str, Any], profile: ProviderProfile) -> None:
        self.profile = profile
        self.defs: dict[str, Any] = {**root.get("definitions", {}), **root.get("$defs", {})}
        self.clauses: list[Clause] = []
        self.optional_as_nullable: list[str] = []
        self.required_nullable: list[str] = []
        self.kept_defs: dict[str, Any] = {}
        self.recursion_points: list[tuple[str, str]] = []
        self.properties = 0
        self.optional = 0
        self.unions = 0
        self.max_depth_seen = 0
        self.enum_values = 0  # every enum's values, as sent (a type used at two places is sent twice)
        self.chars = 0  # property names, definition names, enum and const values, as sent

    def clause(self, path: str, keyword: str, enforcement: Enforcement, reason: str, value: Any = None) -> None:
        self.clauses.append(Clause(path, keyword, enforcement, reason, value))

    def unsendable(self, path: str, keyword: str, reason: str, value: Any = None) -> None:
        self.clause(path, keyword, "not_representable", reason, value)

    # -- the walk

    def walk(self, node: Any, path: str, depth: int, stack: tuple[tuple[str, str], ...],
             union: bool = False) -> dict[str, Any]:
        if not isinstance(node, dict):
            return {}
        if "$ref" in node:
            return self._ref(node, path, depth, stack, union)
        out: dict[str, Any] = {k: node[k] for k in _KEPT_ANNOTATIONS if k in node}
        if self.profile.needs_types and not any(k in node for k in ("type", "anyOf", "oneOf", "enum", "const")):
            self.unsendable(path, "type", f"{self._who()} needs a type for every value: a value of any type "
                                          "cannot be sent")
        options = node.get("anyOf", node.get("oneOf"))
        if isinstance(options, list):
            self.unions += 0 if union else 1
            out["anyOf"] = [self.walk(o, path, depth, stack, union=True) for o in options]
            if not union:
                self.clause(path, "type", "decoder", "the decoder writes a value of one of the union's types",
                            [o.get("type", o.get("$ref", "")) if isinstance(o, dict) else o for o in options])
        kind = node.get("type")
        if kind is not None:
            out["type"] = kind
            if not union and not isinstance(options, list):
                self.clause(path, "type", "decoder", f"the decoder writes {_kind(node)}", kind)
        for key in ("enum", "const"):
            if key in node:
                if key == "const" and self.profile.inline_refs:  # OpenAPI 3.0 has no const
                    out["enum"] = [node[key]]
                else:
                    out[key] = node[key]
                self.clause(path, key, "decoder", "the decoder writes one of the allowed values", node[key])
                self._count_values(path, key, node[key])
        if kind == "object" or "properties" in node:
            self._object(node, out, path, depth + 1, stack)
        if kind == "array" or "items" in node:
            if "items" in node:
                out["items"] = self.walk(node["items"], f"{path}/{WILDCARD}", depth, stack)
        for key, value in node.items():
            if key in _STRUCTURE or key in _KEPT_ANNOTATIONS or key in _DROPPED_ANNOTATIONS:
                continue
            self._keyword(key, value, node, out, path)
        return out

    def _ref(self, node: dict[str, Any], path: str, depth: int, stack: tuple[tuple[str, str], ...],
             union: bool) -> dict[str, Any]:
        ref = node["$ref"]
        name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""
        target = self.defs.get(name)
        if target is None:
            self.unsendable(path, "$ref", f"the schema refers to '{ref}', which it does not define", ref)
            return {}
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        base = next((where for n, where in reversed(stack) if n == name), None)
        if base is not None:
            if not self.profile.recursion:
                self.unsendable(path, "$ref", f"the type '{name}' contains itself, and {self._who()} cannot express a "
                                              "recursive schema", name)
                return {}
            if name not in self.kept_defs:
                self.kept_defs[name] = {}  # placeholder: compiled by its first occurrence, which is still on the stack
            self.recursion_points.append((path, base))
            return {"$ref": f"#/$defs/{name}"}
        compiled = self.walk({**target, **siblings}, path, depth, stack + ((name, path),), union)
        if name in self.kept_defs:  # it reached itself: keep it once under $defs, refer to it here too
            self.kept_defs[name] = compiled
            return {"$ref": f"#/$defs/{name}"}
        return compiled

    def _object(self, node: dict[str, Any], out: dict[str, Any], path: str, depth: int,
                stack: tuple[tuple[str, str], ...]) -> None:
        p = self.profile
        self.max_depth_seen = max(self.max_depth_seen, depth)
        if p.max_depth is not None and depth == p.max_depth + 1:
            self.unsendable(path, "schema", f"objects nest {depth} levels deep here; {self._who()} allows at most "
                                            f"{p.max_depth}", depth)
        props = node.get("properties") or {}
        required = [r for r in node.get("required", []) if r in props]
        out_props: dict[str, Any] = {}
        sent_required: list[str] = []
        self.properties += len(props)
        self.chars += sum(len(name) for name in props)
        for name, sub in props.items():
            child = f"{path}/{_escape(name)}"
            compiled = self.walk(sub, child, depth, stack)
            if name in required:
                sent_required.append(name)
                self.clause(child, "required", "decoder", "the decoder always writes this field")
                if _admits_null(compiled):
                    self.required_nullable.append(child)
            elif p.all_required:
                sent_required.append(name)
                if _admits_null(compiled):
                    self.required_nullable.append(child)
                    self.clause(child, "required", "decoder", f"{self._who()} needs every field: this optional field "
                                "is always written (null or a value), so its default is never used")
                else:
                    compiled = _nullable(compiled)
                    self.optional_as_nullable.append(child)
                    self.clause(child, "required", "decoder", f"{self._who()} needs every field: this optional field "
                                "is sent as required and nullable, and a null reply is read as absent (its default)")
            else:
                self.optional += 1
                self.clause(child, "required", "decoder", "optional: the decoder may leave it out (its default applies)",
                            False)
            out_props[name] = compiled
        out["type"] = "object"
        out["properties"] = out_props
        out["required"] = sent_required
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) or extra is True:  # dict[str, T] or dict[str, any]: any keys
            if p.closed_objects:
                self.unsendable(path, "additionalProperties", f"{self._who()} needs additionalProperties: false on "
                                "every object, so an object with any keys (dict[str, T]) cannot be sent", extra)
            elif p.removes("additionalProperties") or p.inline_refs:
                self.unsendable(path, "additionalProperties", f"{self._who()} needs named properties: an object with "
                                "any keys (dict[str, T]) cannot be sent", extra)
            else:
                out["additionalProperties"] = (self.walk(extra, f"{path}/{WILDCARD}", depth, stack)
                                               if extra is not True else True)
        elif extra is False:
            why = p.removes("additionalProperties")
            if why:
                self.clause(path, "additionalProperties", "after_reply", why, False)
            else:
                out["additionalProperties"] = False
                self.clause(path, "additionalProperties", "decoder", "the decoder writes no other keys", False)
        elif p.closed_objects:
            out["additionalProperties"] = False  # the contract ignores other keys anyway: nothing is lost

    def _count_values(self, path: str, key: str, values: Any) -> None:
        """Count an enum's (or a const's) values and characters for the profile's bounds; an enum of many values
        past the profile's `large_enum` characters is not representable here."""
        values = values if key == "enum" and isinstance(values, list) else [values]
        chars = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in values)
        self.chars += chars
        if key != "enum":
            return
        self.enum_values += len(values)
        large = self.profile.large_enum
        if large is not None and len(values) > large[0] and chars > large[1]:
            self.unsendable(path, "enum", f"an enum of {len(values)} values has {chars:,} characters; {self._who()} "
                                          f"allows at most {large[1]:,} for an enum of more than {large[0]} values",
                            len(values))

    def _keyword(self, key: str, value: Any, node: dict[str, Any], out: dict[str, Any], path: str) -> None:
        p = self.profile
        why = p.removes(key)
        if why is None and key == "pattern" and isinstance(value, str):
            why = self._pattern_problem(value)
        if why is None and key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") and p.int_only_bounds \
                and node.get("type") != "integer":
            why = f"{self._who()} enforces numeric bounds only on integers"
        if why is None and key == "minItems" and p.min_items_max is not None and isinstance(value, int) \
                and value > p.min_items_max:
            why = f"{self._who()} supports minItems of 0 or 1 only"
        if why is None and key not in _SENDABLE:
            why = f"'{key}' is not sent to any provider; the contract's type checks it"
        if why is None:
            out[key] = value
            self.clause(path, key, "decoder", "the decoder keeps to it", value)
        else:
            self.clause(path, key, "after_reply", why, value)

    def _pattern_problem(self, pattern: str) -> str | None:
        if needs_backtracking(pattern):
            return "look-around and back-references cannot be decoded by a grammar"
        if self.profile.simple_patterns_only and ("\\b" in pattern or "\\B" in pattern):
            return f"{self._who()} supports simple patterns only (no \\b, look-around or back-references)"
        if not _anchored(pattern):
            return ("an unanchored pattern means 'contains a match', while constrained decoding matches the whole "
                    "string: anchor it with ^...$ to have the decoder enforce it")
        return None

    def _who(self) -> str:
        return {"openai": "OpenAI strict mode", "anthropic": "Anthropic's structured-output mode",
                "gemini": "Gemini's response schema", "guided": "grammar-based decoding"}.get(self.profile.name,
                                                                                           self.profile.name)

    def limits(self, root: dict[str, Any]) -> None:
        """The whole-schema limits of the profile (after the walk)."""
        p = self.profile
        if p.object_root and root.get("type") != "object":
            self.unsendable("", "type", f"{self._who()} needs an object at the top; this output type is "
                                        f"{_kind(root)}", root.get("type"))
        for count, limit, what in ((self.properties, p.max_properties, "properties"),
                                   (self.optional, p.max_optional, "optional fields"),
                                   (self.unions, p.max_unions, "union-typed fields"),
                                   (self.enum_values, p.max_enum_values, "enum values")):
            if limit is not None and count > limit:
                self.unsendable("", "schema", f"the type has {count} {what}; {self._who()} allows at most {limit}", count)
        chars = self.chars + sum(len(name) for name in self.kept_defs)  # the definition names sent
        if p.max_schema_chars is not None and chars > p.max_schema_chars:
            self.unsendable("", "schema", f"the type's property names, definition names, enum and const values have "
                                          f"{chars:,} characters; {self._who()} allows at most {p.max_schema_chars:,}",
                            chars)
        clash = sorted(set(self.optional_as_nullable) & set(self.required_nullable))
        if clash:
            self.unsendable(clash[0], "required", "two types of a union name the same field, once optional and once "
                            "nullable: a null could not be told apart from an absent field", clash[0])


_SENDABLE = frozenset({"pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
                       "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "format"})


def _admits_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_admits_null(o) for o in schema.get("anyOf", []) if isinstance(o, dict)) or not schema


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema or null; annotations stay outside the union."""
    outer = {k: schema[k] for k in _KEPT_ANNOTATIONS if k in schema}
    inner = {k: v for k, v in schema.items() if k not in _KEPT_ANNOTATIONS}
    if "anyOf" in inner and len(inner) == 1:
        return {**outer, "anyOf": [*inner["anyOf"], dict(NULL)]}
    return {**outer, "anyOf": [inner, dict(NULL)]}


def _kind(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return "a union"
    kind = schema.get("type")
    return f"{'an' if str(kind)[:1] in 'aeiou' else 'a'} {kind}" if kind else "any JSON value"


def _resolve_root(schema: dict[str, Any]) -> dict[str, Any]:
    """The root with a top-level $ref (pydantic's shape for recursive models) followed, for the root checks."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        return defs.get(ref.rsplit("/", 1)[-1], {})
    return schema


def compile_schema(schema: dict[str, Any], model: str | None, requested: Requested | Choice = "auto",
                   api_base: str | None = None) -> CompiledSchema:
    """Compile an output type's JSON Schema (pydantic's) for `model`'s profile in the mode chosen for it: the
    profile's schema transform.

    `requested` is the caller's choose_mode answer (the runtime's, with what it learnt), or a mode asked for,
    which choose_mode decides from the profile alone (the analyzer's case). `api_base` tells an OpenAI-compatible
    server from OpenAI itself. A schema the profile cannot represent falls back here, whatever was chosen.
    """
    choice = requested if isinstance(requested, Choice) else choose_mode(requested, model, api_base)
    profile = choice.profile
    if choice.mode != "json_schema":
        return _without_schema(choice.mode, profile, schema, choice.fallback_reason)
    compiler = _Compiler(schema, profile)
    root = compiler.walk(schema, "", 0, ())
    ref = root.get("$ref")
    if isinstance(ref, str):  # a recursive type at the top: its body is the root, and stays under $defs for its uses
        root = dict(compiler.kept_defs[ref.rsplit("/", 1)[-1]])
    compiler.limits(root)
    unsendable = [c for c in compiler.clauses if c.enforcement == "not_representable"]
    if unsendable:
        why = "; ".join(dict.fromkeys(c.reason for c in unsendable))
        json_mode = profile.json_mode and choice.json_fallback
        mode: Mode = "json_object" if json_mode and _resolve_root(schema).get("type") == "object" else "off"
        fallen = _without_schema(mode, profile, schema, why)
        return CompiledSchema(fallen.mode, False, None, (*unsendable, *fallen.clauses), (), why, profile.name,
                              profile.source)
    if compiler.kept_defs:
        root["$defs"] = compiler.kept_defs
    return CompiledSchema("json_schema", profile.strict, root, tuple(compiler.clauses),
                          tuple(compiler.optional_as_nullable), None, profile.name, profile.source,
                          tuple(compiler.recursion_points))


def _without_schema(mode: Mode, profile: ProviderProfile, schema: dict[str, Any], why: str | None) -> CompiledSchema:
    """No schema sent: JSON mode guarantees a JSON object at most; every other clause is checked after the reply."""
    probe = _Compiler(schema, _CHECK_ONLY)
    probe.walk(schema, "", 0, ())
    reason = f"no schema is sent (structured output: {mode}): the contract's type checks it after the reply"
    clauses = []
    for c in probe.clauses:
        if mode == "json_object" and c.path == "" and c.keyword == "type" and c.value == "object":
            clauses.append(Clause("", "type", "decoder", "JSON mode makes the reply a JSON object", "object"))
        else:
            clauses.append(Clause(c.path, c.keyword, "after_reply", reason, c.value))
    return CompiledSchema(mode, False, None, tuple(clauses), (), why, profile.name, profile.source)


# A profile that keeps every keyword: used only to list the clauses when no schema is sent.
_CHECK_ONLY = ProviderProfile(name="check", strict=False, source="")


def map_back(value: Any, compiled: CompiledSchema) -> Any:
    """Undo required + nullable: drop the nulls of optional fields, so the contract's own type fills their defaults."""
    if not compiled.optional_as_nullable:
        return value
    nullable = set(compiled.optional_as_nullable)
    reached = nullable | {ref for ref, _ in compiled.recursion_points}
    prefixes = {p[:i] for p in reached for i in range(len(p) + 1) if i == len(p) or p[i] == "/"}
    return _drop_nulls(value, "", nullable, prefixes, dict(compiled.recursion_points))


def _drop_nulls(value: Any, here: str, nullable: set[str], prefixes: set[str], again: dict[str, str]) -> Any:
    here = again.get(here, here)  # a recursive type's body again: its own paths apply
    if here not in prefixes:
        return value
    if isinstance(value, list):
        return [_drop_nulls(v, f"{here}/{WILDCARD}", nullable, prefixes, again) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        named = f"{here}/{_escape(key)}"
        child = named if named in prefixes or named in again else f"{here}/{WILDCARD}"
        if item is None and child in nullable:
            continue
        out[key] = _drop_nulls(item, child, nullable, prefixes, again)
    return out
