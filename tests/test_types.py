"""Type strings, the pydantic models built from declarations, and the schema text prompts show."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from contractstudio.documents.models import TypeDecl
from contractstudio.documents.type_syntax import (
    NONE,
    DictOf,
    ListOf,
    LiteralOf,
    Prim,
    Ref,
    TypeSyntaxError,
    Union,
    parse_type,
)
from contractstudio.documents.types import TypeBuildError, TypeSystem


@pytest.mark.parametrize(
    ("text", "expected", "canonical"),
    [
        ("str", Prim("str"), "str"),
        ("any", Prim("any"), "any"),
        ("Document", Ref("Document"), "Document"),
        ("list[Document]", ListOf(Ref("Document")), "list[Document]"),
        ("dict[str, int]", DictOf(Prim("int")), "dict[str, int]"),
        ("int | None", Union((Prim("int"), NONE)), "int | None"),
        ("Optional[str]", Union((Prim("str"), NONE)), "str | None"),
        ("Literal['a', 'b']", LiteralOf(("a", "b")), "Literal['a', 'b']"),
        ("list[dict[str, list[int]]] | None", Union((ListOf(DictOf(ListOf(Prim("int")))), NONE)), "list[dict[str, list[int]]] | None"),
    ],
)
def test_type_strings_parse_to_canonical_type_expressions(text: str, expected: object, canonical: str) -> None:
    t = parse_type(text)
    assert t == expected
    assert str(t) == canonical
    assert parse_type(str(t)) == t


@pytest.mark.parametrize(
    ("text", "offset"),
    [("list[", 5), ("list[str", 8), ("dict[int, str]", 0), ("Foo[int]", 3), ("str str", 4), ("Literal[x]", 8), ("", 0),
     ("int | ", 6), ("str$", 3)],
)
def test_malformed_type_strings_say_where(text: str, offset: int) -> None:
    with pytest.raises(TypeSyntaxError) as err:
        parse_type(text)
    assert err.value.offset == offset
    assert err.value.message


def decl(fields: dict, **kw: object) -> TypeDecl:
    return TypeDecl.model_validate({"fields": fields, **kw})


SYSTEM = TypeSystem.from_decls(
    {
        "Answer": decl(
            {
                "answer": {"type": "str", "description": "Concise answer.", "min_length": 1},
                "evidence": {"type": "list[Snippet]", "description": "Cited passages."},
                "coverage_score": {"type": "float", "ge": 0.0, "le": 1.0, "description": "Supported fraction."},
                "max_snippets": {"type": "int | None", "default": 3, "ge": 1, "le": 10},
                "confidence": {"type": "Literal['high', 'low']", "description": "How sure."},
                "json": {"type": "str", "default": "", "description": "A field whose name pydantic uses itself."},
            },
            extra="forbid",
            description="An answer with evidence.",
        ),
        "Snippet": decl({"doc_id": {"type": "str", "pattern": "^[A-Z][0-9]+$"}, "snippet": {"type": "str"}}),
        "Tree": decl({"label": {"type": "str"}, "children": {"type": "list[Tree]", "default": []}}),
        "Broken": decl({"x": {"type": "list["}, "y": {"type": "Missing"}}),
    }
)
GOOD = {"answer": "Yes.", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9, "confidence": "high"}


def test_models_validate_good_data_and_apply_defaults() -> None:
    out = SYSTEM.model("Answer").model_validate(GOOD)
    dumped = out.model_dump()
    assert dumped["max_snippets"] == 3
    assert dumped["json"] == ""
    assert dumped["evidence"] == [{"doc_id": "A1", "snippet": "s"}]


@pytest.mark.parametrize(
    "change",
    [
        {"coverage_score": 1.5},
        {"answer": ""},
        {"confidence": "medium"},
        {"max_snippets": 0},
        {"unexpected": 1},
        {"evidence": [{"doc_id": "lowercase", "snippet": "s"}]},
    ],
)
def test_models_enforce_constraints_literals_and_extra_forbid(change: dict) -> None:
    with pytest.raises(ValidationError):
        SYSTEM.model("Answer").model_validate({**GOOD, **change})


def test_missing_required_field_is_an_error_and_models_are_cached() -> None:
    model = SYSTEM.model("Answer")
    assert model is SYSTEM.model("Answer")
    with pytest.raises(ValidationError):
        model.model_validate({k: v for k, v in GOOD.items() if k != "answer"})


def test_recursive_types_build() -> None:
    tree = SYSTEM.model("Tree").model_validate({"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]})
    assert tree.model_dump()["children"][0]["children"][0]["label"] == "c"


def test_broken_field_types_are_any_for_expressions_but_never_validated_loosely() -> None:
    assert SYSTEM.field_type("Broken", "x") == Prim("any")
    assert SYSTEM.field_type("Broken", "y") == Ref("Missing")
    with pytest.raises(TypeBuildError, match="type 'Broken' cannot be built \\(field 'x'\\): its type 'list\\[' does not parse"):
        SYSTEM.model("Broken")


def test_schema_text_tells_fields_types_descriptions_and_constraints() -> None:
    text = SYSTEM.schema_text("Answer")
    assert "Answer: a JSON object (no other keys allowed): An answer with evidence." in text
    assert "- coverage_score (float, required, >= 0.0, <= 1.0): Supported fraction." in text
    assert "- max_snippets (int | None, optional, default 3, >= 1, <= 10)" in text
    assert "- answer (str, required, length >= 1): Concise answer." in text
    assert "confidence (Literal['high', 'low'], required)" in text
    assert "Snippet: a JSON object." in text  # referenced types are described too
    assert "must match the regular expression '^[A-Z][0-9]+$'" in text


def test_json_schema_uses_the_declared_field_names() -> None:
    schema = SYSTEM.json_schema("Answer")
    assert set(schema["properties"]) == {"answer", "evidence", "coverage_score", "max_snippets", "confidence", "json"}
    assert schema["properties"]["coverage_score"]["maximum"] == 1.0
    assert schema["additionalProperties"] is False


def test_lookups() -> None:
    assert SYSTEM.fields("Answer") is not None and "answer" in SYSTEM.fields(Ref("Answer"))
    assert SYSTEM.fields("Nope") is None and SYSTEM.fields(Prim("str")) is None
    assert SYSTEM.field_type("Answer", "evidence") == ListOf(Ref("Snippet"))


def test_deeply_nested_type_strings_are_refused_not_crashed_on() -> None:
    deep = "list[" * 5000 + "str" + "]" * 5000
    with pytest.raises(TypeSyntaxError) as err:
        parse_type(deep)
    assert "nests deeper" in err.value.message
    system = TypeSystem.from_decls({"A": decl({"x": {"type": deep}})})
    assert system.field_type("A", "x") == Prim("any")
