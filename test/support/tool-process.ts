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

/** A line a running tool wrote, and when it arrived (epoch ms). */
export interface ToolLine {
  readonly stream: 'stdout' | 'stderr';
  readonly text: string;
  readonly at: number;
}

export interface RunningTool {
  /** Every whole line so far, as it arrived. */
  readonly lines: readonly ToolLine[];
  /** Resolves with the exit code and both streams once the process has exited (-1 when killed). */
  readonly exited: Promise<ToolRun>;
  /** Resolves with the first line of `stream` that `matches`, once it has arrived. */
  lineMatching(stream: ToolLine['stream'], matches: RegExp): Promise<ToolLine>;
  /** Sends `signal` to the tool's whole process group (npm, its shell, tsx and node). */
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts a tool as a real process in the project root, as a user does, in a process group of its own. `PATH` and
 * `HOME` are kept so node and npm are found; nothing else of this process's environment leaks in.
 */
export function startTool(
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): RunningTool {
  const child = spawn(file, [...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: ToolLine[] = [];
  const waiting: (() => void)[] = [];
  const output = { stdout: '', stderr: '' };
  const partial = { stdout: '', stderr: '' };
  const collect = (stream: ToolLine['stream']) => (chunk: Buffer) => {
    const text = chunk.toString();
    output[stream] += text;
    const parts = (partial[stream] + text).split('\n');
    partial[stream] = parts.pop() ?? '';
    const at = Date.now();
    for (const line of parts) lines.push({ stream, text: line, at });
    for (const wake of waiting.splice(0)) wake();
  };
  child.stdout.on('data', collect('stdout'));
  child.stderr.on('data', collect('stderr'));
  const state = { closed: false };
  const exited = new Promise<ToolRun>((resolve, reject) => {
    const close = (): void => {
      state.closed = true;
      for (const wake of waiting.splice(0)) wake();
    };
    child.once('error', (error) => {
      close();
      reject(error);
    });
    child.once('close', (code) => {
      close();
      resolve({ code: code ?? -1, stdout: output.stdout, stderr: output.stderr });
    });
  });
  return {
    lines,
    exited,
    async lineMatching(stream, matches) {
      for (;;) {
        const line = lines.find((candidate) => candidate.stream === stream && matches.test(candidate.text));
        if (line !== undefined) return line;
        if (state.closed)
          throw new Error(`the tool exited without a ${stream} line matching ${String(matches)}`);
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    },
    kill(signal) {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The whole group is already gone.
      }
    },
  };
}

/** Runs a tool as a real process in the project root (startTool), and resolves once it has exited. */
export function spawnTool(
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<ToolRun> {
  return startTool(file, args, env).exited;
}

/** npm may warn about the machine's own npmrc on stderr; those lines are npm's, not the tool's. */
export function ownStderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.startsWith('npm warn'));
}
