"""A contract document with its facts: its type system, the types of its roles, the scopes of its expressions.

Scopes follow FORMAT.md: pre, act and fallback values see `input`; post sees
`output`, `input` and `act` (when there is an act). Each fact is computed on
first use and kept: the rules of analysis/rules/contract_*.py share them, and
the studio and editing help read them from the analysis result.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from contractstudio.analysis.loaded import (
    CheckedExpression,
    ConditionList,
    ExpressionSite,
    FieldSet,
    Hook,
    Loaded,
    TypeString,
    condition_sites,
)
from contractstudio.analysis.prefix_decidable import PrefixPlan, prefix_plan
from contractstudio.analysis.structure import OutputStructure, output_schema, output_structure
from contractstudio.documents.models import Contract
from contractstudio.documents.provider_profiles import REQUESTED
from contractstudio.documents.type_syntax import ANY, TypeExpr, TypeSyntaxError, parse_type
from contractstudio.documents.types import TypeSystem
from contractstudio.reading.dialects.symbolicai import NAME as SYMBOLICAI

if TYPE_CHECKING:
    from contractstudio.analysis.loaded import Scope

ROLES = ("input", "output", "intermediate")


def _plain_text(raw: str) -> bool:
    """Words, not code: the author meant a string literal and forgot the inner quotes."""
    text = raw.strip()
    return bool(text) and not any(c in text for c in "'\"()[]{}=<>") and (" " in text or text[:1].isupper())


def _type_string(path: tuple[Any, ...], text: str, label: str, ref_label: str) -> TypeString:
    try:
        return TypeString(path, text, label, parse_type(text), None, ref_label)
    except TypeSyntaxError as err:
        return TypeString(path, text, label, None, err, ref_label)


class LoadedContract(Loaded):
    """A validated `kind: contract` document and the facts its rules share."""

    @property
    def contract(self) -> Contract:
        """The validated model (rules run only on documents whose shape validated)."""
        return cast(Contract, self.model)

    @cached_property
    def types(self) -> TypeSystem:
        """The declared types, which roles, fields and expressions resolve against."""
        return TypeSystem.from_decls(self.contract.types)

    @cached_property
    def type_strings(self) -> list[TypeString]:
        """The roles' types (input, output, intermediate), then every declared field's type."""
        doc = self.contract
        found = [_type_string((role,), text, role, f"{role} type") for role in ROLES if (text := getattr(doc, role))]
        for tname, decl in doc.types.items():
            for fname, spec in decl.fields.items():
                label = f"type of field '{tname}.{fname}'"
                found.append(_type_string(("types", tname, "fields", fname, "type"), spec.type, label, label + ":"))
        return found

    @cached_property
    def role_types(self) -> dict[str, TypeExpr]:
        """The type of input, output and intermediate (`any` when missing or when it does not parse)."""
        parsed = {ts.path[0]: ts.parsed for ts in self.type_strings if len(ts.path) == 1}
        return {role: t if (t := parsed.get(role)) is not None else ANY for role in ROLES}

    @cached_property
    def output_type(self) -> str | None:
        """The declared type the output must be (None when the output is not a declared type)."""
        return self.types.declared(self.role_types["output"])

    @cached_property
    def structure(self) -> OutputStructure | None:
        """Who enforces each clause of the output type for the model (`check --model`, else `llm.model`), or None."""
        llm = self.contract.llm
        model = self.ctx.model or llm.model
        return output_structure(self.types, self.contract.output, model, getattr(llm, "structured_output", "auto"),
                                llm.api_base, written=getattr(llm, "response_format", None) is not None)

    @cached_property
    def prefix(self) -> PrefixPlan:
        """Which clauses a streaming reply's prefix decides (issue 37.2), under the structured-output mode in effect."""
        found = self.structure
        mode = found.compiled.mode if found is not None else "off"
        c = self.contract
        schema = output_schema(self.types, c.output) if c.output else None
        decoder = frozenset((x.path, x.keyword) for x in found.compiled.enforced_by("decoder")) if found else frozenset()
        return prefix_plan(schema, mode=mode, json_reply=c.json_reply, post=c.post, decoder=decoder)

    def no_structure(self) -> str:
        """Why `structure` is None, in words (`check --verbose`): no model named, or an output type with no schema."""
        llm = self.contract.llm
        model = self.ctx.model or llm.model
        if not model:
            return "no model named (llm.model or --model): prompt only"
        requested = getattr(llm, "structured_output", "auto")
        if requested not in REQUESTED:
            return f"llm.structured_output {requested!r} is not a mode (its finding says why): prompt only"
        return (f"the output type '{self.contract.output}' cannot be built (its finding says why): no structured output "
                f"with {model}")

    @cached_property
    def input_scope(self) -> Scope:
        """What pre conditions, act.assign and fallback values see: `input`."""
        return {"input": self.role_types["input"]}

    @cached_property
    def output_scope(self) -> Scope:
        """What post conditions see: `input`, `output`, and `act` when there is an act."""
        roles = self.role_types
        scope = {"input": roles["input"], "output": roles["output"]}
        if self.contract.act is not None:
            scope["act"] = roles["intermediate"] if self.contract.intermediate else ANY
        return scope

    @cached_property
    def condition_lists(self) -> list[ConditionList]:
        """`pre` and `post`."""
        return [ConditionList(("pre",), self.contract.pre, "pre"), ConditionList(("post",), self.contract.post, "post")]

    @cached_property
    def expression_sites(self) -> list[ExpressionSite]:
        """pre, post, act.assign, then the fallback values the analyzer checks (a fallback is used, a field of the output)."""
        doc, types = self.contract, self.types
        sites = condition_sites(doc.pre, self.input_scope, types) + condition_sites(doc.post, self.output_scope, types)
        if doc.act is not None:
            sites += [ExpressionSite(("act", "assign", name), src if isinstance(src, str) else str(src), self.input_scope, types)
                      for name, src in (doc.act.assign or {}).items()]
        if doc.on_failure == "fallback" and doc.fallback is not None:
            out = self.output_type
            fields = types.fields(out) if out else None
            for name, raw in doc.fallback.items():
                if fields is not None and name not in fields:
                    continue  # not a field of the output: CON103 says so, the value is not checked
                src = raw if isinstance(raw, str) else str(raw)
                plain = isinstance(raw, str) and _plain_text(raw)
                sites.append(ExpressionSite(("fallback", name), src, self.input_scope, types, plain_text=plain))
        return sites

    @cached_property
    def hooks(self) -> list[Hook]:
        """The `python:` hooks of pre and post conditions, then act.python."""
        if self.dialect == SYMBOLICAI:
            return []  # a Python class's pre / act / post are its own methods, not `module:function` hooks to import
        doc = self.contract
        found = [Hook(c.src + ("python",), c.python) for c in doc.pre + doc.post if c.python is not None]
        if doc.act is not None and doc.act.python is not None:
            found.append(Hook(("act", "python"), doc.act.python))
        return found

    @cached_property
    def field_sets(self) -> list[FieldSet]:
        """The fields of every declared type."""
        return [FieldSet(self.types, tname, ("types", tname, "fields")) for tname in self.contract.types]

    @cached_property
    def checked_at(self) -> dict[tuple[Any, ...], CheckedExpression]:
        """The checked expressions by document path."""
        return {c.site.path: c for c in self.checked_expressions}
