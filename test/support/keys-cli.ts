import { join } from 'node:path';
import type { KeyStore, ReplaceOutcome, Snapshot } from '../../tools/keys/key-store';
import { run, type CliIo } from '../../tools/keys/main';
import { runInProcess, spawnTool, TSX, type ToolRun } from './tool-process';

export const PROJECT_ROOT = join(__dirname, '..', '..');

/** A generated key as the CLI prints it. */
export const GENERATED_KEY_PATTERN = /^payk_[A-Za-z0-9_-]{43}$/;

export type CliResult = ToolRun;

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

export { ownStderrLines as cliStderrLines } from './tool-process';

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
