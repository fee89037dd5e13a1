#!/usr/bin/env bash
# Synthesizes the app offline in every configuration that changes the template's shape (by default, with scheduled
# rotation, with everything at the edge, with monitoring to a new or an existing topic, with a custom domain but no
# DNS record, with an existing web ACL and secret by ARN, with per-app rate limits, with a key registry of several
# shards, with the GitHub secret scanning endpoint, the pipeline access stack) and runs cfn-lint on every template,
# nested ones included: any finding (error or warning) fails. The configurations are synthesized in one process without bundling (scripts/synth-configurations.ts), and one
# cfn-lint reads them all: twelve `cdk synth` runs, each loading the CLI and the CDK and bundling three functions,
# cost minutes of CPU for templates that differ only in their assets' hashes.
set -euo pipefail
cd "$(dirname "$0")/.."
certificate=arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012
kms_key=arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab
secret_arn=arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf
web_acl=arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One line per configuration: its name, then the context `cdk synth` would take.
# - domain-no-zone: without a hosted zone the stack outputs where to point the name, and an output's description
#   must be a literal.
# - rate-limits: the DynamoDB table, its grant, the rate-limited entry's settings, its alarm, widget and query.
# - The key registry: 64 shards (their secrets, the manifest, the chunked read grants, the outputs); a reshard
#   under way (both counts); 256 shards with rotation (the schedules of shards 1 to 255 in four nested stacks, the
#   rotation grants); 1,024 shards with rotation (shards 256 and up in three more nested stacks, their schedules
#   naming them, grants by the stack's shard name prefix); an existing secret by ARN as shard 0, with a customer KMS key on every new shard.
# - GitHub secret scanning: its function, route, model, validator, method throttle, grants on 16 shards, the topic's
#   publish grant and the output; and reporting only, to an existing topic, on one shard.
# - The pipeline access stack (alone in the app with githubRepository): a new OIDC provider and the default stages;
#   an imported provider, the immutable subject, three stages in two Regions.
configurations() {
  cat <<EOF
default
rotation --context rotationDays=30
edge --context env=staging --context wafRateLimit=2000 --context domainName=payments.staging.example.com --context certificateArn=$certificate --context hostedZoneId=Z0123456789ABCDEFGHIJ --context hostedZoneName=example.com --context disableExecuteApiEndpoint=true
monitoring --context alarmEmail=oncall@example.com --context metricsNamespace=Payments/Production --context unauthorizedAlarmThreshold=50 --context latencyAlarmThresholdMs=800 --context serverErrorRateAlarmThreshold=2 --context tracing=true --context keyExpiryWarningDays=30
monitoring-topic --context alarmTopicArn=arn:aws:sns:eu-west-1:123456789012:oncall --context tracing=true --context rotationDays=30 --context existingSecret=payment-api/keys --context secretKmsKeyArn=$kms_key
domain-no-zone --context env=production --context domainName=payments.example.com --context certificateArn=$certificate
existing-web-acl-and-secret-arn --context webAclArn=$web_acl --context existingSecret=$secret_arn
rate-limits --context appRateLimit=50 --context appRateBurst=100 --context appRateLimitFailure=closed --context alarmEmail=oncall@example.com
shards-64 --context keyShards=64
reshard --context env=staging --context keyShards=8 --context keyShardsPrevious=4
shards-256-rotation --context keyShards=256 --context rotationDays=30
shards-1024-rotation --context keyShards=1024 --context rotationDays=30
existing-secret-shard-zero --context keyShards=16 --context rotationDays=30 --context existingSecret=$secret_arn --context secretKmsKeyArn=$kms_key
secret-scanning --context secretScanning=true --context keyShards=16 --context alarmEmail=oncall@example.com
secret-scanning-report --context secretScanning=true --context secretScanningAction=report --context alarmTopicArn=arn:aws:sns:eu-west-1:123456789012:oncall
pipeline-access --context githubRepository=octo-org/payment-api
pipeline-access-imported --context githubRepository=octo-org/payment-api --context githubRepositoryIds=123456/456789 --context pipelineStages=beta,gamma,prod --context pipelineRegions=eu-west-1,us-east-1 --context githubOidcProviderArn=arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com
EOF
}

configurations | npx tsx scripts/synth-configurations.ts "$out"
cfn-lint --format parseable -- "$out"/*/*.template.json
for dir in "$out"/*/; do
  echo "cfn-lint ($(basename "$dir")): $(ls "$dir"*.template.json | wc -l) template(s), no findings"
done
