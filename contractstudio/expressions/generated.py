"""An allowlisted expression compiled to ONE Python function of ours: the closures' semantics, without a call per node.

A contracted call evaluates its contract's few expressions again and again, and the closures (closures.py) still pay a
Python call per node, a meter made per evaluation and a wrapper around it. Here each tree is written once as the
source of one function, made of our own templates only:

- no text of the expression is ever put in the source: every name, field name, constant and operator the author
  wrote is an entry of the function's table of constants (`_k0`, `_k1`, ... are cells of the function that makes
  it), and every identifier in the source is ours (`_t1` a value, `_v1` a comprehension variable, the helpers of
  helpers.GLOBALS); the only numbers are step counts (tests/test_expression_generated.py tokenizes every source);
- the function runs with helpers.GLOBALS as its globals, which holds no builtins: it can call nothing but the helpers
  named there (the sandbox's own operations: `get_field`, `subscript`, `binary`, `compare`, `call_method`, the
  allowlisted functions);
- it does what the closures do, node by node in the tree walk's order: a field is read through `get_field`'s own
  table first and else `get_field` itself, values are measured by the same `Meter`, made only once something needs
  it. The steps and iterations are counted in locals: the steps of nodes entered one after another with nothing in
  between are added at once, and when they cross the bound the count is set where the walk's stops (bound + 2:
  the walk counts the step that raises) before the walk's error, so the error and the work charged to the call's
  budget are the walk's at every bound.

A tree with a node or shape not written here (or too large or deep for it) is run by the closures instead.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import contractstudio.expressions.allowlist as allowlist
from contractstudio.expressions.helpers import GLOBALS
from contractstudio.expressions.writing import Source, bounded, metered, truth_test, work

Evaluate = Callable[[dict[str, Any]], Any]

MAX_NODES = 400  # a larger tree is run by the closures: its source would cost more to compile than it saves

_ORDER = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}  # our operator text, chosen by the node's type
_SYMBOL = {**_ORDER, ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


class Unwritten(Exception):
    """A node or shape this module does not write: the closures run the tree."""


class _Writer:
    def __init__(self) -> None:
        self.w = Source()

    def expr(self, node: ast.AST, scope: dict[str, str]) -> str:
        """Write `node`'s evaluation; returns the name holding its value. `scope`: comprehension names -> locals."""
        method = getattr(self, f"n_{type(node).__name__}", None)
        if method is None:
            raise Unwritten(type(node).__name__)
        return method(node, scope)

    def n_Constant(self, node: ast.Constant, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        value = node.value
        if value is None or isinstance(value, (bool, int, float, str)):
            return w.constant(value)
        w.line(f"raise _literal({w.constant(value)})")
        return w.temp()

    def n_Name(self, node: ast.Name, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        if node.id.startswith("_"):
            w.line(f"raise _hidden({w.constant(node.id)})")
            return w.temp()
        if node.id in scope:
            return scope[node.id]
        t, k = w.temp(), w.constant(node.id)
        with w.block("try:"):
            w.line(f"{t} = _env[{k}]")
        with w.block("except _KeyError:"):
            w.line(f"raise _undefined({k}) from None")
        return t

    def n_Attribute(self, node: ast.Attribute, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        value = self.expr(node.value, scope)
        t, k = w.temp(), w.constant(node.attr)
        if node.attr.startswith("_"):  # refused by get_field
            w.line(f"{t} = _get_field({value}, {k})")
            return t
        # get_field's own first lookup (a record's declared field), else get_field itself
        w.line(f"{t} = _fields.get(_id(_type({value})))")
        with w.block(f"if {t} is not None:"):
            w.line(f"{t} = {t}.get({k})")
        w.line(f"{t} = _get_field({value}, {k}) if {t} is None else _getattr({value}, {t})")
        return t

    def n_Subscript(self, node: ast.Subscript, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        obj, t = self.expr(node.value, scope), w.temp()
        if isinstance(node.slice, ast.Slice):
            parts = [w.constant(None) if p is None else self.expr(p, scope)
                     for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            metered(w, f"{t} = _m.bounded(_subscript({obj}, _slice_of({parts[0]}, {parts[1]}, {parts[2]})))")
            return t
        index = self.expr(node.slice, scope)
        w.line(f"{t} = _subscript({obj}, {index})")
        return t

    def n_List(self, node: ast.List | ast.Tuple, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        items = [self.expr(e, scope) for e in node.elts]
        t = w.temp()
        w.line(f"{t} = [{', '.join(items)}]")
        bounded(w, t, known_list=True)
        return t

    n_Tuple = n_List

    def n_Set(self, node: ast.Set, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        t = w.temp()
        w.line(f"{t} = _set()")
        for e in node.elts:  # each element hashed as it comes, as the walk's set display does
            item = self.expr(e, scope)
            w.line(f"{t}.add({item})")
        metered(w, f"{t} = _m.bounded({t})")
        return t

    def n_Dict(self, node: ast.Dict, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        t = w.temp()
        w.line(f"{t} = {{}}")
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                refusal = w.constant("'**' unpacking is not allowed")
                w.line(f"raise _ExpressionError({refusal})")
                break
            value = self.expr(v, scope)  # `out[k] = v` evaluates the value first, as the walk's assignment does
            key = self.expr(k, scope)
            w.line(f"{t}[{key}] = {value}")
        metered(w, f"{t} = _m.bounded({t})")
        return t

    def n_BinOp(self, node: ast.BinOp, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        t = w.temp()
        metered(w, f"{t} = _binary({w.constant(type(node.op))}, {left}, {right}, _m)")
        return t

    def n_UnaryOp(self, node: ast.UnaryOp, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        value, t = self.expr(node.operand, scope), w.temp()
        if isinstance(node.op, ast.Not):
            w.line(f"{t} = not {truth_test(value)}")
        elif isinstance(node.op, (ast.USub, ast.UAdd)):
            with w.block(f"if not _isinstance({value}, _NUM):"):
                w.line(f"raise _unary_error({value})")
            w.line(f"{t} = {'-' if isinstance(node.op, ast.USub) else '+'}{value}")
        else:
            w.line(f"raise _unary_error({value})")
        return t

    def n_BoolOp(self, node: ast.BoolOp, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        t = w.temp()
        go_on = "if " if isinstance(node.op, ast.And) else "if not "  # `and` goes on past a true part, `or` a false one
        first = self.expr(node.values[0], scope)
        w.line(f"{t} = {first}")
        opened = 0
        for part in node.values[1:]:
            w.line(f"{go_on}{truth_test(t)}:")
            w.depth += 1
            opened += 1
            value = self.expr(part, scope)
            w.line(f"{t} = {value}")
        for _ in range(opened):
            w.flush()
            w.depth -= 1
        return t

    def n_IfExp(self, node: ast.IfExp, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        test, t = self.expr(node.test, scope), w.temp()
        with w.block(f"if {truth_test(test)}:"):
            w.line(f"{t} = {self.expr(node.body, scope)}")
        with w.block("else:"):
            w.line(f"{t} = {self.expr(node.orelse, scope)}")
        return t

    def n_Compare(self, node: ast.Compare, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        left, t = self.expr(node.left, scope), w.temp()
        w.line(f"{t} = False")
        opened = 0
        for index, (op, comp) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.expr(comp, scope)
            k = w.constant(op)
            order = _ORDER.get(type(op))
            with w.block(f"if _type({left}) in _SCALARS and _type({right}) in _SCALARS:"):
                if order is not None:  # numbers against a bound: the comparison itself
                    with w.block("try:"):
                        w.line(f"{t} = {left} {order} {right}")
                    with w.block("except _TypeError:"):
                        w.line(f"raise _order_error({left}, {right}) from None")
                else:
                    w.line(f"{t} = _compare({k}, {left}, {right})")
            symbol = _SYMBOL[type(op)]
            with w.block(f"elif _type({left}) is _str and _type({right}) is _str:"):  # operations.charge's for two str
                work(w, f"_len({right}) // 8 + 1" if isinstance(op, (ast.In, ast.NotIn))
                      else f"(_len({left}) if _len({left}) < _len({right}) else _len({right})) // 8 + 1")
                w.line(f"{t} = {left} {symbol} {right}")
            if isinstance(op, (ast.In, ast.NotIn)):
                with w.block(f"elif _type({right}) is _list:"):  # `x in xs`: a scan of the list
                    work(w, f"_len({right}) + 1")
                    w.line(f"{t} = {left} {symbol} {right}")
            with w.block("else:"):
                metered(w, f"_charge(_m, {k}, {left}, {right})")
                w.line(f"{t} = _compare({k}, {left}, {right})")
            if index < len(node.ops) - 1:  # a false link ends the chain; the next comparator is not evaluated
                w.line(f"if {t}:")
                w.depth += 1
                opened += 1
                left = right
        for _ in range(opened):
            w.flush()
            w.depth -= 1
        return t

    def _loops(self, gens: list[ast.comprehension], scope: dict[str, str], inner: Callable[[dict[str, str]], None]) -> None:
        """The walk's `loops`: one level per generator, each element evaluated before the next item is bound."""
        w = self.w
        gen, rest = gens[0], gens[1:]
        target = gen.target
        if not isinstance(target, ast.Name) or target.id.startswith("_"):
            raise Unwritten("a comprehension target that is not a plain name")
        source = self.expr(gen.iter, scope)
        var = f"_v{w.temps + 1}"
        w.temps += 1
        with w.block(f"if not _isinstance({source}, _ITERABLE):"):  # sandbox.iterate
            w.line(f"raise _not_iterable({source})")
        work(w, f"_len({source}) + 1")
        with w.block(f"for {var} in {source}:"):
            w.line("_it += 1")
            with w.block("if _it > _MAXIT:"):
                w.line("raise _iterations_exceeded()")
            scope = {**scope, target.id: var}
            for cond in gen.ifs:
                passed = self.expr(cond, scope)
                with w.block(f"if not {truth_test(passed)}:"):
                    w.line("continue")
            if rest:
                self._loops(rest, scope, inner)
            else:
                inner(scope)

    def n_ListComp(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp, scope: dict[str, str]) -> str:
        # Generator expressions are computed eagerly: no generator object (and no gi_frame) ever exists.
        w = self.w
        w.step()
        t = w.temp()
        add = "add" if isinstance(node, ast.SetComp) else "append"
        w.line(f"{t} = {'_set()' if add == 'add' else '[]'}")

        def element(inner: dict[str, str]) -> None:
            w.line(f"{t}.{add}({self.expr(node.elt, inner)})")

        self._loops(node.generators, scope, element)
        if add == "add":
            metered(w, f"{t} = _m.bounded({t})")
        else:
            bounded(w, t, known_list=True)
        return t

    n_GeneratorExp = n_SetComp = n_ListComp

    def n_DictComp(self, node: ast.DictComp, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        t = w.temp()
        w.line(f"{t} = {{}}")

        def element(inner: dict[str, str]) -> None:
            key = self.expr(node.key, inner)  # the key first, as a dict comprehension does
            value = self.expr(node.value, inner)
            w.line(f"{t}[{key}] = {value}")

        self._loops(node.generators, scope, element)
        metered(w, f"{t} = _m.bounded({t})")
        return t

    def n_Call(self, node: ast.Call, scope: dict[str, str]) -> str:
        w = self.w
        w.step()
        func = node.func
        args = [self.expr(a, scope) for a in node.args]
        t = w.temp()
        if isinstance(func, ast.Name) and func.id in allowlist.FUNCTIONS and func.id not in scope:
            fname = w.constant(func.id)
            with w.block(f"if {fname} in _env:"):
                w.line("raise _not_callable()")
            allowed = allowlist.FUNCTION_KEYWORDS.get(func.id, set())
            keywords = []
            for kw in node.keywords:
                if kw.arg is None or kw.arg not in allowed:
                    w.line(f"raise _no_keyword({fname})")
                    return t
                keywords.append(f"{w.constant(kw.arg)}: {self.expr(kw.value, scope)}")
            if func.id == "len" and len(args) == 1 and not keywords:  # allowlist's `_len`, whose int needs no measure
                with w.block(f"if _isinstance({args[0]}, _SIZED):"):
                    w.line(f"{t} = _len({args[0]})")
                with w.block("else:"):
                    w.line(f"raise _len_error({args[0]})")
                return t
            if func.id in ("all", "any") and len(args) == 1 and not keywords:  # allowlist's: each item's truth, in turn
                with w.block(f"if not _isinstance({args[0]}, _ITERABLE):"):  # sandbox.iterate
                    w.line(f"raise _not_iterable({args[0]})")
                work(w, f"_len({args[0]}) + 1")
                every = func.id == "all"
                w.line(f"{t} = {every}")  # our own True or False, chosen by the function's name
                with w.block(f"for _x in {args[0]}:"):
                    with w.block(f"if {'not ' if every else ''}{truth_test('_x')}:"):
                        w.line(f"{t} = {not every}")
                        w.line("break")
                return t
            fn = w.constant(allowlist.FUNCTIONS[func.id])
            call = f"{fn}(_m{''.join(', ' + a for a in args)}{', **{' + ', '.join(keywords) + '}' if keywords else ''})"
            with w.block("try:"):
                metered(w, f"{t} = {call}")
                bounded(w, t)
            with w.block("except _TypeError as _err:"):
                w.line(f"raise _call_error({fname}, _err) from None")
            return t
        if isinstance(func, ast.Attribute) and not node.keywords and func.attr in allowlist.METHOD_NAMES:
            receiver = self.expr(func.value, scope)
            method = w.constant(func.attr)
            on_str = allowlist.STR_METHODS.get(func.attr) if func.attr != "join" else None
            with w.block("try:"):
                if on_str is not None:  # call_method's own path for a str, the method looked up once
                    with w.block(f"if _isinstance({receiver}, _str):"):
                        work(w, f"_len({receiver}) // 8 + 1")  # Meter.scan of a str
                        w.line(f"{t} = {w.constant(on_str)}({receiver}{''.join(', ' + a for a in args)})")
                        bounded(w, t)
                    with w.block("else:"):
                        metered(w, f"{t} = _call_method({receiver}, {method}, [{', '.join(args)}], _m)")
                else:
                    metered(w, f"{t} = _call_method({receiver}, {method}, [{', '.join(args)}], _m)")
            with w.block("except _TypeError as _err:"):
                w.line(f"raise _call_error({method}, _err) from None")
            return t
        w.line("raise _not_callable()")
        return t


def source_of(tree: ast.AST) -> tuple[str, list[Any]]:
    """The source of the function that makes the evaluator of `tree`, and its table of constants (`_k0`, ...).

    Raises Unwritten for a tree this module does not write."""
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise Unwritten("too many nodes")
    writer = _Writer()
    result = writer.expr(tree, {})
    w = writer.w
    w.line(f"return {result}")
    names = ", ".join(f"_k{i}" for i in range(len(w.constants)))
    head = [
        f"def _make({names}):",
        "    def _evaluate(_env):",
        "        _b = _budget()",
        "        if _b is not None and _b.used > _b.limit:",
        "            raise _b.refusal()",
        "        _s = 0",
        "        _it = 0",
        "        _m = None",
        "        _d = 0",
        "        try:",
    ]
    tail = [
        "        except _ExpressionError:",
        "            raise",
        "        except _Exception as _err:",
        "            raise _describe(_err) from None",
        "        finally:",
        "            if _b is not None:",
        "                _b.used += _s + _it + (_d if _m is None or _d > _m.done else _m.done)",
        "                if _b.used > _b.limit:",
        "                    raise _b.refusal()",
        "    return _evaluate",
    ]
    return "\n".join(head + w.lines + tail) + "\n", w.constants


def build(tree: ast.AST) -> Evaluate | None:
    """The one function evaluating `tree` as `Expression.evaluate` does (budget, bounds, errors); None when this
    module does not write it (the closures run it)."""
    try:
        source, constants = source_of(tree)
        code = compile(source, "<contractstudio expression>", "exec")
    except (Unwritten, RecursionError, SyntaxError, MemoryError, ValueError):
        return None
    space: dict[str, Any] = {}
    exec(code, GLOBALS, space)  # our own source (see the module's docstring); it only defines `_make`
    made: Evaluate = space["_make"](*constants)
    return made
