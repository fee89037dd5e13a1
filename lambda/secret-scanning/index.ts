/**
 * Secret scanning function entry point: API Gateway invokes it for POST /secret-scanning, where GitHub's secret
 * scanning partner program reports tokens of this stack's format found in public (create-handler.ts). The clients
 * and the public keys cache live at module scope, so warm invocations reuse them. Region and credentials come from
 * the Lambda environment; the registry from REGISTRY_ENV, as every function that reads the keys.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import {
  boundedClientConfig,
  addCallDeadline,
  createSecretsManagerClient,
} from '../../shared/aws/bounded-client';
import { createJsonLogger } from '../../shared/logger';
import { createScanningHandler } from './create-handler';
import { fetchText } from './fetch-text';
import { createSnsLeakNotifier } from './leak-notice';
import { PublicKeyCache } from './public-keys';
import {
  PUBLIC_KEY_LIMITS,
  readScanningSettings,
  SCANNING_CALL_BOUNDS,
  SCANNING_CONCURRENT_CALLS,
} from './settings';
import { createSecretsManagerShardStore } from './shard-store';

const settings = readScanningSettings(process.env);
const logger = createJsonLogger(settings.logLevel);

function snsClient(): SNSClient {
  const client = new SNSClient(boundedClientConfig(SCANNING_CALL_BOUNDS));
  addCallDeadline(client, SCANNING_CALL_BOUNDS.callDeadlineMs);
  return client;
}

export const handler = createScanningHandler({
  publicKeys: new PublicKeyCache({
    fetchDocument: () =>
      fetchText(settings.keysUrl, {
        deadlineMs: PUBLIC_KEY_LIMITS.fetchDeadlineMs,
        maxBytes: PUBLIC_KEY_LIMITS.maxDocumentBytes,
      }),
    now: Date.now,
    logger,
  }),
  shards: createSecretsManagerShardStore({
    client: createSecretsManagerClient(SCANNING_CALL_BOUNDS),
    shardIds: settings.registry.shardIds,
    concurrency: SCANNING_CONCURRENT_CALLS,
  }),
  logger,
  action: settings.action,
  keyPrefix: settings.keyPrefix,
  ...(settings.alarmTopicArn === undefined
    ? {}
    : { notify: createSnsLeakNotifier(snsClient(), settings.alarmTopicArn) }),
});
