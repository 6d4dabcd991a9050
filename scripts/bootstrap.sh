#!/usr/bin/env bash
# Creates .venv (Python 3.11+) and installs ContractStudio with pinned dependencies, and the extras asked for
# ("[test,ray]"; none for the studio alone).
# Re-runs are fast: the install is skipped while pyproject.toml and constraints.txt are unchanged and the extras
# asked for are already installed. One environment serves every script: an install keeps the extras installed
# before (the studio's script after the tests' asks for no extra and needs no install; the tests' after the
# studio's install only what is missing), so scripts that ask for different extras never reinstall each other.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ContractStudio needs Python 3.11 or newer")'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.contractstudio-installed
sum="$(cat pyproject.toml constraints.txt | cksum)"
extras() { tr -d '[] ' <<<"${1:-}" | tr ',' '\n' | sed '/^$/d' | sort -u; }
asked="$(extras "${1:-}")"
# The stamp: line 1 the checksum of what was installed, then one installed extra per line.
installed_sum="" installed=""
if [ -f "$stamp" ]; then
  installed_sum="$(sed -n 1p "$stamp")"
  installed="$(sed -n '2,$p' "$stamp")"
fi
missing="$(comm -23 <(printf '%s\n' "$asked" | sed '/^$/d') <(printf '%s\n' "$installed" | sed '/^$/d'))"
if [ "$installed_sum" != "$sum" ] || [ -n "$missing" ]; then
  want="$(printf '%s\n%s\n' "$asked" "$installed" | sed '/^$/d' | sort -u)"
  spec="."
  [ -z "$want" ] || spec=".[$(paste -sd, <<<"$want")]"
  echo "Installing ContractStudio${want:+ with $(paste -sd, <<<"$want")} and its pinned dependencies into .venv ..." >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e "$spec"
  printf '%s\n%s' "$sum" "$want" | sed '/^$/d' > "$stamp"
fi
