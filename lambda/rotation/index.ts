/**
 * Rotation Lambda entry point: Secrets Manager invokes it with one step of a rotation of the keys secret. The
 * SDK client lives at module scope so the four invocations of a rotation, often on one warm environment,
 * share it. Region and credentials come from the Lambda environment; the secret comes from each event.
 */
import { createSecretsManagerClient } from '../keys/secrets-manager-source';
import { createJsonLogger } from '../shared/logger';
import { createRotationHandler } from './create-rotation-handler';
import { readRotationSettings } from './settings';

const settings = readRotationSettings(process.env);
// Bounded time-outs and retries, as in the payment Lambda: a step stays well inside the function's timeout.
const client = createSecretsManagerClient();

export const handler = createRotationHandler({
  client,
  keep: settings.keep,
  logger: createJsonLogger(settings.logLevel),
});
