import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { ShardStore } from '../../lambda/secret-scanning/shard-store';

/**
 * A stand-in for GitHub's side of the secret scanning partner program: a P-256 key pair made in the test, its public
 * keys document in GitHub's format, and alerts signed as GitHub signs them (ECDSA P-256 / SHA-256 over the raw body,
 * base64 DER).
 */
export interface GithubSigner {
  readonly keyIdentifier: string;
  readonly publicKeyPem: string;
  /** `Github-Public-Key-Signature` for these exact bytes. */
  signatureOf(body: string | Buffer): string;
}

export function createGithubSigner(keyIdentifier: string): GithubSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    keyIdentifier,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    signatureOf: (body) => signWith(privateKey, body),
  };
}

function signWith(privateKey: KeyObject, body: string | Buffer): string {
  return sign('sha256', typeof body === 'string' ? Buffer.from(body, 'utf8') : body, {
    key: privateKey,
    dsaEncoding: 'der',
  }).toString('base64');
}

/** GitHub's public keys document for these signers, the first one current. */
export function publicKeysDocument(signers: readonly GithubSigner[]): string {
  return JSON.stringify({
    public_keys: signers.map((signer, index) => ({
      key_identifier: signer.keyIdentifier,
      key: signer.publicKeyPem,
      is_current: index === 0,
    })),
  });
}

/** One reported token, as GitHub sends it. */
export function reportEntry(token: string, type = 'payment_api_key'): Record<string, string> {
  return { token, type, url: 'https://github.com/octo-org/octo-repo/blob/abc123/.env', source: 'content' };
}

/** A REST proxy event for POST /secret-scanning, signed by `signer` unless headers say otherwise. */
export function scanningEvent(
  body: string,
  signer: GithubSigner | undefined,
  headers: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  return {
    httpMethod: 'POST',
    path: '/secret-scanning',
    headers: {
      'Content-Type': 'application/json',
      ...(signer === undefined
        ? {}
        : {
            'Github-Public-Key-Identifier': signer.keyIdentifier,
            'Github-Public-Key-Signature': signer.signatureOf(body),
          }),
      ...headers,
    },
    body,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-1', identity: { sourceIp: '192.0.2.10' } },
  };
}

/** Shards in memory, versioned as Secrets Manager versions them, counting what the function asks of them. */
export interface MemoryShards {
  readonly store: ShardStore;
  /** Each shard's current text. */
  texts(): string[];
  readonly calls: { readAll: number; readOne: number; writes: number; conflicts: number };
  /** The next write to `shard` finds AWSCURRENT moved by another writer, who stored `text`. */
  raceNextWrite(shard: number, text: string): void;
  /** Reads of `shard` fail until cleared. */
  failReads(shard: number | undefined): void;
  /** Writes fail until cleared. */
  failWrites(failing: boolean): void;
}

export function memoryShards(initial: readonly string[]): MemoryShards {
  const versions = initial.map((text, shard) => ({ text, versionId: `v${shard}-0` }));
  const calls = { readAll: 0, readOne: 0, writes: 0, conflicts: 0 };
  const races = new Map<number, string>();
  let unreadable: number | undefined;
  let writesFail = false;
  const current = (shard: number): { text: string; versionId: string } => {
    const version = versions[shard];
    if (version === undefined) throw new RangeError(`no shard ${shard}`);
    return version;
  };
  return {
    calls,
    texts: () => versions.map((version) => version.text),
    raceNextWrite: (shard, text) => races.set(shard, text),
    failReads: (shard) => {
      unreadable = shard;
    },
    failWrites: (failing) => {
      writesFail = failing;
    },
    store: {
      readAll: () => {
        calls.readAll += 1;
        return Promise.resolve(
          versions.map((_, shard) =>
            shard === unreadable
              ? { shard, ok: false as const, problem: 'AccessDeniedException: not allowed' }
              : { shard, ok: true as const, snapshot: { ...current(shard) } },
          ),
        );
      },
      readOne: (shard) => {
        calls.readOne += 1;
        return Promise.resolve({ ...current(shard) });
      },
      replace: (shard, expectedVersion, text) => {
        if (writesFail) return Promise.reject(new Error('ThrottlingException: Rate exceeded'));
        const race = races.get(shard);
        if (race !== undefined) {
          races.delete(shard);
          versions[shard] = { text: race, versionId: `${current(shard).versionId}-other` };
        }
        if (current(shard).versionId !== expectedVersion) {
          calls.conflicts += 1;
          return Promise.resolve('conflict' as const);
        }
        calls.writes += 1;
        versions[shard] = { text, versionId: `v${shard}-${calls.writes}` };
        return Promise.resolve('written' as const);
      },
    },
  };
}
