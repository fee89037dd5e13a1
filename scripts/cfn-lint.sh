#!/usr/bin/env bash
# Synthesizes every stack offline and runs cfn-lint on the templates: any error fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx cdk synth --quiet --output "$out" >/dev/null
cfn-lint --format parseable -- "$out"/*.template.json
echo "cfn-lint: $(ls "$out"/*.template.json | wc -l) template(s), no errors"
