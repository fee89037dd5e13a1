import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { KeyStore, ReplaceOutcome, Snapshot } from '../../cli/key-store';
import { run, type CliIo } from '../../cli/main';

export const PROJECT_ROOT = join(__dirname, '..', '..');

/** A generated key as the CLI prints it. */
export const GENERATED_KEY_PATTERN = /^payk_[A-Za-z0-9_-]{43}$/;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in-process with the given environment and captures both streams. */
export async function runCli(
  argv: readonly string[],
  env: CliIo['env'],
  extra: Omit<CliIo, 'stdout' | 'stderr' | 'env'> = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    ...extra,
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/**
 * Runs `tsx bin/keys.ts` as a real process: what `npm run keys --` runs, without npm's own start-up time.
 * `PATH` is kept so that node is found; nothing else of this process's environment leaks in.
 */
export function spawnCli(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  command = 'tsx',
): Promise<CliResult> {
  const [file, prefix] =
    command === 'npx'
      ? ['npx', ['tsx', 'bin/keys.ts']]
      : [join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx'), ['bin/keys.ts']];
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...prefix, ...argv], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** npm may warn about the machine's own npmrc on stderr; those lines are npm's, not the CLI's. */
export function cliStderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.startsWith('npm warn'));
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
