"""The closures (expressions/closures.py) and the generated function (expressions/generated.py) behave exactly as the
tree walk they replace: same value, or the same error, and the same work charged to the call's budget.

Every expression of the escape corpus, the data bombs, the samples' own
expressions and random token soup is evaluated the three ways.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_expression_sandbox import ATTACKS, DATA_BOMBS, QUADRATIC, values
from test_expressions import _PIECES, model_values

import contractstudio.expressions.generated as generated
from contractstudio.expressions import ExpressionError, compile_expression, sandbox

ROOT = Path(__file__).resolve().parent.parent


HOW = ("walk", "closures", "generated")  # "generated": what `evaluate` runs once warm (the closures for a tree it does
# not write); the first evaluations of an expression run on the closures (test_expression_generated.py)


def outcome(src: str, vals: dict[str, Any], how: str) -> tuple[str, Any]:
    try:
        expr = compile_expression(src)
    except ExpressionError as err:
        return ("refused", str(err))
    try:
        if how == "walk":
            return ("value", expr.evaluate(vals, walk=True))
        if how == "closures":
            return ("value", expr.with_closures()(vals))
        return ("value", (generated.build(expr.tree) or expr.with_closures())(vals))
    except ExpressionError as err:
        return ("error", str(err))


def charged(src: str, vals: dict[str, Any], how: str) -> tuple[tuple[str, Any], int]:
    """The outcome and the work it charged to the shared budget: steps, iterations and element operations."""
    budget = sandbox.ExpressionBudget(limit=10**12, what="this test")
    with sandbox.shared_expression_budget(budget):
        return outcome(src, vals, how), budget.used


def same(src: str, vals: dict[str, Any]) -> None:
    walked = charged(src, vals, "walk")
    assert charged(src, vals, "closures") == walked, src
    assert charged(src, vals, "generated") == walked, src


REALISTIC = [
    "input.query.strip() != ''", "len(input.documents) > 0", "input.max_snippets or 3",
    "[s.strip() for d in input.documents for s in d.content.split('.') if s.strip()]",
    "all(e.doc_id in [d.id for d in input.documents] for e in output.evidence)",
    "output.score >= 0.55 and output.confidence == 'high'", "1 < output.score < 2", "not output.tags",
    "{d.id: len(d.content) for d in input.documents}", "{t for t in output.tags}", "(1, 2)[-1]", "output.answer[::-1]",
    "output.answer[1:3]", "output.answer[::0]", "output.data.get('k', [])", "output.data.missing", "-output.score",
    "+'a'", "output.score if output.tags else 0", "[x for x, y in [(1, 2), (3, 4)]]", "[x for x, y in [1]]",
    "sorted(output.tags, reverse=True)", "sorted(output.tags, key=1)", "min([], default=0)", "1 / 0", "2 ** 0.5",
    "'a' in output.tags", "1 in 'abc'", "output.answer is None", "None is not None", "{'a': 1, **{}}",
    "output.answer.upper().startswith('W')", "output.tags.index('zz')", "len(input)", "unknown_name", "input._hidden",
    "[_x for _x in [1]]", "output.score < 'a'", "{1, 2} - {2}", "{'a': 1} | {'b': 2}", "[1] + [2] * 3", "'%s' % 1",
    # the list measures a generated function writes inline: flat lists, a list holding a container, a method's list
    "[[t] for t in output.tags]", "[output.tags, output.answer, 1, None]", "output.answer.split(' ')", "[t for t in []]",
    "output.answer in output.tags", "output.tags[0] not in output.tags", "[] in [[]]", "'' in ['']", "len(output.tags)",
    "len(output.score)", "all([t == 'a' for t in output.tags])", "any(output.tags)", "output.answer.strip() != 'x'",
    "all(1)", "any(output.answer)", "all([])", "any([])", "all([output.data, 0])", "any([[], output.data])", "len()",
]


@pytest.mark.parametrize("src", REALISTIC)
def test_realistic_expressions(src: str) -> None:
    same(src, model_values())


@pytest.mark.timeout(20)
@pytest.mark.parametrize("src", ATTACKS)
def test_every_attack_is_refused_the_same_way(src: str) -> None:
    same(src, values())
    assert outcome(src, values(), "generated")[0] in ("refused", "error")


@pytest.mark.timeout(20)
@pytest.mark.parametrize(("src", "query"), DATA_BOMBS, ids=[src for src, _ in DATA_BOMBS])
def test_every_data_bomb_is_stopped_the_same_way(src: str, query: str) -> None:
    same(src, values(query))


@pytest.mark.timeout(20)
@pytest.mark.parametrize("src", QUADRATIC)
def test_quadratic_work_is_stopped_the_same_way(src: str) -> None:
    big = {"input": {"big": list(range(100_000)), "other": list(range(100_000)), "text": "ab" * 50_000}}
    same(src, big)


def test_the_names_given_are_never_changed_by_an_evaluation() -> None:
    vals = model_values()
    before = dict(vals)
    for src in REALISTIC:
        outcome(src, vals, "closures")
        outcome(src, vals, "generated")
    assert vals == before and list(vals) == list(before)


def test_the_budget_refuses_the_same_evaluation_and_charges_the_same_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call's shared budget: each evaluation charges what the tree walk counts, and the one after it is spent is refused."""
    done = {}
    for how in HOW:
        budget = sandbox.ExpressionBudget(limit=700, what="this call")
        seen = []
        with sandbox.shared_expression_budget(budget):
            for _ in range(6):
                seen.append((outcome("[x + 1 for x in input.big if x > 0]", {"input": {"big": list(range(40))}}, how),
                             budget.used))
        assert seen[-1] == (("error", "the expression budget of this call (700 operations) is spent"), seen[-2][1])
        done[how] = seen
    assert done["closures"] == done["walk"] and done["generated"] == done["walk"]


