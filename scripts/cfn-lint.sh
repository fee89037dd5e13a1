#!/usr/bin/env bash
# Synthesizes the app offline in every configuration that changes the template's shape (by default, with scheduled
# rotation, with everything at the edge, with monitoring to a new or an existing topic, with a custom domain but no
# DNS record, with an existing web ACL and secret by ARN, with per-app rate limits, with a key registry of several
# shards) and runs cfn-lint on every template, nested ones included: any finding (error or warning) fails.
set -euo pipefail
cd "$(dirname "$0")/.."
certificate=arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012
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
lint edge --context env=staging --context wafRateLimit=2000 \
  --context domainName=payments.staging.example.com \
  --context certificateArn=$certificate \
  --context hostedZoneId=Z0123456789ABCDEFGHIJ --context hostedZoneName=example.com \
  --context disableExecuteApiEndpoint=true
lint monitoring --context alarmEmail=oncall@example.com --context metricsNamespace=Payments/Production \
  --context unauthorizedAlarmThreshold=50 --context latencyAlarmThresholdMs=800 \
  --context serverErrorRateAlarmThreshold=2 --context tracing=true --context keyExpiryWarningDays=30
lint monitoring-topic --context alarmTopicArn=arn:aws:sns:eu-west-1:123456789012:oncall --context tracing=true \
  --context rotationDays=30 --context existingSecret=payment-api/keys \
  --context secretKmsKeyArn=arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab
# Without a hosted zone the stack outputs where to point the name: an output's description must be a literal.
lint domain-no-zone --context env=production --context domainName=payments.example.com \
  --context certificateArn=$certificate
lint existing-web-acl-and-secret-arn \
  --context webAclArn=arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111 \
  --context existingSecret=arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf
# Per-app rate limits: the DynamoDB table, its grant, the rate-limited entry's settings, its alarm, widget and query.
lint rate-limits --context appRateLimit=50 --context appRateBurst=100 --context appRateLimitFailure=closed \
  --context alarmEmail=oncall@example.com
# The key registry: 64 shards (their secrets, the manifest, the chunked read grants, the outputs); a reshard under way
# (both counts); 256 shards with rotation (the schedules of shards 1 to 255 in four nested stacks, the rotation
# grants); 1,024 shards with rotation; an existing secret by ARN as shard 0, with a customer KMS key on every new shard.
lint shards-64 --context keyShards=64
lint reshard --context env=staging --context keyShards=8 --context keyShardsPrevious=4
lint shards-256-rotation --context keyShards=256 --context rotationDays=30
# 1,024 shards with rotation: shards 256 and up in three nested stacks, their schedules naming them, grants by prefix.
lint shards-1024-rotation --context keyShards=1024 --context rotationDays=30
lint existing-secret-shard-zero --context keyShards=16 --context rotationDays=30 \
  --context existingSecret=arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf \
  --context secretKmsKeyArn=arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab
