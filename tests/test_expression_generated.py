"""The source expressions/generated.py writes is ours only: no text of the expression ever reaches it.

Its value, errors, bounds and work charged are the tree walk's: tests/test_expression_closures.py compares the three
evaluators on the escape corpus, the data bombs, the samples' expressions and token soup.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_expression_closures import REALISTIC
from test_expression_sandbox import ATTACKS, DATA_BOMBS, QUADRATIC
from test_expressions import _PIECES

import contractstudio.expressions.generated as generated
import contractstudio.expressions.helpers as helpers
from contractstudio.expressions import ExpressionError, compile_expression

ROOT = Path(__file__).resolve().parent.parent

# Every identifier the generator may write: its helpers (the functions' globals), its locals, and the attributes it
# reads of the budget, the meter and the values it builds. Anything else in a source came from the expression.
OURS = set(helpers.GLOBALS) | {
    "_make", "_evaluate", "_env", "_b", "_s", "_it", "_d", "_m", "_err", "_w", "_x",  # its own locals
    "used", "limit", "refusal", "done", "bounded", "scan", "get", "append", "add",
} | {"def", "return", "if", "elif", "else", "not", "is", "None", "in", "and", "or", "for", "try", "except", "finally",
     "raise", "from", "as", "continue", "break", "pass", "True", "False"}
MADE = re.compile(r"_[tvk]\d+")  # a value, a comprehension variable, a constant of the table


def corpus() -> list[str]:
    import contractstudio as cs

    found = list(REALISTIC) + list(ATTACKS) + [src for src, _ in DATA_BOMBS] + list(QUADRATIC)
    for path in sorted((ROOT / "samples").glob("*.contract.yaml")):
        for contract in cs.load_all(path):
            for cond in [*contract.doc.pre, *contract.doc.post]:
                found += [src for src in (cond.assert_, cond.when) if src]
            if contract.doc.act is not None and contract.doc.act.assign:
                found += list(contract.doc.act.assign.values())
    return found


def written(src: str) -> tuple[str, list[object]] | None:
    """The generator's source for the expression's tree, allowlisted or not (an attack the allowlist refuses is
    written too, to show its text would not reach the source either); None when it is not Python or not written."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # token soup such as `1if`
            tree = ast.parse(src, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return generated.source_of(tree)
    except (generated.Unwritten, RecursionError):
        return None


def assert_ours(source: str) -> None:
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME:
            assert tok.string in OURS or MADE.fullmatch(tok.string), (tok.string, source)
            assert not keyword.iskeyword(tok.string) or tok.string in OURS
        elif tok.type == tokenize.NUMBER:
            assert tok.string.isdigit(), (tok.string, source)  # step counts and our `_MAX + 2`
        else:
            assert tok.type not in (tokenize.STRING, tokenize.ERRORTOKEN), (tok.string, source)


@pytest.mark.parametrize("src", corpus())
def test_no_text_of_the_expression_reaches_the_source(src: str) -> None:
    made = written(src)
    if made is not None:
        assert_ours(made[0])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_no_text_of_token_soup_reaches_the_source(src: str) -> None:
    made = written(src)
    if made is not None:
        assert_ours(made[0])


def test_names_fields_strings_and_numbers_go_through_the_table() -> None:
    src = ("[zzname.zzfield for zzname in zzinput.zzlist if zzname.zzflag != 'zz\\'quote'] + [123456789, 0.5e-3] "
           "if zzinput.zzother.startswith('zzprefix') else {'zzkey': -987654321}")
    source, constants = generated.source_of(ast.parse(src, mode="eval").body)
    assert_ours(source)
    for text in ("zz", "123456789", "987654321", "0.5", "quote"):
        assert text not in source
    # (the comprehension's variable is a local `_v`: its name is needed nowhere)
    assert {"zzfield", "zzinput", "zzlist", "zzflag", "zz'quote", 123456789, 0.0005, "zzprefix", "zzkey",
            987654321} <= set(constants)


def test_an_expression_is_written_as_one_function_once_it_is_evaluated_again_and_again() -> None:
    """Its first evaluations run on the closures (cheap to build: an analysis evaluates most expressions once or
    twice); then `evaluate` runs the generated function, and a condition keeps it."""
    from contractstudio.documents.models import Condition as WrittenCondition
    from contractstudio.expressions.language import WARM_EVALUATIONS
    from contractstudio.runtime.conditions import Check

    check = Check(WrittenCondition.model_validate({"assert": "len(input.zz_warm) > 1"}), "post")
    expr = check.test
    assert expr is not None
    for _ in range(WARM_EVALUATIONS):
        assert expr.evaluator().__code__.co_filename != "<contractstudio expression>" and not expr.settled
        assert check.evaluate({"input": {"zz_warm": [1, 2]}}) == (True, True, None)
    assert expr.settled and expr.evaluator().__code__.co_filename == "<contractstudio expression>"
    assert check.evaluate({"input": {"zz_warm": [1]}})[1] is False
    assert check._runs == (None, expr.evaluator())  # kept once settled


def test_the_generated_functions_see_only_our_helpers() -> None:
    expr = compile_expression("len(input.documents) > 0")
    run = generated.build(expr.tree)
    assert run is not None
    assert run.__code__.co_filename == "<contractstudio expression>"  # the generated function, not the closures
    assert run.__globals__ is helpers.GLOBALS and helpers.GLOBALS["__builtins__"] == {}
    assert all(not callable(cell.cell_contents) or cell.cell_contents in helpers.GLOBALS.values()
               or cell.cell_contents is generated.allowlist.FUNCTIONS["len"] for cell in run.__closure__ or ())


def test_the_samples_and_the_realistic_expressions_are_generated() -> None:
    """The comparisons of test_expression_closures.py run the generated form for these, not the closures' fallback."""
    unwritten = []
    for src in corpus():
        try:
            expr = compile_expression(src)
        except ExpressionError:
            continue
        if generated.build(expr.tree) is None:
            unwritten.append(src)
    # Only a comprehension unpacking into several names is left to the closures.
    assert unwritten and all(re.search(r"for \w+, \w+ in", src) for src in unwritten), unwritten


def test_a_field_the_policy_refuses_is_refused_by_the_generated_function_itself() -> None:
    """Even a tree the allowlist never lets through (the checker refuses these first) reads fields only through
    get_field's policy: no Python attribute, no introspection key, no `_` name."""
    record = compile_expression("input").evaluate({"input": {"k": 1}})
    for src in ("input.__class__", "input._x", "input.gi_frame", "input.f_globals", "input.k.__class__", "input.mro",
                "input.query.__len__", "_secret"):
        run = generated.build(ast.parse(src, mode="eval").body)
        assert run is not None
        with pytest.raises(ExpressionError):
            run({"input": {"k": 1, "gi_frame": 1, "f_globals": 2}, "_secret": 3})
    assert record == {"k": 1}


SHAPES = [
    "[x + 1 for x in input.b if x > 0]", "[s.strip() for d in input.d for s in d.split('.') if s.strip()]",
    "all(e in [f for f in input.b] for e in input.b)", "1 < input.a < 3 < len(input.b) + 5",
    "input.a and input.c.strip() or input.b", "{k: v for k in input.b for v in input.d if k}",
    "input.c.strip() != '' and len(input.d) > 0", "[[y] for y in input.d] + [input.b, input.c]",
]
DATA = {"input": {"a": 1, "b": [1, 2, 3], "c": " a.b ", "d": [" x.y ", "", "z"]}}


def test_every_bound_falls_where_the_walk_s_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps added several at once, iterations and work counted in locals, measures written inline: at every value of
    each bound the generated function gives the walk's error (or value) and charges the walk's work."""
    from test_expression_closures import bound_steps, same

    import contractstudio.expressions.sandbox as sandbox

    for bound in range(1, 45):
        with monkeypatch.context() as patch:
            bound_steps(patch, bound)
            for src in SHAPES:
                same(src, DATA)
    for bound in range(1, 12):
        with monkeypatch.context() as patch:
            patch.setattr(sandbox, "MAX_ITERATIONS", bound)
            patch.setitem(helpers.GLOBALS, "_MAXIT", bound)
            for src in SHAPES:
                same(src, DATA)
    for bound in range(1, 40):
        with monkeypatch.context() as patch:
            patch.setattr(sandbox, "MAX_WORK", bound)
            patch.setitem(helpers.GLOBALS, "_MAXWORK", bound)
            for src in SHAPES:
                same(src, DATA)
    for bound in range(0, 12):
        with monkeypatch.context() as patch:
            patch.setattr(sandbox, "MAX_SIZE", bound)
            patch.setitem(helpers.GLOBALS, "_MAXSIZE", bound)
            for src in SHAPES:
                same(src, DATA)
