#!/usr/bin/env bash
# Makes moto's server and cfn-lint available to the tests. Uses the machine's copies when they are on PATH;
# otherwise installs pinned versions into a project-local venv (.venv), or stops with what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

MOTO_VERSION=5.2.1
CFN_LINT_VERSION=1.51.0

if [ -x .venv/bin/moto_server ] && [ -x .venv/bin/cfn-lint ]; then
  exit 0
fi
if command -v moto_server >/dev/null 2>&1 && command -v cfn-lint >/dev/null 2>&1; then
  exit 0
fi

echo "moto_server or cfn-lint not found on PATH: installing moto[server]==$MOTO_VERSION and cfn-lint==$CFN_LINT_VERSION into .venv" >&2
if ! command -v python3 >/dev/null 2>&1; then
  echo "error: python3 is required for the tests (moto's server and cfn-lint). Install Python 3.9+ and re-run." >&2
  exit 1
fi
if ! python3 -m venv .venv >/dev/null 2>&1 ||
  ! .venv/bin/pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION" "cfn-lint==$CFN_LINT_VERSION"; then
  rm -rf .venv
  cat >&2 <<MSG
error: could not install the Python test tools into .venv.
Install them yourself, then re-run the tests:
    pip install "moto[server]==$MOTO_VERSION" "cfn-lint==$CFN_LINT_VERSION"
(On Debian/Ubuntu, "apt-get install python3-venv" lets this script make .venv for you.)
MSG
  exit 1
fi
