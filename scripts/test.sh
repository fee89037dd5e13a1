#!/usr/bin/env bash
# The one test command (README, .ci/run): type-check, lint and format check, cfn-lint, every jest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-tools.sh
if [ -d .venv/bin ]; then export PATH="$PWD/.venv/bin:$PATH"; fi

echo "== type-check"
npx tsc --noEmit
echo "== lint"
npx eslint .
npx prettier --check .
echo "== cfn-lint"
bash scripts/cfn-lint.sh
echo "== jest"
npx jest "$@"
