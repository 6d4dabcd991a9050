"""The escape corpus: known attacks on Python sandboxes (simpleeval and asteval advisories, CTF
pyjails, format-string tricks, resource bombs). Every one must be refused when the file is
analyzed (EXP401 / EXP101 / EXP202) AND when it is compiled or evaluated (ExpressionError),
and must never hang (pytest-timeout fails a hung case; no timing is asserted)."""

from __future__ import annotations

import pytest

from contractstudio.documents.models import TypeDecl
from contractstudio.documents.type_syntax import Ref
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions import ExpressionError, check, check_template, compile_expression, render_template

TYPES = TypeSystem.from_decls(
    {
        "Doc": TypeDecl.model_validate({"fields": {"id": {"type": "str"}, "content": {"type": "str"}}}),
        "In": TypeDecl.model_validate(
            {"fields": {"query": {"type": "str"}, "documents": {"type": "list[Doc]"}, "meta": {"type": "dict[str, any]", "default": {}}}}
        ),
    }
)
SCOPE = {"input": Ref("In")}
REFUSED_AT_ANALYSIS = {"EXP401", "EXP101", "EXP202"}


def values(query: str = "what?") -> dict[str, object]:
    return {"input": TYPES.model("In").model_validate({"query": query, "documents": [{"id": "A", "content": "text"}], "meta": {"k": 1}})}


ATTACKS = [
    # dunder chains to object.__subclasses__ and friends
    "().__class__.__bases__[0].__subclasses__()",
    "''.__class__.__mro__[1].__subclasses__()",
    "[].__class__.__base__.__subclasses__()",
    "input.__class__",
    "input.__dict__",
    "input.query.__class__.__mro__",
    "input.documents[0].__init__.__globals__",
    "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()._module.__builtins__",
    "input.__reduce__()",
    "input.__reduce_ex__(2)",
    "input.query.__getattribute__('x')",
    "input.query.__len__()",
    "input.documents.__len__",
    "set.__subclasses__()",
    "len.__self__",
    "max.__module__",
    "input.query.strip.__globals__",
    "input.query.split.__self__",
    "''.join.__class__",
    "input.meta.__class__",
    # frames and code objects of generators, coroutines, tracebacks, functions
    "(x for x in []).gi_frame.f_globals",
    "(x for x in []).gi_frame.f_back.f_globals",
    "(x for x in []).gi_code",
    "(x for x in []).cr_frame",
    "(x for x in []).ag_frame",
    "input.tb_frame",
    "input.f_builtins",
    "input.meta.f_globals",
    "input.func_globals",
    "input.query.mro()",
    "input.model_fields",
    "input.model_config",
    "input.model_dump()",
    # builtins that are not on the allowlist
    "getattr(input, '__class__')",
    "eval('1+1')",
    "exec('import os')",
    "__import__('os').system('id')",
    "__import__",
    "open('/etc/passwd').read()",
    "type(input)",
    "vars(input)",
    "globals()",
    "locals()",
    "compile('1', 'x', 'eval')",
    "setattr(input, 'query', 'x')",
    "delattr(input, 'query')",
    "print(1)",
    "breakpoint()",
    "__builtins__",
    "__builtins__['eval']('1')",
    "input.query if __debug__ else 1",
    "sorted([3, 2, 1], reverse=__import__('os'))",
    "min([], default=__import__('os'))",
    "sorted(input.documents, key=lambda d: d.__class__)",
    # format-string attribute access
    "'{0.__class__}'.format(input)",
    "'{0.__init__.__globals__}'.format(input)",
    "'{x.__class__}'.format_map({'x': 1})",
    "str.format('{0.__class__}', 1)",
    "f'{input.__class__}'",
    "f'{1:>999999999}'",
    "'%s' % input",
    "'%999999999d' % 1",
    # syntax that is not an expression, or not allowed in one
    "(lambda: 1)()",
    "(lambda x: x)(1)",
    "(x := 1)",
    "import os",
    "(yield)",
    "[*input.documents]",
    "{**input.meta}",
    "len(*input.documents)",
    "~input",
    "1 << 10**9",
    # mutating or padding methods
    "input.documents.append(1)",
    "input.documents.pop()",
    "input.documents.clear()",
    "input.meta.update(a=1)",
    "input.meta.setdefault('a', 1)",
    "input.query.encode()",
    "input.query.ljust(10**9)",
    "input.query.zfill(10**9)",
    "'x'.center(10**9)",
    "'\\t'.expandtabs(10**9)",
    # resource bombs
    "9**9**9",
    "10**10**10",
    "-(9**9**9)",
    "2**100000",
    "10**6000 * 10**6000",
    "'a'*10**9",
    "'a'*(10**6 + 1)",
    "[1]*10**9",
    "[1]*(2**40)",
    "[[1]*1000]*1000*1000",
    "[[[0]*100]*100]*100",
    "[x for x in 'a'*1000 for y in 'a'*1000]",
    "[[y for y in 'a'*500] for x in 'a'*500]",
    "[x for x in [1]*100000 for y in [1]*100000]",
    "matches(input.query, '(a+)+$')",
    "matches(input.query, '(a|aa)*$')",
    "matches(input.query, '(.*a){20}')",
    "matches(input.query, 'a'*600)",
]


