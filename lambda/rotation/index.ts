/**
 * Rotation Lambda entry point: Secrets Manager invokes it with one step of a rotation of the keys secret. The
 * SDK client lives at module scope so the four invocations of a rotation, often on one warm environment,
 * share it. Region and credentials come from the Lambda environment; the secret comes from each event.
 */
import { createSecretsManagerClient } from '../../shared/aws/bounded-client';
import { createJsonLogger } from '../../shared/logger';
import { createRotationHandler } from './create-rotation-handler';
import { readRotationSettings, ROTATION_CALL_BOUNDS } from './settings';

const settings = readRotationSettings(process.env);

export const handler = createRotationHandler({
  client: createSecretsManagerClient(ROTATION_CALL_BOUNDS),
  keep: settings.keep,
  periodMs: settings.periodMs,
  keyPrefix: settings.keyPrefix,
  logger: createJsonLogger(settings.logLevel),
});
