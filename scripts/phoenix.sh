#!/usr/bin/env bash
# Installs Arize Phoenix into .venv-phoenix, its own environment (its pins are not the project's): the real OTLP
# receiver that tests/test_otel_phoenix.py starts on loopback. Skipped while scripts/phoenix-constraints.txt is
# unchanged. A first install downloads about 850 MB of wheels (7-8 minutes here); then pip's cache has them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
stamp=.venv-phoenix/.installed
sum="$(cksum < scripts/phoenix-constraints.txt)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
  exit 0
fi
[ -x .venv-phoenix/bin/python ] || "$PY" -m venv .venv-phoenix
echo "Installing Arize Phoenix (the span tests' receiver) into .venv-phoenix ..." >&2
version="$(sed -n 's/^arize-phoenix==//p' scripts/phoenix-constraints.txt)"
# Its wheels are kept outside the clone (pip keeps no cache of downloads on this machine): a fresh clone's CI installs
# them from there, offline, in about a minute instead of downloading 850 MB again.
wheels="${CONTRACTSTUDIO_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/contractstudio/phoenix-wheels}"
mkdir -p "$wheels"
pip_install() { .venv-phoenix/bin/python -m pip install --quiet --disable-pip-version-check -c scripts/phoenix-constraints.txt "$@"; }
if ! pip_install --no-index --find-links "$wheels" "arize-phoenix==$version" 2>/dev/null; then
  .venv-phoenix/bin/python -m pip download --quiet --disable-pip-version-check -c scripts/phoenix-constraints.txt \
    -d "$wheels" "arize-phoenix==$version"
  pip_install --no-index --find-links "$wheels" "arize-phoenix==$version"
fi
printf '%s' "$sum" > "$stamp"
