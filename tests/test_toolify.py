"""cs.toolify (seed 003): contracts run before the tool, the exact failure text, backward compatibility."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

import contractstudio as cs

CALLS: list[str] = []


def title_not_empty(title: str, content: str) -> tuple[bool, str]:
    if not title.strip():
        return False, "Title cannot be empty"
    return True, ""


def content_is_valid_markdown(title: str, content: str) -> tuple[bool, str]:
    if content.count("[") != content.count("]"):
        return False, "Invalid markdown: Missing closing bracket on line 5"
    return True, ""


def raises(title: str, content: str) -> tuple[bool, str]:
    raise ValueError("vault is locked")


@cs.toolify(description="Create a new note with the given title and content.",
            preconditions=[title_not_empty], postconditions=[content_is_valid_markdown])
def create_note(title: str, content: str) -> str:
    """Create a new note."""
    CALLS.append(title)
    return f"Created note: {title}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def test_tool_runs_when_every_contract_passes() -> None:
    assert create_note("Ideas", "some [link]") == "Created note: Ideas"
    assert CALLS == ["Ideas"]


def test_both_sections_exact_format_and_tool_not_run() -> None:
    out = create_note("  ", "broken [link")
    assert out == (
        "Contract validation failed:\n"
        "Preconditions:\n"
        "  - Title cannot be empty\n"
        "Postconditions:\n"
        "  - Invalid markdown: Missing closing bracket on line 5"
    )
    assert CALLS == []


def test_a_section_without_failures_is_left_out() -> None:
    assert create_note("", "fine") == "Contract validation failed:\nPreconditions:\n  - Title cannot be empty"
    assert create_note("T", "[") == "Contract validation failed:\nPostconditions:\n  - Invalid markdown: Missing closing bracket on line 5"
    assert CALLS == []


def test_postconditions_run_before_the_tool_even_when_preconditions_fail() -> None:
    seen: list[str] = []

    def pre(x: int) -> tuple[bool, str]:
        seen.append("pre")
        return False, "pre failed"

    def post(x: int) -> tuple[bool, str]:
        seen.append("post")
        return True, ""

    @cs.toolify(preconditions=[pre], postconditions=[post])
    def tool(x: int) -> int:
        seen.append("tool")
        return x

    assert "pre failed" in tool(1)
    assert seen == ["pre", "post"]


def test_a_raising_contract_is_listed_in_its_section_and_the_others_still_run() -> None:
    @cs.toolify(preconditions=[raises, title_not_empty], postconditions=[content_is_valid_markdown])
    def tool(title: str, content: str) -> str:
        return "ran"

    assert tool("", "[") == ("Contract validation failed:\nPreconditions:\n  - Tool Failed: ValueError: vault is locked\n"
                             "  - Title cannot be empty\nPostconditions:\n"
                             "  - Invalid markdown: Missing closing bracket on line 5")


def test_contracts_get_keyword_and_positional_arguments() -> None:
    assert create_note(title="", content="x").startswith("Contract validation failed:")
    assert create_note("A", content="b") == "Created note: A"


def test_exception_without_message_names_its_class() -> None:
    def bad(x: int) -> tuple[bool, str]:
        raise KeyError()

    @cs.toolify(preconditions=[bad])
    def tool(x: int) -> int:
        return x

    assert tool(1) == "Contract validation failed:\nPreconditions:\n  - Tool Failed: KeyError"


def test_false_without_text_names_the_contract() -> None:
    def no(x: int) -> tuple[bool, str]:
        return False, ""

    @cs.toolify(preconditions=[no])
    def tool(x: int) -> int:
        return x

    assert tool(1) == "Contract validation failed:\nPreconditions:\n  - no failed"


def test_a_contract_returning_anything_but_bool_and_str_is_a_failed_contract() -> None:
    def bare_true(x: int) -> bool:
        return True

    def nothing(x: int) -> None:
        return None

    def three(x: int) -> tuple[bool, str, int]:
        return True, "", 1

    def text_first(x: int) -> tuple[str, str]:
        return "yes", ""

    @cs.toolify(preconditions=[bare_true, nothing], postconditions=[three, text_first])
    def tool(x: int) -> int:
        CALLS.append("ran")
        return x

    assert tool(1) == (
        "Contract validation failed:\nPreconditions:\n"
        "  - precondition 'bare_true' returned True; a contract returns (bool, str)\n"
        "  - precondition 'nothing' returned None; a contract returns (bool, str)\n"
        "Postconditions:\n"
        "  - postcondition 'three' returned (True, '', 1); a contract returns (bool, str)\n"
        "  - postcondition 'text_first' returned ('yes', ''); a contract returns (bool, str)")
    assert CALLS == []


def test_string_arguments_are_converted_to_the_annotated_types_before_the_contracts_run() -> None:
    seen: list[tuple[object, ...]] = []

    def record(count: int, ratio: float, flag: bool, tags: list[str], scores: dict[str, int],
               note: str = "") -> tuple[bool, str]:
        seen.append((count, ratio, flag, tags, scores, note))
        return True, ""

    @cs.toolify(preconditions=[record])
    def tool(count: int, ratio: float, flag: bool, tags: list[str], scores: dict[str, int], note: str = "") -> str:
        return f"{count + 1} {ratio * 2} {not flag} {len(tags)} {sum(scores.values())} {note!r}"

    assert tool("41", "1.5", "yes", "['a', 'b']", '{"x": 1, "y": 2}', note=7) == "42 3.0 False 2 3 '7'"
    assert seen == [(41, 1.5, True, ["a", "b"], {"x": 1, "y": 2}, "7")]
    assert tool(41, 1.5, "off", ["a"], {"x": 1}) == "42 3.0 True 1 1 ''"  # typed values pass unchanged


class Point(BaseModel):
    x: int
    y: int


def test_pydantic_models_optional_and_unannotated_parameters() -> None:
    @cs.toolify()
    def tool(p: Point, limit: int | None = None, raw=None) -> str:
        return f"{p.x + p.y} {limit} {raw!r}"

    assert tool('{"x": "1", "y": 2}', None, "[1]") == "3 None '[1]'"  # no annotation: the text as given
    assert tool(Point(x=1, y=1), limit="4") == "2 4 None"


def test_an_argument_that_does_not_convert_is_reported_and_nothing_runs() -> None:
    seen: list[str] = []

    def pre(n: int, items: list[int]) -> tuple[bool, str]:
        seen.append("pre")
        return True, ""

    @cs.toolify(preconditions=[pre])
    def tool(n: int, items: list[int]) -> int:
        seen.append("tool")
        return n

    assert tool("not_a_number", "[1, 2, x") == (
        "Contract validation failed:\nPreconditions:\n"
        "  - argument 'n' = \"not_a_number\": Input should be a valid integer, unable to parse string as an integer\n"
        "  - argument 'items' = \"[1, 2, x\": Input should be a valid list")
    assert tool("1") == "Contract validation failed:\nPreconditions:\n  - missing required argument 'items' (list[int])"
    assert tool("1", "[]", color="red") == (
        "Contract validation failed:\nPreconditions:\n  - unexpected argument 'color' (parameters: n, items)")
    assert seen == []


def test_the_result_is_returned_as_text() -> None:
    @cs.toolify()
    def echo(value: object) -> object:
        return value

    assert echo(None) == "Tool execution completed without errors"
    assert echo(42) == "42" and echo(2.5) == "2.5" and echo(True) == "True"
    assert echo({"name": "é", "n": [1, 2]}) == '{\n  "name": "é",\n  "n": [\n    1,\n    2\n  ]\n}'
    assert echo((1, 2)) == "(1, 2)"
    assert echo({1, 2}) == "{1, 2}"
    long = "a" * 10_000 + "b" * 5_000 + "c" * 10_000
    cut = echo(long)
    assert cut.startswith("a" * 8000) and cut.endswith("c" * 8000) and "b" not in cut
    assert "tool result truncated" in cut and len(cut) < len(long)


def test_an_exception_raised_by_the_tool_is_the_text_returned() -> None:
    @cs.toolify()
    def divide(a: int, b: int) -> float:
        return a / b

    out = divide("1", "0")
    assert out.startswith("Tool Failed: ZeroDivisionError: division by zero\nTraceback:\n")
    assert "return a / b" in out and "runtime/toolify.py" not in out  # the tool's own frames, not ours


def test_a_secret_in_a_tool_error_is_redacted_before_the_llm_sees_it() -> None:
    @cs.toolify()
    def leak() -> str:
        raise RuntimeError("bad key sk-proj-abcdefghijklmnopqrstuvwx")

    out = leak()
    assert out.startswith("Tool Failed: RuntimeError: bad key ***") and "abcdefghijklmnop" not in out


def test_backward_compatible_forms_are_tools_with_the_same_name_and_description() -> None:
    def plain(a: int, b: int = 2) -> int:
        """Add."""
        if a < 0:
            raise ValueError("negative")
        return a + b

    for decorated in (cs.toolify()(plain), cs.toolify("Adds two numbers.")(plain), cs.toolify(plain),
                      cs.toolify(None, [], [])(plain)):
        assert decorated("1") == "3"
        assert decorated(a=1, b=5) == "6"
        assert decorated(-1).startswith("Tool Failed: ValueError: negative")
        assert decorated.__name__ == "plain"
    assert cs.toolify("Adds two numbers.")(plain).__doc__ == "Adds two numbers."
    assert cs.toolify()(plain).description == "Add."
    assert create_note.description == "Create a new note with the given title and content."

    def no_docstring(x: int) -> int:
        return x

    assert cs.toolify()(no_docstring).__doc__ == "Execute no docstring"


TOOLS_YAML = """\
kind: tools
name: notes
tools:
  - name: create_note
    description: Create a new note with the given title and content.
    params:
      title: {type: str, description: Note title.}
      content: {type: str, description: Markdown body.}
    preconditions:
      - assert: title.strip() != ""
        message: Title cannot be empty
    postconditions:
      - python: "notes_hooks_for_test:content_is_valid_markdown"
    handler: "notes_hooks_for_test:create_note"
  - name: check_only
    params:
      n: {type: int, description: A number.}
    preconditions:
      - assert: n > 0
        message: "n must be positive, got {n}"
