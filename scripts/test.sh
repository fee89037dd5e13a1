#!/usr/bin/env bash
# The one test command (README, .ci/run): type-check, lint and format check, cfn-lint, every jest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-tools.sh
if [ -d .venv/bin ]; then export PATH="$PWD/.venv/bin:$PATH"; fi

# The Lambda runs Node.js 24; on an older local Node the SDK's end-of-support notice is noise in test output.
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

# The checks before jest are single-threaded and independent: run them side by side, then print each one's output
# in order. Any that fails fails the command, after all of them have said what they found.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=(type-check lint cfn-lint)
npx tsc --noEmit >"$logs/type-check" 2>&1 &
pids=($!)
{ npx eslint . && npx prettier --check .; } >"$logs/lint" 2>&1 &
pids+=($!)
bash scripts/cfn-lint.sh >"$logs/cfn-lint" 2>&1 &
pids+=($!)
failed=0
for index in "${!names[@]}"; do
  status=0
  wait "${pids[$index]}" || status=$?
  echo "== ${names[$index]}"
  cat "$logs/${names[$index]}"
  if [ "$status" -ne 0 ]; then
    echo "${names[$index]} failed (exit $status)" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

echo "== jest"
npx jest "$@"
