#!/usr/bin/env bash
# The one test command (README, .ci/run): type-check, lint and format check, cfn-lint, every jest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-tools.sh
if [ -d .venv/bin ]; then export PATH="$PWD/.venv/bin:$PATH"; fi

# The Lambda runs Node.js 24; on an older local Node the SDK's end-of-support notice is noise in test output.
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

# The checks are single-threaded and independent: run them side by side. cfn-lint (seventeen configurations
# synthesized, then linted) outlasts the others by minutes, so jest starts as soon as type-check and lint pass and
# runs beside it, filling the core the finished checks leave idle. Each check's output is printed in order once it
# is done; any that fails fails the command, after all of them have said what they found.
logs=$(mktemp -d)
cfn_lint_pid=
stop_cfn_lint() {
  if [ -n "$cfn_lint_pid" ]; then kill "$cfn_lint_pid" 2>/dev/null || true; fi
  rm -rf "$logs"
}
trap stop_cfn_lint EXIT

bash scripts/cfn-lint.sh >"$logs/cfn-lint" 2>&1 &
cfn_lint_pid=$!
npx tsc --noEmit >"$logs/type-check" 2>&1 &
type_check_pid=$!
{ npx eslint . && npx prettier --check .; } >"$logs/lint" 2>&1 &
lint_pid=$!

failed=0
# report NAME PID: waits for one check, prints its output, and remembers a failure.
report() {
  local status=0
  wait "$2" || status=$?
  echo "== $1"
  cat "$logs/$1"
  if [ "$status" -ne 0 ]; then
    echo "$1 failed (exit $status)" >&2
    failed=1
  fi
}
report type-check "$type_check_pid"
report lint "$lint_pid"
[ "$failed" -eq 0 ] || exit 1

echo "== jest (cfn-lint goes on alongside; its output follows)"
jest_status=0
npx jest "$@" || jest_status=$?
report cfn-lint "$cfn_lint_pid"
cfn_lint_pid=
[ "$jest_status" -eq 0 ] || { echo "jest failed (exit $jest_status)" >&2; exit "$jest_status"; }
[ "$failed" -eq 0 ] || exit 1