"""

HOOKS_PY = """\
CREATED = []

def content_is_valid_markdown(title, content):
    if content.count("[") != content.count("]"):
        return False, "Invalid markdown: Missing closing bracket on line 5"
    return True, ""

def create_note(title, content):
    CREATED.append(title)
    return f"Created note: {title}"
"""


@pytest.fixture
def tools_file(tmp_path):
    (tmp_path / "notes.tools.yaml").write_text(TOOLS_YAML)
    (tmp_path / "notes_hooks_for_test.py").write_text(HOOKS_PY)
    return tmp_path / "notes.tools.yaml"


def test_tools_file_gives_the_same_contracts(tools_file) -> None:
    tools = cs.load(tools_file, trust=True)
    assert tools.call("create_note", title=" ", content="[x") == (
        "Contract validation failed:\nPreconditions:\n  - Title cannot be empty\n"
        "Postconditions:\n  - Invalid markdown: Missing closing bracket on line 5"
    )
    import notes_hooks_for_test

    assert notes_hooks_for_test.CREATED == []
    assert tools["create_note"](title="Plan", content="ok") == "Created note: Plan"
    assert notes_hooks_for_test.CREATED == ["Plan"]
    assert tools.call("check_only", n=-2) == "Contract validation failed:\nPreconditions:\n  - n must be positive, got -2"
    assert tools.call("check_only", n=2) is None  # no handler: the contracts passed, nothing ran
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        tools.call("nope")


def test_tools_file_hooks_refused_when_untrusted(tools_file) -> None:
    tools = cs.load(tools_file)
    assert tools.call("check_only", n=1) is None  # expressions need no trust
    with pytest.raises(cs.ContractError, match="runs? only in a trusted workspace"):
        tools.call("create_note", title="A", content="b")


def test_tools_as_plain_functions(tools_file) -> None:
    import inspect

    fns = cs.load(tools_file, trust=True).functions()
    create = fns["create_note"]
    assert create.__name__ == "create_note" and create.__doc__ == "Create a new note with the given title and content."
    assert list(inspect.signature(create).parameters) == ["title", "content"]
    assert create(title="", content="x") == "Contract validation failed:\nPreconditions:\n  - Title cannot be empty"


TAGGED_YAML = """\
kind: tools
name: notes
tools:
  - name: tag_note
    description: Tag a note.
    params:
      title: {type: str, min_length: 1, description: Note title.}
      tags: {type: "list[str]", default: [], description: Tags to add.}
      limit: {type: "int | None", default: 3, ge: 1, description: At most this many tags.}
    preconditions:
      - assert: len(tags) <= (limit or 3)
        message: "At most {limit} tags, got {len(tags)}"
      - assert: title.strip() == title
        message: Title has surrounding spaces
