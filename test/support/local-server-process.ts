/**
 * The local server as a user runs it: `npm start`, in its own process group (npm → sh → tsx → node) so that
 * killAllLocalServers() can end the whole group even when a test fails. Stop signals go to the server process
 * itself (its pid is in the listening line): npm does not forward a SIGTERM sent to npm, while the server's exit
 * code does travel back up through tsx and npm.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAll } from './fault-proxy';
import { freeLoopbackPort } from './loopback';
import { startTool, type RunningTool } from './tool-process';

const LISTENING = /payment-api local server listening on (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/;
const START_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 15_000;
/** Starting npm, tsx and (for one suite) moto can take a while on a loaded machine. */
export const SETUP_TIMEOUT_MS = 120_000;

export interface LocalServerProcess {
  readonly baseUrl: string;
  readonly serverPid: number;
  /** stdout and stderr so far. */
  output(): string;
  stderr(): string;
  /** npm's exit code, once it has exited (-1 when killed). */
  readonly exited: Promise<number>;
}

const spawned = new Set<RunningTool>();

/** Call from afterAll: SIGKILLs every server group this module started. */
export function killAllLocalServers(): void {
  for (const tool of spawned) tool.kill('SIGKILL');
}

export interface NpmStart {
  /** Each stream's whole lines so far. */
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** npm's exit code, once it has exited (-1 when killed). */
  readonly exited: Promise<number>;
  readonly hasExited: () => boolean;
  readonly kill: (signal: NodeJS.Signals) => void;
}

/**
 * Spawns `npm start` (startTool: its own process group, and nothing of this process's environment but PATH and HOME,
 * so no setting of the surrounding shell changes which keys it uses) and collects its output.
 */
export function spawnNpmStart(env: Readonly<Record<string, string>>): NpmStart {
  const tool = startTool('npm', ['start', '--silent'], { npm_config_update_notifier: 'false', ...env });
  spawned.add(tool);
  const state = { exited: false };
  const exited = tool.exited.then(({ code }) => {
    state.exited = true;
    return code;
  });
  const text = (stream: 'stdout' | 'stderr') => (): string =>
    tool.lines
      .filter((line) => line.stream === stream)
      .map((line) => `${line.text}\n`)
      .join('');
  return {
    stdout: text('stdout'),
    stderr: text('stderr'),
    exited,
    hasExited: () => state.exited,
    kill: (signal) => {
      tool.kill(signal);
    },
  };
}

export async function startLocalServer(env: Readonly<Record<string, string>>): Promise<LocalServerProcess> {
  const { stdout, stderr, exited, hasExited, kill } = spawnNpmStart(env);
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const match = LISTENING.exec(stdout());
    if (match?.[1] !== undefined && match[2] !== undefined) {
      return {
        baseUrl: match[1],
        serverPid: Number(match[2]),
        output: () => stdout() + stderr(),
        stderr,
        exited,
      };
    }
    if (hasExited() || Date.now() > deadline) {
      kill('SIGKILL');
      throw new Error(`the local server did not start.\nstdout:\n${stdout()}\nstderr:\n${stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM to the server process; resolves with npm's exit code (the server's, passed up). */
export async function stopLocalServer(
  server: LocalServerProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number> {
  process.kill(server.serverPid, signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      resolve('timeout');
    }, STOP_TIMEOUT_MS);
  });
  const outcome = await Promise.race([server.exited, timeout]);
  clearTimeout(timer);
  if (outcome === 'timeout')
    throw new Error(`the local server did not stop after ${signal}:\n${server.output()}`);
  return outcome;
}

export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface Call {
  readonly method?: string;
  readonly path?: string;
  /** Raw header list (name, value, …): repeats and casing go out exactly as written. */
  readonly headers?: readonly string[];
  readonly body?: string | Buffer;
}

export function send(baseUrl: string, call: Call): Promise<Reply> {
  const url = new URL(call.path ?? '/payment', baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: call.method ?? 'POST',
        path: url.pathname + url.search,
        headers: ['Host', url.host, ...(call.headers ?? [])],
        agent: false,
      },
      (res) => {
        readAll(res).then((body) => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body.toString('utf8') });
        }, reject);
      },
    );
    req.on('error', reject);
    req.end(call.body);
  });
}

export function credentials(appId: string, appKey: string): string[] {
  return ['Content-Type', 'application/json', 'App-id', appId, 'App-key', appKey];
}

export interface KeyFileServer {
  readonly server: LocalServerProcess;
  /** The server's key file (mode 0600), in a folder of its own. */
  readonly keysFile: string;
  /** Stops the server and removes the folder. */
  stop(): Promise<void>;
}

/** `npm start` on a free port, with a key file of its own holding `keys` (the secret's format: lists or app objects). */
export async function startLocalServerWithKeys(
  keys: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string>> = {},
): Promise<KeyFileServer> {
  const directory = await mkdtemp(join(tmpdir(), 'payment-api-local-'));
  const keysFile = join(directory, 'keys.json');
  await writeFile(keysFile, JSON.stringify(keys));
  await chmod(keysFile, 0o600);
  const server = await startLocalServer({
    PORT: String(await freeLoopbackPort()),
    KEYS_FILE: keysFile,
    ...env,
  });
  return {
    server,
    keysFile,
    async stop() {
      try {
        await stopLocalServer(server);
      } finally {
        killAllLocalServers();
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}
