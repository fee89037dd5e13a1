/**
 * The local server's key file as a user may break it, on `npm start` itself: a FIFO, a directory or a file over
 * 65,536 bytes in its place. Each is refused at once in one line, the keys already read go on being served, and a
 * stop signal always stops the server (a FIFO once hung every request and the stop with them).
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../../shared/keys/key-material';
import {
  credentials,
  killAllLocalServers,
  send,
  SETUP_TIMEOUT_MS,
  spawnNpmStart,
  startLocalServer,
  stopLocalServer,
} from '../../support/local-server-process';
import { freeLoopbackPort } from '../../support/loopback';

/** Long enough on a loaded machine; the server answers a refused read at once. */
const REQUEST_DEADLINE_MS = 10_000;

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'payment-api-key-file-'));
});

afterEach(async () => {
  killAllLocalServers();
  await rm(directory, { recursive: true, force: true });
});

/** A key file of `content`, mode 0600, at `name` in the test's folder. */
async function keyFileOf(name: string, content: string): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, content);
  await chmod(path, 0o600);
  return path;
}

/** A document of the secret's format over 65,536 bytes: 800 apps of one key each (about 74,000 bytes). */
function oversized(): string {
  const apps: Record<string, string> = {};
  for (let index = 0; index < 800; index++)
    apps[`merchant-${String(index).padStart(36, '0')}`] = generateKey();
  const text = JSON.stringify(apps);
  if (Buffer.byteLength(text) <= 65_536) throw new Error('the oversized fixture must be over 65,536 bytes');
  return text;
}

/** `promise`, or a rejection naming the deadline: a request the server never answers fails the test clearly. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

async function eventually(check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe('npm start when its key file is replaced while it runs', () => {
  it.each([
    [
      'a FIFO',
      async (path: string) => {
        const fifo = join(directory, 'fifo');
        execFileSync('mkfifo', [fifo]);
        await rename(fifo, path);
      },
      'is a FIFO, not a regular file: refused',
    ],
    [
      'a file over 65,536 bytes',
      async (path: string) => {
        const large = await keyFileOf('large.json', oversized());
        await rename(large, path);
      },
      'bytes, over the 65,536 one secret can hold: refused',
    ],
    [
      'a directory',
      async (path: string) => {
        const folder = join(directory, 'folder');
        await mkdir(folder);
        await rm(path);
        await rename(folder, path);
      },
      'is a directory, not a regular file: refused',
    ],
  ] as const)(
    'refuses %s at once in one line, serves the keys it read, and stops on SIGTERM',
    async (_, replace, refusal) => {
      // Arrange: a server on a good key file, with a short TTL so each request after it reads the file again.
      const key = generateKey();
      const path = await keyFileOf('keys.json', JSON.stringify({ partner: key }));
      const server = await startLocalServer({
        PORT: String(await freeLoopbackPort()),
        KEYS_FILE: path,
        KEY_CACHE_TTL_SECONDS: '1',
        KEY_MAX_STALE_SECONDS: '300',
      });
      const ask = () =>
        within(send(server.baseUrl, { headers: credentials('partner', key) }), REQUEST_DEADLINE_MS);
      expect((await ask()).status).toBe(200);

      // Act
      await replace(path);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const statuses = [];
      for (let request = 0; request < 5; request++) statuses.push((await ask()).status);
      const refused = await eventually(() => server.output().includes(refusal));
      const exitCode = await stopLocalServer(server, 'SIGTERM');

      // Assert
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      expect(refused).toBe(true);
      const refusalLines = server
        .output()
        .split('\n')
        .filter((line) => line.includes(refusal));
      expect(refusalLines.every((line) => line.length < 1_000)).toBe(true);
      expect(server.output()).not.toContain(key);
      expect(exitCode).toBe(0);
    },
    SETUP_TIMEOUT_MS,
  );
});

describe('npm start on a key file it cannot use', () => {
  it.each([
    [
      'over 65,536 bytes',
      () => keyFileOf('keys.json', oversized()),
      /^payment-api local server: cannot set up the keys: key file \S+keys\.json is [\d,]+ bytes, over the 65,536 one secret can hold: refused$/,
    ],
    [
      'a FIFO',
      () => {
        const path = join(directory, 'keys.json');
        execFileSync('mkfifo', [path]);
        return Promise.resolve(path);
      },
      /^payment-api local server: cannot set up the keys: key file \S+keys\.json is a FIFO, not a regular file: refused$/,
    ],
  ] as const)(
    'exits 1 with one line that says why (%s)',
    async (_, make, line) => {
      const path = await make();

      const started = spawnNpmStart({ PORT: String(await freeLoopbackPort()), KEYS_FILE: path });
      const exitCode = await started.exited;

      expect(exitCode).toBe(1);
      expect(started.stderr().trim().split('\n')).toEqual([expect.stringMatching(line)]);
    },
    SETUP_TIMEOUT_MS,
  );
});
