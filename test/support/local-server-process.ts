/**
 * The local server as a user runs it: `npm start`, in its own process group (npm → sh → tsx → node) so that
 * killAllLocalServers() can end the whole group even when a test fails. Stop signals go to the server process
 * itself (its pid is in the listening line): npm does not forward a SIGTERM sent to npm, while the server's exit
 * code does travel back up through tsx and npm.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from './moto';

const PROJECT_ROOT = join(__dirname, '..', '..');
const LISTENING = /payment-api local server listening on (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/;
const START_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 15_000;
/** Starting npm, tsx and (for one suite) moto can take a while on a loaded machine. */
export const SETUP_TIMEOUT_MS = 120_000;

/** Variables of the surrounding shell that would change which keys the server uses. */
const INHERITED_SETTINGS = [
  'PORT',
  'KEYS_FILE',
  'KEYS_SECRET_ID',
  'KEYS_STACK',
  'KEYS_REGISTRY',
  'KEYS_REGISTRY_FILE',
  'KEY_SHARDS',
  'KEY_SHARDS_PREVIOUS',
  'KEY_SHARD_NAME_PREFIX',
  'KEY_CACHE_TTL_SECONDS',
  'KEY_MAX_STALE_SECONDS',
  'LOG_LEVEL',
  'APP_RATE_LIMIT',
  'APP_RATE_BURST',
  'APP_RATE_LIMIT_FAILURE',
  'RATE_LIMIT_TABLE',
  'RATE_LIMIT_DEADLINE_MS',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_PROFILE',
];

export interface LocalServerProcess {
  readonly baseUrl: string;
  readonly serverPid: number;
  /** stdout and stderr so far. */
  output(): string;
  stderr(): string;
  /** npm's exit code, once it has exited. */
  readonly exited: Promise<number | null>;
}

const spawned = new Set<ChildProcess>();

export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The whole group is already gone.
  }
}

/** Call from afterAll: SIGKILLs every server group this module started. */
export function killAllLocalServers(): void {
  for (const child of spawned) killGroup(child);
}

/** Spawns `npm start` and collects its output; resolves when npm exits. */
export function spawnNpmStart(env: Readonly<Record<string, string>>): {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
} {
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    npm_config_update_notifier: 'false',
  };
  for (const name of INHERITED_SETTINGS) Reflect.deleteProperty(childEnv, name);
  const child = spawn('npm', ['start', '--silent'], {
    cwd: PROJECT_ROOT,
    env: { ...childEnv, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export async function startLocalServer(env: Readonly<Record<string, string>>): Promise<LocalServerProcess> {
  const { child, stdout, stderr, exited } = spawnNpmStart(env);
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
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      killGroup(child);
      throw new Error(`the local server did not start.\nstdout:\n${stdout()}\nstderr:\n${stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM to the server process; resolves with npm's exit code (the server's, passed up). */
export async function stopLocalServer(
  server: LocalServerProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
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
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', reject);
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
