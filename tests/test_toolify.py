"""cs.toolify (seed 003): contracts run before the tool, the exact failure text, backward compatibility."""

from __future__ import annotations

import pytest

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


def test_raising_contract_is_a_failure_with_its_message() -> None:
    @cs.toolify(preconditions=[raises, title_not_empty])
    def tool(title: str, content: str) -> str:
        return "ran"

    assert tool("", "x") == "Contract validation failed:\nPreconditions:\n  - vault is locked\n  - Title cannot be empty"


def test_contracts_get_keyword_and_positional_arguments() -> None:
    assert create_note(title="", content="x").startswith("Contract validation failed:")
    assert create_note("A", content="b") == "Created note: A"


def test_exception_without_message_names_its_class() -> None:
    def bad(x: int) -> tuple[bool, str]:
        raise KeyError()

    @cs.toolify(preconditions=[bad])
    def tool(x: int) -> int:
        return x

    assert tool(1) == "Contract validation failed:\nPreconditions:\n  - KeyError: "


def test_false_without_text_and_bare_bool_results() -> None:
    def no(x: int) -> bool:
        return False

    def yes(x: int) -> tuple[bool, str]:
        return True, ""

    @cs.toolify(preconditions=[yes, no])
    def tool(x: int) -> int:
        return x

    assert tool(1) == "Contract validation failed:\nPreconditions:\n  - no failed"


def test_backward_compatible_forms_behave_as_plain_tools() -> None:
    def plain(a: int, b: int = 2) -> int:
        """Add."""
        if a < 0:
            raise ValueError("negative")
        return a + b

    for decorated in (cs.toolify()(plain), cs.toolify("Adds two numbers.")(plain), cs.toolify(plain),
                      cs.toolify(None, [], [])(plain)):
        assert decorated(1) == 3
        assert decorated(a=1, b=5) == 6
        with pytest.raises(ValueError, match="negative"):
            decorated(-1)
        assert decorated.__name__ == "plain"
    assert cs.toolify("Adds two numbers.")(plain).__doc__ == "Adds two numbers."
    assert cs.toolify()(plain).description == "Add."
    assert create_note.description == "Create a new note with the given title and content."


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
