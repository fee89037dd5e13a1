#!/usr/bin/env bash
# Synthesizes the app offline as deployed by default and with scheduled rotation on, and runs cfn-lint on every
# template: any finding (error or warning) fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

lint() {
  local name=$1
  shift
  if ! npx cdk synth --quiet --output "$out/$name" "$@" >"$out/$name.log" 2>&1; then
    tail -n 40 "$out/$name.log" >&2
    exit 1
  fi
  cfn-lint --format parseable -- "$out/$name"/*.template.json
  echo "cfn-lint ($name): $(ls "$out/$name"/*.template.json | wc -l) template(s), no findings"
}

lint default
lint rotation --context rotationDays=30