def test_the_corpus_is_large_and_has_no_duplicates() -> None:
    assert len(ATTACKS) >= 50
    assert len(set(ATTACKS)) == len(ATTACKS)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("src", ATTACKS)
def test_attack_is_refused_at_analysis(src: str) -> None:
    _, issues = check(src, SCOPE, TYPES)
    codes = {i.code for i in issues}
    assert codes & REFUSED_AT_ANALYSIS, f"not refused: {src!r} -> {issues}"
    for i in issues:
        assert 0 <= i.start < i.end <= len(src) + 1


@pytest.mark.timeout(10)
@pytest.mark.parametrize("src", ATTACKS)
def test_attack_is_refused_at_evaluation(src: str) -> None:
    with pytest.raises(ExpressionError) as err:
        compile_expression(src).evaluate(values())
    assert str(err.value)


TEMPLATE_ATTACKS = [
    "{input.__class__}",
    "{input!r}",
    "{input.query!s}",
    "{input.query:{input.query}}",
    "{input.query:>999999999}",
    "{input.query:.999999999}",
    "{0.__class__}",
    "{input.query.format(1)}",
    "{__import__('os')}",
    "{getattr(input, 'query')}",
    "{'a'*10**9}",
    "{(x for x in []).gi_frame}",
    "unclosed {input.query",
    "stray } brace",
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("msg", TEMPLATE_ATTACKS)
def test_template_attack_is_refused_at_analysis_and_rendering(msg: str) -> None:
    issues = check_template(msg, SCOPE, TYPES)
    assert {i.code for i in issues} & {"EXP401", "EXP501"}, issues
    with pytest.raises(ExpressionError):
        render_template(msg, values())


# Bombs whose size depends on the data: analysis cannot know, evaluation must stay bounded.
DATA_BOMBS = [
    ("[x for x in input.query for y in input.query for z in input.query]", "q" * 1000),
    ("input.query * 10**6", "q" * 100),
    ("(input.query * 1000).replace('', input.query)", "q" * 1000),
    ("round(1, -10**9)", "q"),
    ("str(9**9999)", "q"),
    ("int(input.query)", "9" * 5000),
    ("matches(input.query, input.query)", "(a+)+$"),
    ("sum([[1]], [])", "q"),
    ("input.query.split() * 10**6", "a b c d"),
    ("sorted(input.query * 10**6)", "xy"),
    ("[[a for a in input.query] for b in input.query]", "q" * 450),
    ("'-'.join([input.query] * 1000)", "q" * 5000),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("src", "query"), DATA_BOMBS, ids=[src for src, _ in DATA_BOMBS])
def test_data_dependent_bombs_are_bounded_at_evaluation(src: str, query: str) -> None:
    with pytest.raises(ExpressionError):
        compile_expression(src).evaluate(values(query))


def test_attribute_access_reads_data_never_python_attributes() -> None:
    # A mapping key that looks like an attribute is data; the methods of dict stay unreachable by name.
    data = {"input": {"items": [1, 2], "keys": "k"}}
    assert compile_expression("input.keys").evaluate(data) == "k"
    assert compile_expression("input['items']").evaluate(data) == [1, 2]
    with pytest.raises(ExpressionError):
        compile_expression("input.values").evaluate(data)


# Work done in C by one node (scan, compare, copy) is charged too: quadratic loops over big data stop.
BIG = {"input": {"big": list(range(100_000)), "other": list(range(100_000)), "text": "ab" * 50_000}}
QUADRATIC = [
    "[x in input.big for x in input.big]",
    "[max(input.big) for x in input.big]",
    "[sorted(input.big) for x in input.big]",
    "[input.big == input.other for x in input.big]",
    "[input.text.count('a') for x in input.big]",
    "[input.text[1:] for x in input.big]",
    "[input.text * 10 for x in input.big]",
    "[len(list(input.big)) for x in input.big]",
    "[all(input.big) for x in input.big]",
    "['a' in input.text for x in input.big for y in input.big]",
    "[1 for a, b in [input.big, input.other]]",
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("src", QUADRATIC)
def test_quadratic_work_over_big_data_is_bounded(src: str) -> None:
    with pytest.raises(ExpressionError):
        compile_expression(src).evaluate(BIG)


def test_realistic_work_over_big_data_is_allowed() -> None:
    assert compile_expression("len([x for x in input.big if x % 2 == 0])").evaluate(BIG) == 50_000
    assert compile_expression("max(input.big) + min(input.other)").evaluate(BIG) == 99_999
    assert compile_expression("input.text.count('a')").evaluate(BIG) == 50_000
