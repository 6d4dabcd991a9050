"""The expression language: what the checker reports (codes, positions, hints) and what evaluation returns."""

from __future__ import annotations

import pytest

from contractstudio.documents.models import TypeDecl
from contractstudio.documents.type_syntax import ListOf, Prim, Ref
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions import ExpressionError, check, check_template, compile_expression, render_template

TYPES = TypeSystem.from_decls(
    {
        "Doc": TypeDecl.model_validate({"fields": {"id": {"type": "str"}, "content": {"type": "str"}}}),
        "In": TypeDecl.model_validate(
            {"fields": {"query": {"type": "str"}, "documents": {"type": "list[Doc]"}, "max_snippets": {"type": "int | None", "default": 3}}}
        ),
        "Out": TypeDecl.model_validate(
            {
                "fields": {
                    "answer": {"type": "str"},
                    "score": {"type": "float"},
                    "confidence": {"type": "Literal['high', 'medium', 'low']"},
                    "data": {"type": "dict[str, any]", "default": {}},
                    "tags": {"type": "list[str]", "default": []},
                }
            }
        ),
    }
)
SCOPE = {"input": Ref("In"), "output": Ref("Out")}


def issues(src: str, scope: dict = SCOPE) -> list[tuple[str, str]]:
    """(code, the source text the issue points at)."""
    return [(i.code, src[i.start : i.end]) for i in check(src, scope, TYPES)[1]]


@pytest.mark.parametrize(
    ("src", "type_text"),
    [
        ("input.query.strip() != ''", "bool"),
        ("len(input.documents) > 0", "bool"),
        ("[d.content for d in input.documents]", "list[str]"),
        ("input.max_snippets or 3", "int"),
        ("output.score >= 0.55", "bool"),
        ("output.data.anything.deeper", "any"),
        ("output.answer.count('?') == 1 or output.answer == 'COMPLETE'", "bool"),
        ("sum([len(d.content) for d in input.documents]) / 2", "float"),
        ("{d.id: d.content for d in input.documents}", "dict[str, str]"),
        ("matches(output.answer, '^[A-Z]')", "bool"),
        ("sorted(output.tags, reverse=True)[:3]", "list[str]"),
        ("output.confidence in ['high', 'medium']", "bool"),
        ("input.query\n  .strip()\n  .lower()", "str"),
    ],
)
def test_valid_expressions_have_no_issues_and_a_type(src: str, type_text: str) -> None:
    t, found = check(src, SCOPE, TYPES)
    assert found == []
    assert str(t) == type_text


def test_unknown_field_points_at_the_field_with_a_did_you_mean_hint() -> None:
    t, found = check("output.scor >= 0.5", SCOPE, TYPES)
    assert [(i.code, i.start, i.end, i.hint) for i in found] == [("EXP201", 7, 11, "did you mean 'score'?")]
    assert "fields: answer, score" in found[0].message


def test_name_not_in_scope() -> None:
    assert issues("output.answer != ''", {"input": Ref("In")}) == [("EXP202", "output")]
    found = check("inptu.query", SCOPE, TYPES)[1]
    assert found[0].hint == "did you mean 'input'?"


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("output.answer > 3", [("EXP301", "output.answer > 3")]),
        ("len(output.score) > 0", [("EXP301", "len(output.score)")]),
        ("output.answer + 1", [("EXP301", "output.answer + 1")]),
        ("output.confidence == 'hgh'", [("EXP301", "output.confidence == 'hgh'")]),
        ("output.score.strip()", [("EXP301", "strip")]),
        ("output.answer.lenght", [("EXP201", "lenght")]),
        ("input.documents[0].contnet", [("EXP201", "contnet")]),
        ("[d.idd for d in input.documents]", [("EXP201", "idd")]),
        ("output.score in output.answer", [("EXP301", "output.score in output.answer")]),
    ],
)
def test_type_mismatches_and_unknown_fields(src: str, expected: list) -> None:
    assert issues(src) == expected


@pytest.mark.parametrize(
    ("src", "at"),
    [("len(input", "("), ("output.score >=", "="), ("a b", "a"), ("output.score ==\n  == 3", "=")],
)
def test_syntax_errors_point_inside_the_expression(src: str, at: str) -> None:
    (code, text), = issues(src)
    assert code == "EXP101" and text == at


def test_positions_are_characters_not_bytes_on_multi_line_expressions() -> None:
    src = "output.answer != 'é' and\n  output.scor > 0"
    (i,) = check(src, SCOPE, TYPES)[1]
    assert src[i.start : i.end] == "scor"


def model_values() -> dict:
    return {
        "input": TYPES.model("In").model_validate({"query": " Hi? ",
                                                   "documents": [{"id": "A1", "content": "alpha"}, {"id": "B2", "content": "beta"}]}),
        "output": TYPES.model("Out").model_validate({"answer": "Why?", "score": 0.75, "confidence": "high",
                                                     "data": {"k": [1, 2]}, "tags": ["b", "a"]}),
    }


