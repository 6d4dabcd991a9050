#!/usr/bin/env bash
# bots' own toolify tests as the judge of contractstudio.toolify (issue 20.5), run OUTSIDE this repository:
# the test files are copied from a bots checkout (github.com/benbuzz790/bots) with their import line swapped.
#
#   bash bench/bots_toolify_judge/run.sh /path/to/bots [JUDGE_DIR]     (default JUDGE_DIR: /tmp/bots-judge)
#
# Expected (measured at bots b6999ca): tests/unit/test_toolify_contracts.py 9 passed (9 failed before issue 20);
# tests/unit/test_toolify.py 18 passed, 1 failed: test_conversion_error expects Python's int() wording
# ("invalid literal ...") and `Tool Failed:`, where ContractStudio reports the argument in seed 003's
# contract format, as for a kind: tools file (docs/runtime.md, "cs.toolify and bots' toolify").
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
bots="${1:?the path of a bots checkout}"
judge="${2:-/tmp/bots-judge}"
mkdir -p "$judge"
for name in test_toolify_contracts test_toolify; do
  sed -e 's/^from bots.dev.decorators import toolify$/from contractstudio import toolify/' \
      "$bots/tests/unit/$name.py" > "$judge/$name.py"
done
cd "$judge"
"$repo/.venv/bin/python" -m pytest test_toolify_contracts.py test_toolify.py -q -p no:cacheprovider -o addopts="" "${@:3}"