def bound_steps(monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    """Lower the step bound everywhere it is read: the walk's meter, both builders of closures and the generated
    functions' globals."""
    import contractstudio.expressions.closures as closures
    import contractstudio.expressions.fused as fused
    import contractstudio.expressions.helpers as helpers

    for module in (sandbox, closures, fused):
        monkeypatch.setattr(module, "MAX_STEPS", bound)
    monkeypatch.setitem(helpers.GLOBALS, "_MAX", bound)


def test_the_step_bound_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    src = "[x + 1 for x in input.big if x > 0]"
    data = {"input": {"big": list(range(5000))}}
    same(src, data)
    bound_steps(monkeypatch, 100)
    assert {outcome(src, data, how) for how in HOW} == {("error", "evaluation exceeded 100 steps")}


def test_the_step_bound_falls_the_same_inside_a_fused_closure(monkeypatch: pytest.MonkeyPatch) -> None:
    """`input.a` (a name and its field), `x >= 1` (a constant right side) and `s.strip()` are one closure each,
    counting two steps: whichever step crosses the bound, the error and the work charged are the walk's."""
    data = {"input": {"a": 1, "b": [1, 2], "c": " a.b ", "d": [" x ", ""]}}
    for bound in range(1, 14):
        bound_steps(monkeypatch, bound)
        for src in ("input.a + input.a >= 1", "[x >= 1 for x in input.b] == [input.a]", "len(input.b) > input.a",
                    "input.c.strip() != ''", "[s.strip() for s in input.d if s.strip()]", "input.c.split('.')"):
            same(src, data)
            assert charged(src, data, "generated")[0] == ("error", f"evaluation exceeded {bound} steps") or bound > 3


def test_the_samples_expressions() -> None:
    import contractstudio as cs

    found = 0
    for path in sorted((ROOT / "samples").glob("*.contract.yaml")):
        for contract in cs.load_all(path):
            for cond in [*contract.doc.pre, *contract.doc.post]:
                for src in (cond.assert_, cond.when):
                    if src:
                        same(src, model_values())
                        found += 1
    assert found >= 5


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_any_token_soup_gives_the_same_outcome(src: str) -> None:
    same(src, model_values())
