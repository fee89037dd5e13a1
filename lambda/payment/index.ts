/**
 * Lambda entry point. Everything at module scope runs once per execution environment: the SDK client, the key
 * cache, and the first fetch of the keys, started here so it overlaps the rest of the cold start.
 */
import { KeyCache } from '../keys/key-cache';
import { secretsManagerSource } from '../keys/secrets-manager-source';
import { createJsonLogger } from '../shared/logger';
import { createHandler } from './create-handler';
import { readLambdaSettings } from './settings';

const settings = readLambdaSettings(process.env);
const logger = createJsonLogger(settings.logLevel);
const keys = new KeyCache({
  source: secretsManagerSource(settings.secretId),
  logger,
  ttlMs: settings.ttlMs,
  maxStaleMs: settings.maxStaleMs,
});
keys.warm();

export const handler = createHandler({ keys, logger });
