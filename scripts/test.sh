#!/usr/bin/env bash
# Quick start 2: install what is needed and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh "[test]"
exec .venv/bin/python -m pytest "$@"
