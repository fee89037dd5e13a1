/**
 * The benchmark's naive peer (npm run bench): the same job as the payment Lambda, written the obvious way in one
 * file. The same SDK client with default options, the secret fetched once at init, a plain `===` comparison. Not
 * part of the product: it is what our cold start is measured against.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

type Keys = Record<string, string | string[]>;

const client = new SecretsManagerClient({});
const keys: Promise<Keys> = client
  .send(new GetSecretValueCommand({ SecretId: process.env.KEYS_SECRET_ID }))
  .then((output) => JSON.parse(output.SecretString ?? '{}') as Keys);

export const handler = async (event: {
  headers: Record<string, string | undefined>;
}): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> => {
  const all = await keys;
  const stored = all[event.headers['App-id'] ?? ''];
  const valid = stored === undefined ? [] : Array.isArray(stored) ? stored : [stored];
  const ok = valid.some((key) => key === event.headers['App-key']);
  return {
    statusCode: ok ? 200 : 401,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(
      ok
        ? { code: 'ok', message: 'Payment request accepted.' }
        : { code: 'unauthorized', message: 'Unauthorized' },
    ),
  };
};