@pytest.mark.parametrize(
    ("src", "value"),
    [
        ("input.query.strip()", "Hi?"),
        ("[d.id for d in input.documents if 'a' in d.content]", ["A1", "B2"]),
        ("input.max_snippets or 3", 3),
        ("output.data.k[1] + 1", 3),
        ("output.data['k']", [1, 2]),
        ("sorted(output.tags)", ["a", "b"]),
        ("output.answer.count('?') == 1", True),
        ("max(len(d.content) for d in input.documents)", 5),
        ("round(output.score * 100)", 75),
        ("output.score if output.score > 1 else -1", -1),
        ("not output.tags", False),
        ("{d.id: len(d.content) for d in input.documents}", {"A1": 5, "B2": 4}),
        ("matches(input.query, '\\\\?\\\\s*$')", True),
        ("', '.join(output.tags)", "b, a"),
        ("output.data.get('missing', 0)", 0),
        ("1 < 2 < 3 and 3 > 2", True),
        ("str(output.score) + '!'", "0.75!"),
        ("[k for k, v in output.data.items()]", ["k"]),
        ("input.documents[-1].id", "B2"),
        ("input.query[1:3]", "Hi"),
        ("output.confidence is not None", True),
    ],
)
def test_evaluation(src: str, value: object) -> None:
    assert compile_expression(src).evaluate(model_values()) == value


@pytest.mark.parametrize(
    ("src", "words"),
    [
        ("output.nope", "not a field of Out"),
        ("1 / 0", "division by zero"),
        ("input.documents[5]", "out of range"),
        ("output.answer > 3", "cannot order str and int"),
        ("missing_name", "'missing_name' is not defined"),
        ("len(output.score)", "len() of a float value"),
        ("output.data.nokey", "no key 'nokey'"),
        ("int('x')", "invalid literal"),
    ],
)
def test_evaluation_errors_are_clear_expression_errors(src: str, words: str) -> None:
    with pytest.raises(ExpressionError) as err:
        compile_expression(src).evaluate(model_values())
    assert words in str(err.value)


def test_expressions_also_evaluate_on_plain_dicts() -> None:
    assert compile_expression("input.a.b + 1").evaluate({"input": {"a": {"b": 1}}}) == 2


def test_compiled_expression_knows_its_free_names() -> None:
    assert compile_expression("len(output.evidence) <= act.n and all(x for x in input.xs)").names == {"output", "act", "input", "x"} - {"x"}


def test_message_templates_render_with_format_specs_and_escaped_braces() -> None:
    msg = "Coverage {output.score:.2f} is below {0.8:.0%}; {len(input.documents)} docs {{not a field}} {output.data}"
    assert check_template(msg, SCOPE, TYPES) == []
    assert render_template(msg, model_values()) == "Coverage 0.75 is below 80%; 2 docs {not a field} {'k': [1, 2]}"


def test_template_placeholders_may_contain_colons_inside_brackets_and_not_equal() -> None:
    msg = "{input.query[1:3]!=''} and {output.data.get('k', [])[0]:>3}"
    assert check_template(msg, SCOPE, TYPES) == []
    assert render_template(msg, model_values()) == "True and   1"


@pytest.mark.parametrize(
    ("msg", "code", "at"),
    [
        ("Score {output.scor:.2f}", "EXP501", "scor"),
        ("Score {output.score", "EXP501", "{output.score"),
        ("a } b", "EXP501", "}"),
        ("{output.score!r}", "EXP501", "!r"),
        ("{output.score:{output.score}}", "EXP501", "{output.score:{output.score}}"),
        ("{output.score:.9999f}", "EXP501", ".9999f"),
        ("{}", "EXP501", "{}"),
        ("{output.__class__}", "EXP401", "__class__"),
        ("{output.answer > 1}", "EXP301", "output.answer > 1"),
    ],
)
def test_template_problems_point_inside_the_message(msg: str, code: str, at: str) -> None:
    found = check_template(msg, SCOPE, TYPES)
    assert [(i.code, msg[i.start : i.end]) for i in found][:1] == [(code, at)]


def test_check_type_of_list_comprehension_over_any_is_list_of_any() -> None:
    t, found = check("[x for x in output.data]", SCOPE, TYPES)
    assert found == [] and t == ListOf(Prim("str"))


# ----------------------------------------------------------------- robustness

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(
    ["input", "output", ".", "query", "score", "answer", "data", "(", ")", "[", "]", "{", "}", ":", ",", " ", "'a'", '"b"',
     "1", "0", "-", "+", "*", "**", "/", "%", "==", "<", "not ", " and ", " or ", " if ", " else ", " for ", " in ", "x",
     "len", "sorted", "matches", "__class__", "lambda", ":=", "!r", "\n", "9", "e5", "'(a+)+'", "[1]*", "get", "strip()"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=14).map("".join) | st.text(max_size=40))
def test_any_text_is_checked_and_evaluated_without_an_internal_error(src: str) -> None:
    t, found = check(src, SCOPE, TYPES)
    assert all(i.code.startswith("EXP") and 0 <= i.start <= i.end for i in found)
    check_template(src, SCOPE, TYPES)
    try:
        compile_expression(src).evaluate(model_values())
    except ExpressionError:
        pass
    try:
        render_template(src, model_values())
    except ExpressionError:
        pass
