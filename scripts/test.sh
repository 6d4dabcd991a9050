#!/usr/bin/env bash
# Quick start 2: install what is needed and run the whole test suite:
# lint (ruff), types (mypy) and the import layers (import-linter) beside pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# The studio's terminal tests drive the real app in tmux; in CI a skipped test fails the run (tests/conftest.py),
# so tmux is installed here when it is missing and we may, or the run stops saying why.
if ! command -v tmux >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux >/dev/null; }
  else
    echo "tmux is missing and cannot be installed here (not root): install tmux, the studio's terminal tests need it" >&2
    exit 1
  fi
fi
# ray: the Ray engine's end-to-end test (about 45 s more to install); local: the real model server of the real-model
# tests (llama-cpp-python builds llama.cpp from source the first time, about 7 minutes on 2 cores; then pip's cache
# has it); otel: the OpenTelemetry SDK and OTLP exporter of the span tests (tests/test_otel*.py). One environment
# serves this script and studio.sh (bootstrap.sh keeps the extras installed).
EXTRAS="[test,ray,local,otel]"
checks="$(mktemp -d)"
trap 'rm -rf "$checks"' EXIT
# Arize Phoenix, the real OTLP receiver of tests/test_otel_phoenix.py, goes into an environment of its own (its pins
# are not ours); its first install downloads about 850 MB (7-10 minutes), so it runs beside the project's install and
# the tests: only the Phoenix test waits for it, reading its exit status from CONTRACTSTUDIO_PHOENIX_INSTALL.
export CONTRACTSTUDIO_PHOENIX_INSTALL="$checks/phoenix.rc"
(
  set +e
  bash scripts/phoenix.sh >"$checks/phoenix" 2>&1; echo $? >"$checks/phoenix.rc.part"
  mv "$checks/phoenix.rc.part" "$checks/phoenix.rc"  # whole or absent: the test never reads half a status
) &
phoenix=$!
bash scripts/bootstrap.sh "$EXTRAS"
# The static checks (ruff, mypy, import layers) and the pre-commit hook's end-to-end test run beside pytest: the
# hook test installs the package into a fresh virtualenv (about 45 s, most of it pip waiting on files) and mypy's
# first run is most of a minute on one core; beside the tests they fill the gaps the tests' waits and the workers'
# last tests leave. Each one's output is printed after the tests, and any failure fails the run.
hook_test="tests/test_pre_commit_hook.py::test_the_hook_fails_on_a_broken_pipeline_and_passes_once_it_is_fixed"
(
  set +e
  .venv/bin/ruff check contractstudio tests scripts bench >"$checks/ruff" 2>&1; echo $? >"$checks/ruff.rc"
  .venv/bin/mypy >"$checks/mypy" 2>&1; echo $? >"$checks/mypy.rc"
  .venv/bin/lint-imports --no-cache >"$checks/layers" 2>&1; echo $? >"$checks/layers.rc"
  CI="${CI:-true}" .venv/bin/python -m pytest "$hook_test" >"$checks/hook" 2>&1; echo $? >"$checks/hook.rc"
) &
static=$!
set +e
# -n: a worker process per core (pytest-xdist; TEST_WORKERS=0 runs in this process). --dist loadgroup: tests
# share out one by one, except those marked @pytest.mark.xdist_group(name) (one expensive module-scoped or
# session-scoped setup, such as a Ray cluster or a model server), which run together on one worker.
CI="${CI:-true}" .venv/bin/python -m pytest -n "${TEST_WORKERS:-2}" --dist loadgroup --deselect "$hook_test" "$@"
tests=$?
wait "$static"
wait "$phoenix"
set -e
failed=0
for check in phoenix ruff mypy layers hook; do
  if [ "$(cat "$checks/$check.rc")" != 0 ]; then
    echo "== $check failed:" >&2; cat "$checks/$check" >&2; failed=1
  else
    summary=""
    if [ "$check" = hook ]; then summary=" ($(tail -n 1 "$checks/hook"))"; fi  # it ran, and what it ran
    echo "$check: ok$summary" >&2
  fi
done
[ "$tests" = 0 ] && [ "$failed" = 0 ]
