#!/usr/bin/env bash
# SymbolicAI's own contract tests as the judge of contractstudio.symbolic (issue 20.3), run OUTSIDE this
# repository: the test file is copied from a SymbolicAI checkout with its three import lines swapped, next
# to this folder's conftest.py (a scripted model inside use_model, in place of SymbolicAI's engine).
#
#   bash bench/symbolicai_judge/run.sh /path/to/symbolicai [JUDGE_DIR]     (default JUDGE_DIR: /tmp/symai-judge)
#
# Expected: 25 passed, 1 deselected (test_contract_wrapper_strips_validation_context calls the decorator's
# private _execute_forward_call: out of scope). test_contract_perf_stats sleeps about 21 s by design.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
symai="${1:?the path of a SymbolicAI checkout}"
judge="${2:-/tmp/symai-judge}"
mkdir -p "$judge/traces"
rm -f "$judge"/traces/*.jsonl
sed -e 's/^from symai import Expression$/from contractstudio.symbolic import Expression/' \
    -e 's/^from symai.models import LLMDataModel$/from contractstudio.symbolic import LLMDataModel/' \
    -e 's/^from symai.strategy import contract$/from contractstudio.symbolic import contract/' \
    "$symai/tests/contract/test_contract.py" > "$judge/test_contract.py"
cp "$here/conftest.py" "$judge/conftest.py"
cd "$judge"
"$repo/.venv/bin/python" -m pytest test_contract.py -q -p no:cacheprovider -o addopts="" \
  --deselect test_contract.py::test_contract_wrapper_strips_validation_context "${@:3}"