"""


@pytest.fixture
def tagged(tmp_path):
    (tmp_path / "tags.tools.yaml").write_text(TAGGED_YAML)
    return cs.load(tmp_path / "tags.tools.yaml")


def test_omitted_optional_parameters_get_their_defaults(tagged) -> None:
    assert tagged.call("tag_note", title="Plan") is None  # `tags` and `limit` take their defaults
    assert tagged.call("tag_note", title="Plan", tags=["a", "b"], limit=1) == (
        "Contract validation failed:\nPreconditions:\n  - At most 1 tags, got 2")


def test_missing_or_wrong_arguments_are_precondition_failures_before_any_condition_runs(tagged) -> None:
    assert tagged.call("tag_note") == (
        "Contract validation failed:\nPreconditions:\n  - missing required argument 'title' (str)")
    assert tagged.call("tag_note", title=5, tags="a", limit=0, color="red") == (
        "Contract validation failed:\nPreconditions:\n"
        "  - argument 'title' = 5: Input should be a valid string\n"
        "  - argument 'tags' = \"a\": Input should be a valid list\n"
        "  - argument 'limit' = 0: Input should be greater than or equal to 1 (constraint: ge=1)\n"
        "  - unexpected argument 'color' (parameters: title, tags, limit)")
    assert tagged.call("tag_note", title="") == (
        "Contract validation failed:\nPreconditions:\n  - argument 'title' = \"\": String should have at least 1 character "
        "(constraint: min_length=1)")


def test_plain_functions_show_the_defaults(tagged) -> None:
    import inspect

    params = inspect.signature(tagged.functions()["tag_note"]).parameters
    assert [(p.name, p.default) for p in params.values()] == [("title", inspect.Parameter.empty), ("tags", []), ("limit", 3)]


def test_the_python_sample_tool_converts_text_arguments_and_lists_both_sections() -> None:
    import importlib.util

    from conftest import SAMPLES

    spec = importlib.util.spec_from_file_location("notes_tool_sample", SAMPLES / "python" / "notes_tool.py")
    assert spec is not None and spec.loader is not None
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    assert sample.create_note("Plan", "- #a #b", "2") == '{\n  "created": "Plan",\n  "lines": 1\n}'
    assert sample.create_note(" ", "[x #a #b", "1") == (
        "Contract validation failed:\nPreconditions:\n  - Title cannot be empty\n"
        "Postconditions:\n  - Invalid markdown: 1 unclosed bracket(s)\n  - At most 1 tags, got 2")
    assert sample.create_note("Plan", "again").startswith("Tool Failed: FileExistsError: a note titled 'Plan' exists already")
