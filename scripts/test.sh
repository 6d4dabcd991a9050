#!/usr/bin/env bash
# Quick start 2: install what is needed and run the whole test suite:
# lint (ruff), types (mypy), the import layers (import-linter), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh "[test,ray]"  # ray: the Ray engine's end-to-end test (about 45 s more to install)
echo "ruff ..." >&2
.venv/bin/ruff check contractstudio tests scripts bench
echo "mypy ..." >&2
.venv/bin/mypy
echo "import layers ..." >&2
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
exec .venv/bin/python -m pytest "$@"
