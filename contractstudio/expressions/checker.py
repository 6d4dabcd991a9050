"""Static checking of parsed expressions: the allowlist, names and field chains, types.

One walk does both jobs: the structural allowlist (EXP401) that makes an
expression safe to evaluate, and the type check against the declared types
(EXP201, EXP202, EXP301). Constant subexpressions are folded with the
evaluator's bounded operators, so a bomb spelled out in the file
(`9**9**9`, `'a' * 10**9`) is refused when the file is analyzed.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel

import contractstudio.expressions.allowlist as allowlist
import contractstudio.expressions.sandbox as sandbox
from contractstudio.documents.type_syntax import (
    ANY,
    NONE,
    DictOf,
    ListOf,
    LiteralOf,
    TypeExpr,
    Union,
    union_of,
    without_none,
)
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions.call_types import function_type, method_type
from contractstudio.expressions.kinds import BOOL, FLOAT, INT, STR, close_name, element_of, kind_of
from contractstudio.expressions.sandbox import ExpressionError
from contractstudio.expressions.syntax import ExprIssue, Parsed
from contractstudio.findings.diagnostics import declare, suggest

declare("EXP201", "unknown-field", "error", "An attribute that is not a field of its type (the hint suggests the closest field).")
declare("EXP202", "name-not-in-scope", "error", "A name that is not in scope (e.g. `output` in `pre`, `act` with no act).")
declare("EXP301", "type-mismatch", "warning", "A type mismatch an author would not intend (str compared with int, len() of a number).")
declare("EXP401", "forbidden-construct", "error", "A forbidden construct: `_` names, lambda, import, a call outside the allowlist.")

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
           ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_FORBIDDEN = {
    ast.Lambda: "lambda functions are not allowed",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.JoinedStr: "f-strings are not allowed in expressions (a message template does this)",
    ast.FormattedValue: "f-strings are not allowed in expressions",
    ast.Starred: "'*' unpacking is not allowed",
    ast.Await: "'await' is not allowed",
    ast.Yield: "'yield' is not allowed",
    ast.YieldFrom: "'yield from' is not allowed",
}
# Python's introspection attributes: refused on anything that is not a declared record field.
_INTROSPECTION = sandbox.INTROSPECTION
_DENIED_ATTRS = frozenset(
    "mro format format_map globals builtins subclasses bases base class dict code frame self encode decode "
    "maketrans translate expandtabs center ljust rjust zfill throw send with_traceback register system popen "
    "modules load_module exec_module loader getattr setattr eval exec compile".split()
)
# pydantic's own attributes: never reachable through a record, whatever its fields are called.
_MODEL_ATTRS = frozenset(n for n in dir(BaseModel) if not n.startswith("_"))
_NO_VALUE = object()


class Checker:
    """Walks one parsed expression; `typed=False` checks only the allowlist (for compile_expression)."""

    def __init__(self, parsed: Parsed, scope: dict[str, TypeExpr] | None, types: TypeSystem | None) -> None:
        self.p = parsed
        self.scope = dict(scope or {})
        self.typed = scope is not None
        self.types = types if types is not None else TypeSystem.from_decls({})
        self.issues: list[ExprIssue] = []
        self.meter = sandbox.Meter()
        self.loop_factor = 1
        self.loop_reported = False

    def issue(self, code: str, message: str, node: ast.AST | tuple[int, int], hint: str | None = None) -> None:
        start, end = node if isinstance(node, tuple) else self.p.span(node)
        if code in ("EXP201", "EXP202", "EXP301") and not self.typed:
            return
        self.issues.append(ExprIssue(code, message, start, end, hint))

    def run(self) -> TypeExpr:
        return self.visit(self.p.tree.body, self.scope)[0]

    # Each visit returns (type, folded constant or _NO_VALUE).
    def visit(self, node: ast.AST, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        for bad, why in _FORBIDDEN.items():
            if isinstance(node, bad):
                self.issue("EXP401", why, node)
                return ANY, _NO_VALUE
        method = getattr(self, "v_" + type(node).__name__, None)
        if method is None:
            self.issue("EXP401", f"'{type(node).__name__}' is not allowed in an expression", node)
            return ANY, _NO_VALUE
        return method(node, scope)

    def v_Constant(self, node: ast.Constant, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        v = node.value
        if v is None:
            return NONE, None
        if isinstance(v, bool):
            return BOOL, v
        if isinstance(v, int):
            return INT, v
        if isinstance(v, float):
            return FLOAT, v
        if isinstance(v, str):
            return STR, v
        self.issue("EXP401", f"{type(v).__name__} literals are not allowed", node)
        return ANY, _NO_VALUE

    def v_Name(self, node: ast.Name, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        name = node.id
        if name.startswith("_"):
            self.issue("EXP401", f"names starting with '_' are not allowed: '{name}'", node)
            return ANY, _NO_VALUE
        if not self.typed:
            return ANY, _NO_VALUE
        if name in scope:
            return scope[name], _NO_VALUE
        if name in allowlist.FUNCTIONS:
            self.issue("EXP401", f"'{name}' is a function: it can only be called, as {name}(...)", node)
            return ANY, _NO_VALUE
        names = sorted(n for n in scope if not n.startswith("_"))
        near = close_name(name, names)
        shown = ", ".join(names) if names else "nothing"
        self.issue("EXP202", f"name '{name}' is not in scope here (in scope: {shown})", node,
                   hint=suggest(near) if near else None)
        return ANY, _NO_VALUE

    def attr_span(self, node: ast.Attribute) -> tuple[int, int]:
        _, end = self.p.span(node)
        return max(0, end - len(node.attr)), end

    def v_Attribute(self, node: ast.Attribute, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        t, _ = self.visit(node.value, scope)
        return self.field(node, t), _NO_VALUE

    def field(self, node: ast.Attribute, t: TypeExpr) -> TypeExpr:
        name, where = node.attr, self.attr_span(node)
        if name.startswith("_"):
            self.issue("EXP401", f"attributes starting with '_' are not allowed: '{name}'", where)
            return ANY
        kind = kind_of(t, self.types)
        base = without_none(t)
        if kind == "record":
            options = base.options if isinstance(base, Union) else (base,)
            found = [ft for o in options if (ft := self.types.field_type(o, name)) is not None]
            if found:
                return union_of(found)
            fields = [f for o in options for f in (self.types.field_types(o) or {})]
            if name in _INTROSPECTION or name in _DENIED_ATTRS or name in _MODEL_ATTRS:
                self.issue("EXP401", f"'{name}' is a Python attribute, not a field; it is refused", where)
                return ANY
            near = close_name(name, fields)
            self.issue("EXP201", f"'{name}' is not a field of {base} (fields: {', '.join(fields) or 'none'})", where,
                       hint=suggest(near) if near else None)
            return ANY
        if name in _INTROSPECTION:  # never a sensible key, even of a mapping
            self.issue("EXP401", f"'{name}' is a Python attribute, not a field; it is refused", where)
            return ANY
        if kind == "dict":
            return base.value if isinstance(base, DictOf) else ANY
        if name in _DENIED_ATTRS:
            self.issue("EXP401", f"'{name}' is a Python attribute, not a field; it is refused", where)
            return ANY
        if kind == "any":
            return ANY
        if name in allowlist.METHOD_NAMES:
            self.issue("EXP301", f"'{name}' is a method: call it as .{name}(...)", where)
        else:
            self.issue("EXP201", f"a {base} value has no field '{name}'", where)
        return ANY

    def v_Subscript(self, node: ast.Subscript, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        t, value = self.visit(node.value, scope)
        if isinstance(node.slice, ast.Slice):
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is not None:
                    self.index_type(part, scope)
            return (t if kind_of(t, self.types) in ("str", "list") else ANY), _NO_VALUE
        it, iv = self.visit(node.slice, scope)
        kind = kind_of(t, self.types)
        if kind == "list":
            if kind_of(it, self.types) == "str":
                self.issue("EXP301", "a list index must be an int, not a str", node.slice)
            return element_of(t, self.types), _NO_VALUE
        if kind == "str":
            return STR, _NO_VALUE
        if kind == "dict":
            return without_none(t).value, _NO_VALUE  # type: ignore[union-attr]
        if kind in ("record", "num", "bool", "none"):
            self.issue("EXP301", f"a {without_none(t)} value cannot be indexed" + (" (use .field)" if kind == "record" else ""), node)
        return ANY, _NO_VALUE

    def index_type(self, node: ast.AST, scope: dict[str, TypeExpr]) -> None:
        t, _ = self.visit(node, scope)
        if kind_of(t, self.types) == "str":
            self.issue("EXP301", "a slice bound must be an int, not a str", node)

    def v_List(self, node: ast.List | ast.Tuple | ast.Set, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        results = [self.visit(e, scope) for e in node.elts]
        item = union_of([t for t, _ in results]) if results else ANY
        if all(v is not _NO_VALUE for _, v in results) and not isinstance(node, ast.Set):
            return ListOf(item), self.fold(node, lambda: self.meter.bounded([v for _, v in results]))
        return ListOf(item), _NO_VALUE

    v_Tuple = v_List
    v_Set = v_List

    def v_Dict(self, node: ast.Dict, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        values = []
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                self.issue("EXP401", "'**' unpacking is not allowed", v)
                continue
            self.visit(k, scope)
            values.append(self.visit(v, scope)[0])
        return DictOf(union_of(values) if values else ANY), _NO_VALUE

    def fold(self, node: ast.AST, compute: Any) -> Any:
        """Compute a constant with the evaluator's bounds; a bound exceeded is an EXP401 at the node."""
        try:
            return compute()
        except ExpressionError as err:
            if "too large" in err.message or "exceeded" in err.message or "too long" in err.message:
                self.issue("EXP401", f"resource limit: {err.message}", node)
            return _NO_VALUE
        except (ArithmeticError, ValueError, TypeError):
            return _NO_VALUE

    def v_BinOp(self, node: ast.BinOp, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        lt, lv = self.visit(node.left, scope)
        rt, rv = self.visit(node.right, scope)
        op = type(node.op)
        if op not in _BINOPS:
            self.issue("EXP401", f"operator '{type(node.op).__name__}' is not supported", node)
            return ANY, _NO_VALUE
        lk, rk = kind_of(lt, self.types), kind_of(rt, self.types)
        sym = _BINOPS[op]
        result: TypeExpr = ANY
        if op is ast.Mod and lk == "str":
            self.issue("EXP401", "'%' formatting of strings is not allowed (use a message template)", node)
            return STR, _NO_VALUE
        numeric = {"num", "bool"}
        if lk in numeric and rk in numeric:
            floaty = FLOAT in (without_none(lt), without_none(rt)) or op is ast.Div
            result = FLOAT if floaty else INT
        elif op is ast.Add and lk == rk and lk in ("str", "list"):
            result = lt if lk == "str" else union_of([without_none(lt), without_none(rt)])
        elif op is ast.Mult and {lk, rk} in ({"str", "num"}, {"list", "num"}):
            result = lt if lk in ("str", "list") else rt
        elif "any" in (lk, rk):
            result = ANY
        elif "none" in (lk, rk) or lk != rk or lk in ("str", "list", "record", "dict"):
            self.issue("EXP301", f"'{sym}' between {without_none(lt)} and {without_none(rt)} is a type mismatch", node)
        if lv is not _NO_VALUE and rv is not _NO_VALUE:
            return result, self.fold(node, lambda: sandbox.binary(op, lv, rv, self.meter))
        return result, _NO_VALUE

    def v_UnaryOp(self, node: ast.UnaryOp, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        t, v = self.visit(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return BOOL, (not v) if v is not _NO_VALUE else _NO_VALUE
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            self.issue("EXP401", "the '~' operator is not supported", node)
            return ANY, _NO_VALUE
        if kind_of(t, self.types) not in ("num", "bool", "any"):
            self.issue("EXP301", f"unary minus/plus of a {without_none(t)} value", node)
            return ANY, _NO_VALUE
        if isinstance(v, (int, float)):
            return t, (-v if isinstance(node.op, ast.USub) else +v)
        return t, _NO_VALUE

    def v_BoolOp(self, node: ast.BoolOp, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        ts = [self.visit(v, scope)[0] for v in node.values]
        if isinstance(node.op, ast.Or):  # `x or default`: the falsy None of x never comes out
            ts = [without_none(t) for t in ts[:-1]] + ts[-1:]
        return union_of(ts), _NO_VALUE

    def v_IfExp(self, node: ast.IfExp, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        self.visit(node.test, scope)
        return union_of([self.visit(node.body, scope)[0], self.visit(node.orelse, scope)[0]]), _NO_VALUE

    def v_Compare(self, node: ast.Compare, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        left, lv = self.visit(node.left, scope)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right, rv = self.visit(comp, scope)
            self.compare(node, op, left, right, lv, rv)
            left, lv = right, rv
        return BOOL, _NO_VALUE

    def compare(self, node: ast.Compare, op: ast.cmpop, lt: TypeExpr, rt: TypeExpr, lv: Any, rv: Any) -> None:
        lk, rk = kind_of(lt, self.types), kind_of(rt, self.types)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if lv is _NO_VALUE and rv is _NO_VALUE or (lv is not None and rv is not None):
                self.issue("EXP301", "'is' compares identity; use it only with None (x is None)", node)
            return
        if isinstance(op, (ast.In, ast.NotIn)):
            if rk == "str" and lk in ("num", "bool", "list", "record"):
                self.issue("EXP301", f"'in' a str needs a str on the left, not {without_none(lt)}", node)
            elif rk in ("num", "bool", "record"):
                self.issue("EXP301", f"'in' needs a str, list or dict on the right, not {without_none(rt)}", node)
            elif rk == "list":
                ik = kind_of(element_of(rt, self.types), self.types)
                if {lk, ik} == {"str", "num"}:
                    self.issue("EXP301", f"looking for a {without_none(lt)} in a {without_none(rt)}: never found", node)
            return
        if {lk, rk} == {"str", "num"} or {lk, rk} == {"str", "bool"}:
            self.issue("EXP301", f"comparing {without_none(lt)} with {without_none(rt)}"
                       + (" is always unequal" if isinstance(op, (ast.Eq, ast.NotEq)) else " fails at run time"), node)
            return
        if not isinstance(op, (ast.Eq, ast.NotEq)) and ({lk, rk} & {"record", "dict", "none"}) and "any" not in (lk, rk):
            self.issue("EXP301", f"{without_none(lt)} and {without_none(rt)} cannot be ordered", node)
            return
        for lit, other in ((without_none(lt), rv), (without_none(rt), lv)):
            if isinstance(lit, LiteralOf) and isinstance(other, str) and other not in lit.values and isinstance(op, (ast.Eq, ast.NotEq)):
                allowed = ", ".join(repr(v) for v in lit.values)
                near = close_name(other, [v for v in lit.values if isinstance(v, str)])
                self.issue("EXP301", f"{other!r} is not one of the values {allowed}: the comparison never holds", node,
                           hint=suggest(near) if near else None)

    # -- comprehensions

    def v_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        inner, restore = self.generators(node, node.generators, scope)
        t = self.visit(node.elt, inner)[0]
        self.loop_factor = restore
        return ListOf(t), _NO_VALUE

    v_SetComp = v_ListComp
    v_GeneratorExp = v_ListComp

    def v_DictComp(self, node: ast.DictComp, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        inner, restore = self.generators(node, node.generators, scope)
        self.visit(node.key, inner)
        t = self.visit(node.value, inner)[0]
        self.loop_factor = restore
        return DictOf(t), _NO_VALUE

    def generators(self, node: ast.AST, gens: list[ast.comprehension], scope: dict[str, TypeExpr]) -> tuple[dict[str, TypeExpr], int]:
        inner = dict(scope)
        restore = self.loop_factor
        for gen in gens:
            if gen.is_async:
                self.issue("EXP401", "'async for' is not allowed", gen.iter)
            it, iv = self.visit(gen.iter, inner)
            kind = kind_of(it, self.types)
            if kind in ("num", "bool", "record", "none"):
                self.issue("EXP301", f"cannot iterate over a {without_none(it)} value", gen.iter)
            if isinstance(iv, (str, list)):
                self.loop_factor *= max(1, len(iv))
                if self.loop_factor > sandbox.MAX_ITERATIONS and not self.loop_reported:
                    self.loop_reported = True
                    self.issue("EXP401", f"resource limit: the comprehension iterates more than {sandbox.MAX_ITERATIONS:,} times", node)
            self.bind(gen.target, element_of(it, self.types), inner)
            for cond in gen.ifs:
                self.visit(cond, inner)
        return inner, restore

    def bind(self, target: ast.AST, t: TypeExpr, inner: dict[str, TypeExpr]) -> None:
        if isinstance(target, ast.Name):
            if target.id.startswith("_"):
                self.issue("EXP401", f"names starting with '_' are not allowed: '{target.id}'", target)
            inner[target.id] = t
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, ANY, inner)
        else:
            self.issue("EXP401", "a comprehension variable must be a plain name", target)

    # -- calls

    def v_Call(self, node: ast.Call, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        func = node.func
        for kw in node.keywords:
            if kw.arg is None:
                self.issue("EXP401", "'**' unpacking is not allowed", kw.value)
        if isinstance(func, ast.Name) and func.id in allowlist.FUNCTIONS and func.id not in scope:
            args = [self.visit(a, scope) for a in node.args]
            for kw in node.keywords:
                if kw.arg is not None and kw.arg not in allowlist.FUNCTION_KEYWORDS.get(func.id, set()):
                    self.issue("EXP401", f"{func.id}() takes no keyword argument '{kw.arg}'", kw.value)
                self.visit(kw.value, scope)
            return self.function(node, func.id, args), _NO_VALUE
        if isinstance(func, ast.Attribute):
            if func.attr.startswith("_") or func.attr not in allowlist.METHOD_NAMES:
                near = None if func.attr.startswith("_") else close_name(func.attr, sorted(allowlist.METHOD_NAMES))
                hint = suggest(near) if near else "allowed methods: " + ", ".join(sorted(allowlist.METHOD_NAMES))
                if func.attr in ("format", "format_map"):
                    hint = "a `message` template formats values: \"{output.score:.2f}\""
                self.issue("EXP401", f"calling method '{func.attr}' is not allowed", self.attr_span(func), hint=hint)
                self.visit(func.value, scope)
                for a in node.args:
                    self.visit(a, scope)
                return ANY, _NO_VALUE
            recv, _ = self.visit(func.value, scope)
            args = [self.visit(a, scope) for a in node.args]
            if node.keywords:
                self.issue("EXP401", "methods take positional arguments only", node.keywords[0].value)
            return self.method(func, recv, args), _NO_VALUE
        what = f"'{func.id}'" if isinstance(func, ast.Name) else "this"
        if isinstance(func, ast.Lambda) or (isinstance(func, ast.Name) and func.id.startswith("_")):
            self.visit(func, scope)  # reports the lambda or the '_' name itself
        else:
            near = close_name(func.id, list(allowlist.FUNCTIONS)) if isinstance(func, ast.Name) else None
            self.issue("EXP401", f"calling {what} is not allowed: only allowlisted functions and methods can be called", func,
                       hint=suggest(near) if near else "allowed functions: " + ", ".join(allowlist.FUNCTIONS))
        for a in node.args:
            self.visit(a, scope)
        return ANY, _NO_VALUE

    def function(self, node: ast.Call, name: str, args: list[tuple[TypeExpr, Any]]) -> TypeExpr:
        """The type of a call to an allowlisted function (editing's recorder hooks here to see every call)."""
        return function_type(self, node, name, args)

    def method(self, func: ast.Attribute, recv: TypeExpr, args: list[tuple[TypeExpr, Any]]) -> TypeExpr:
        return method_type(self, func, recv, args)
