import { spawn } from 'node:child_process';
import { join } from 'node:path';

const PROJECT_ROOT = join(__dirname, '..', '..');

/** The project's tsx, as npm scripts run it. */
export const TSX = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');

export interface ToolRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

interface WritableStreams {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** Runs a command-line tool's `run(argv, io)` in this process, capturing both streams. */
export async function runInProcess<Io extends WritableStreams>(
  run: (argv: readonly string[], io: Io) => Promise<number>,
  argv: readonly string[],
  io: Omit<Io, keyof WritableStreams>,
): Promise<ToolRun> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    ...io,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  } as Io);
  return { code, stdout, stderr };
}

/**
 * Runs a tool as a real process in the project root, as a user does. `PATH` and `HOME` are kept so node and npm
 * are found; nothing else of this process's environment leaks in.
 */
export function spawnTool(
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], {
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

/** npm may warn about the machine's own npmrc on stderr; those lines are npm's, not the tool's. */
export function ownStderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.startsWith('npm warn'));
}
