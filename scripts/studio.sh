#!/usr/bin/env bash
# Quick start 1: install what is needed and open the studio on the bundled samples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/contractstudio "${@:-samples}"
