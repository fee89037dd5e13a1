#!/usr/bin/env bash
# The one test command (README, .ci/run): type-check, lint and format check, cfn-lint, every jest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-tools.sh
if [ -d .venv/bin ]; then export PATH="$PWD/.venv/bin:$PATH"; fi

# The Lambda runs Node.js 24; on an older local Node the SDK's end-of-support notice is noise in test output.
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

echo "== type-check"
npx tsc --noEmit
echo "== lint"
npx eslint .
npx prettier --check .
echo "== cfn-lint"
bash scripts/cfn-lint.sh
echo "== jest"
npx jest "$@"
