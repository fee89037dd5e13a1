import { authenticate, type AuthDecision } from '../../shared/keys/authenticate';
import {
  keyIdOf,
  parseKeyDocument,
  serializeKeyDocument,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { toCompactDigestForm } from '../../shared/keys/key-material';
import { parseKeyring } from '../../shared/keys/keyring';
import { singleShardLayout } from '../../shared/keys/registry';
import type { KeyStore, ReplaceOutcome, Snapshot } from '../../tools/keys/key-store';
import type { Registry } from '../../tools/keys/registry-access';
import { DEMO_KEY } from './keys';
import { run, type CliIo } from '../../tools/keys/main';
import { runInProcess, spawnTool, startTool, TSX, type RunningTool, type ToolRun } from './tool-process';

/** A generated key as the CLI prints it. */
export const GENERATED_KEY_PATTERN = /^pay_[0-9A-Za-z]{38}$/;

/** The id `list` shows for a new key the CLI made: stored as its compact digest (the default), not as itself. */
export function digestKeyIdOf(key: string): string {
  return keyIdOf(toCompactDigestForm(key));
}

export type CliResult = ToolRun;

/** The key lines apply hands out (a --keys-out file's text): app id → key. */
export function keysHandedOut(text: string): Map<string, string> {
  return new Map(
    text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { appId: string; key: string })
      .map(({ appId, key }) => [appId, key]),
  );
}

/** A document of plain keys without expiry or allowlist: app id → its keys, oldest first. */
export function plainKeyDocument(apps: Readonly<Record<string, readonly string[]>>): KeyDocument {
  return new Map(
    Object.entries(apps).map(([appId, keys]) => [appId, { keys: keys.map((stored) => ({ stored })) }]),
  );
}

/** The same, as the CLI writes it. */
export function plainKeysText(apps: Readonly<Record<string, readonly string[]>>): string {
  return serializeKeyDocument(plainKeyDocument(apps));
}

/**
 * A secret of exactly `bytes` bytes as the CLI writes it: app `demo` with DEMO_KEY, then apps `a0000`, `a0001`, …
 * with one long plain key each, the last key cut to fit. For the size guard.
 */
export function keysTextOfSize(bytes: number): string {
  const apps: Record<string, string[]> = { demo: [DEMO_KEY] };
  const entryOverhead = ',"a0000":[""]'.length;
  for (let index = 0; ; index++) {
    const room = bytes - plainKeysText(apps).length - entryOverhead;
    const last = room <= 400;
    // Short of the last key, leave room for one of at least 16 characters.
    const length = last ? room : Math.min(400, room - entryOverhead - 16);
    apps[`a${String(index).padStart(4, '0')}`] = [`k${String(index)}`.padEnd(length, 'k')];
    if (last) break;
  }
  const text = plainKeysText(apps);
  if (text.length !== bytes) throw new Error(`keysTextOfSize(${bytes}) made ${text.length} bytes`);
  return text;
}

/** The stored keys of an app in `text`, oldest first (none when the app is not there). */
export function storedKeysOf(text: string | undefined, appId: string): readonly string[] {
  return (parseKeyDocument(text ?? '{}').get(appId)?.keys ?? []).map((key) => key.stored);
}

/** How the payment Lambda decides a request with these credentials against the secret's `text`. */
export function decide(
  text: string,
  appId: string,
  appKey: string,
  facts: { readonly now?: number; readonly sourceIp?: string } = {},
): AuthDecision {
  return authenticate({ appId, appKey }, parseKeyring(text).keyring, {
    now: facts.now ?? Date.now(),
    sourceIp: facts.sourceIp,
  });
}

/** Runs the CLI in-process with the given environment and captures both streams. */
export function runCli(
  argv: readonly string[],
  env: CliIo['env'],
  extra: Omit<CliIo, 'stdout' | 'stderr' | 'env'> = {},
): Promise<CliResult> {
  return runInProcess<CliIo>(run, argv, { ...extra, env });
}

/** Runs `tsx bin/keys.ts` as a real process (what `npm run keys --` runs, without npm's start-up), or via npx. */
export function spawnCli(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  command = 'tsx',
): Promise<CliResult> {
  return command === 'npx'
    ? spawnTool('npx', ['tsx', 'bin/keys.ts', ...argv], env)
    : spawnTool(TSX, ['bin/keys.ts', ...argv], env);
}

/** `npm run keys -- <argv>` as an operator runs it, a real process the test can watch line by line and kill. */
export function startCli(argv: readonly string[], env: Readonly<Record<string, string>>): RunningTool {
  return startTool('npm', ['run', '--silent', 'keys', '--', ...argv], {
    npm_config_update_notifier: 'false',
    ...env,
  });
}

/**
 * A KeyStore in memory with a version counter. `beforeReplace` runs between an edit's read and its write, to
 * play a concurrent writer (it may clear itself to act once).
 */
export class MemoryStore implements KeyStore {
  readonly description = 'memory store';
  text: string | undefined;
  version = 0;
  replaceCalls = 0;
  beforeReplace: ((store: MemoryStore) => void) | undefined;
  /** Plays a lost answer: the write lands, but the caller is told it conflicted. */
  reportConflictAfterWriting = false;

  constructor(text: string | undefined) {
    this.text = text;
  }

  read(): Promise<Snapshot> {
    return Promise.resolve({ text: this.text, version: String(this.version) });
  }

  /** A write by someone else. */
  write(text: string): void {
    this.text = text;
    this.version++;
  }

  replace(expectedVersion: string, newText: string): Promise<ReplaceOutcome> {
    this.replaceCalls++;
    this.beforeReplace?.(this);
    if (String(this.version) !== expectedVersion)
      return Promise.resolve({ status: 'conflict', warnings: [] });
    this.write(newText);
    if (this.reportConflictAfterWriting) {
      this.reportConflictAfterWriting = false;
      return Promise.resolve({ status: 'conflict', warnings: [] });
    }
    return Promise.resolve({ status: 'replaced', warnings: [] });
  }
}

/** A registry (of secrets) of one shard held by `store` (a MemoryStore, say), as the engine edits a single secret. */
export function oneShardRegistry(store: KeyStore): Registry {
  return {
    kind: 'secrets',
    description: store.description,
    manifest: singleShardLayout('memory'),
    sharded: false,
    shard: (index) => ({ index, id: 'memory', store }),
    readShards: async (indices) =>
      new Map(await Promise.all(indices.map(async (index) => [index, await store.read()] as const))),
  };
}
