"""Runs SymbolicAI's own contract tests (tests/contract/test_contract.py, three import lines swapped to
contractstudio.symbolic) with a scripted model inside `use_model`, in place of SymbolicAI's engine.

The replies below are what a model answers each test's request; everything else (the decorator, the
remedies, the type checks, forward, perf stats) is contractstudio.symbolic on ContractStudio's engine.
The test file's two other imports (its engine config, and `semassert`, an LLM-judged assert) are
adapted here: no SymbolicAI code is imported.
"""

from __future__ import annotations

import json
import sys
import types

import pytest

import contractstudio as cs
from contractstudio.symbolic import use_model

settings = types.ModuleType("symai.backend.settings")
settings.SYMAI_CONFIG = {}  # type: ignore[attr-defined]
utils = types.ModuleType("symai.utils")


def semassert(condition: bool, message: str = "") -> None:
    assert condition, message


utils.semassert = semassert  # type: ignore[attr-defined]
for name, module in {"symai": types.ModuleType("symai"), "symai.backend": types.ModuleType("symai.backend"),
                     "symai.backend.settings": settings, "symai.utils": utils}.items():
    sys.modules.setdefault(name, module)


def j(value: object) -> str:
    return json.dumps(value)


TRIPLET = {"subject": {"name": "Neural Networks"}, "predicate": {"name": "are"}, "object": {"name": "models"}, "confidence": 0.95}
KG = j({"triplets": [TRIPLET]})
EMPTY_KG = j({"triplets": []})
PEOPLE = {"1": {"name": "Anna Martínez", "age": 34}, "2": {"name": "John Lee", "age": 28},
          "3": {"name": "Michael Robinson", "age": None}, "4": {"name": "Sarah O'Neill", "age": 42}}

REPLIES: dict[str, list[str]] = {
    "test_triplet_extractor_basic": [KG],
    "test_triplet_extractor_state_persistence": [KG, KG],
    "test_triplet_extractor_with_multiple_texts": [KG, KG, KG, KG],
    "test_act_transformation": [KG],
    "test_act_signature_validation": [EMPTY_KG],  # only the first class reaches the model
    "test_act_contract_flow": [EMPTY_KG],
    "test_act_contract_state_interaction": [KG],  # case 1; cases 2 and 3 fail before the model
    "test_contract_result_propagation": [KG],
    "test_contract_perf_stats": [j({"processed_text": f"Processed: test{i}"}) for i in (1, 2, 3)],
    "test_act_state_modification_without_input_change": [j({"value": "test_value"})] * 2,
    "test_skip_pre_and_post_without_methods": [j({"x": 5})],
    "test_post_without_remedy_returns_act_output": [j({"x": 6})],
    "test_forward_return_type_mismatch": [j({"value": "a string"})],
    "test_final_type_check_graceful_behavior": [j({"value": "a string"})] * 2,
    "test_pre_remedy_input_correction_via_fake_remedy": [j({"x": 10}), j({"x": 10})],
    "test_dynamic_type_annotation_primitive_types": [j({"value": "HELLO"})],
    "test_dynamic_type_annotation_list_type": [j({"value": [9, 16, 25]})],
    # its post compares the plain dict: the first check gets the `value` object (as SymbolicAI passes it) and fails,
    # so the right answer is asked once more, as SymbolicAI's semantic loop asks it again
    "test_dynamic_type_annotation_dict_type": [j({"value": {"a": 1, "b": 4, "c": 25}}), j({"value": {"a": 1, "b": 4, "c": 25}})],
    "test_dynamic_type_annotation_nested_types": [j({"value": [{"a": 1}, {"b": 2}]})],
    "test_dynamic_type_annotation_union_optional_types": [j({"value": 42}), j({"value": "test"})],
    "test_hybrid_llm_datamodel_to_list_of_str": [j({"value": ["apple", "banana", "cherry"]})],
    "test_hybrid_llm_datamodel_to_optional_list_of_str": [j({"value": None}), j({"value": ["x", "y"]})],
    "test_hybrid_llm_datamodel_to_dict_str_int": [j({"value": {"a": 1, "bb": 2, "ccc": 3}})],
    "test_hybrid_list_of_datamodels_to_flat_list_of_str": [j({"value": ["hello", "world", "foo", "bar"]})],
    "test_union_dict_with_int_keys_or_list": [j({"value": PEOPLE}), j({"value": [5550134, 18007779924, 20794600]})],
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mandatory: SymbolicAI's marker for tests that must pass")


@pytest.fixture(autouse=True)
def scripted_engine(request: pytest.FixtureRequest):
    model = cs.ScriptedModel(REPLIES.get(request.node.name, []))
    with use_model(model, wait=False, trace=f"traces/{request.node.name}.jsonl"):
        yield model
    # every scripted reply was asked for: the test exercised the calls it was written for
    assert model.used == len(model.replies), f"{model.used} of {len(model.replies)} replies used"
