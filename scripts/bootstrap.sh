#!/usr/bin/env bash
# Creates .venv (Python 3.11+) and installs ContractStudio with pinned dependencies.
# Re-runs are fast: the install is skipped while pyproject.toml and constraints.txt are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ContractStudio needs Python 3.11 or newer")'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.contractstudio-installed
want="$(cat pyproject.toml constraints.txt | cksum) ${1:-}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing ContractStudio and its pinned dependencies into .venv ..." >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".${1:-}"
  echo "$want" > "$stamp"
fi
