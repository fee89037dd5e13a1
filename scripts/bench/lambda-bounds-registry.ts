/**
 * The registry bench/lambda-bounds.ts serves its Lambda bundles, and the fake Secrets Manager that serves it: a
 * loopback HTTP server answering GetSecretValue (AWS JSON 1.1) from shard texts held by the bench's own process, so
 * the process measured holds only what the Lambda fetched. It checks no signature (moto does not either) and records
 * when each call came. Told to fail, it answers every call ThrottlingException after `failAfterMs`, as a throttled
 * Secrets Manager does after its round trip.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toCompactDigestForm } from '../../shared/keys/key-material';
import { secretRegistryLayout } from '../../shared/keys/registry';
import { shardOf } from '../../shared/keys/shard';
import { appNumbered, previousKeyOf } from './lambda-bounds-apps';

/**
 * - heaviest: two plain keys mid-rotation (the older expiring) and an allowlist of two blocks per app, the shape
 *   the round before measured, readable at 993eb6d. 100,000 apps put about 74 KB in each of 256 shards: over a
 *   secret's 64 KB, so this is a bound from above, not a registry Secrets Manager would hold.
 * - rotating: two d: digests mid-rotation (the older expiring), no allowlist: the capacity target (100,000
 *   apps in 1,024 shards at most 80% full). Not readable at 993eb6d (no d: digests, at most 256 shards).
 */
export type RegistryShape = 'heaviest' | 'rotating';

export interface BenchRegistry {
  readonly shards: number;
  /** Shard id -> its SecretString. */
  readonly texts: ReadonlyMap<string, string>;
  /** The environment a payment Lambda reads this registry with (beside the endpoint and credentials). */
  readonly env: Readonly<Record<string, string>>;
  readonly totalBytes: number;
  readonly largestShardBytes: number;
}

const SHARD_ZERO = 'bench-keys';
const NAME_PREFIX = 'bench-keys';

function entryOf(shape: RegistryShape, key: string): unknown {
  const previous = previousKeyOf(key);
  if (shape === 'heaviest') {
    return {
      keys: [{ key: previous, expires: '2030-01-01T00:00:00Z' }, key],
      allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
    };
  }
  return [{ key: toCompactDigestForm(previous), expires: '2030-01-01T00:00:00Z' }, toCompactDigestForm(key)];
}

export function benchRegistry(shape: RegistryShape, shards: number, apps: number): BenchRegistry {
  const layout = secretRegistryLayout({ shardZeroId: SHARD_ZERO, namePrefix: NAME_PREFIX, shards });
  const documents: Record<string, unknown>[] = Array.from({ length: shards }, () => ({}));
  for (let index = 0; index < apps; index++) {
    const { appId, key } = appNumbered(index);
    const home = documents[shardOf(appId, shards)];
    if (home !== undefined) home[appId] = entryOf(shape, key);
  }
  const texts = new Map<string, string>();
  let totalBytes = 0;
  let largestShardBytes = 0;
  documents.forEach((document, index) => {
    const text = JSON.stringify(document);
    const bytes = Buffer.byteLength(text);
    totalBytes += bytes;
    largestShardBytes = Math.max(largestShardBytes, bytes);
    texts.set(layout.shardIds[index] ?? '', text);
  });
  return {
    shards,
    texts,
    env: {
      KEYS_SECRET_ID: SHARD_ZERO,
      KEY_SHARDS: String(shards),
      KEY_SHARD_NAME_PREFIX: NAME_PREFIX,
    },
    totalBytes,
    largestShardBytes,
  };
}

export interface FakeSecretsManager {
  /** `http://127.0.0.1:<port>`, for AWS_ENDPOINT_URL. */
  readonly endpoint: string;
  /** When each GetSecretValue call came (epoch ms), so far. */
  readonly calls: readonly number[];
  /** Which registry it serves from now on. */
  serve(registry: BenchRegistry): void;
  /** From now on every call fails (ThrottlingException) after this long. */
  fail(failAfterMs: number): void;
  close(): Promise<void>;
}

export async function startFakeSecretsManager(): Promise<FakeSecretsManager> {
  let texts: ReadonlyMap<string, string> = new Map();
  let failAfterMs: number | undefined;
  const calls: number[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls.push(Date.now());
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: string };
      const text = texts.get(input.SecretId ?? '');
      const headers = { 'content-type': 'application/x-amz-json-1.1' };
      if (failAfterMs !== undefined) {
        setTimeout(() => {
          response.writeHead(400, headers);
          response.end(JSON.stringify({ __type: 'ThrottlingException', message: 'Rate exceeded' }));
        }, failAfterMs);
        return;
      }
      if (text === undefined) {
        response.writeHead(400, headers);
        response.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: 'not found' }));
        return;
      }
      response.writeHead(200, headers);
      response.end(
        JSON.stringify({
          ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${input.SecretId}`,
          Name: input.SecretId,
          SecretString: text,
          VersionId: '00000000-0000-4000-8000-000000000000',
          VersionStages: ['AWSCURRENT'],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    serve: (registry) => {
      texts = registry.texts;
      failAfterMs = undefined;
    },
    fail: (afterMs) => {
      failAfterMs = afterMs;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
