/**
 * The local server end to end: started exactly as `npm start` starts it, spoken to over real HTTP.
 *
 * Each server runs in its own process group (npm → sh → tsx → node), killed whole in afterAll, so nothing
 * outlives the suite even when a test fails. Stop signals go to the server process itself (its pid is in the
 * listening line): npm does not forward a SIGTERM sent to npm, while the server's exit code does travel back
 * up through tsx and npm, so npm's exit code is the server's.
 *
 * What a request gets (each status, body and header) is the handler's and the server's to prove, at unit level
 * (test/unit/lambda/payment/create-handler.test.ts, test/unit/tools/local-server/{routing,server}.test.ts), and
 * test/integration/openapi/local-server-answers.test.ts checks this process's answers against openapi.yaml. Here:
 * what only a real process shows (its files, its banner, a key file replaced while it runs, its signals, its exits).
 */
import { access, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../../shared/keys/key-material';
import { SUCCESS_BODY } from '../../../shared/api/responses';
import {
  credentials,
  killAllLocalServers,
  send,
  SETUP_TIMEOUT_MS,
  spawnNpmStart,
  startLocalServer,
  stopLocalServer,
  type LocalServerProcess,
} from '../../support/local-server-process';
import { freeLoopbackPort } from '../../support/loopback';
import { createMotoSecret, MOTO_AWS_ENV, sharedMoto, type MotoServer } from '../../support/moto';
import { spawnTool } from '../../support/tool-process';

afterAll(() => {
  killAllLocalServers();
});

function occurrences(text: string, fragment: string): number {
  return text.split(fragment).length - 1;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

describe('npm start on a first run (no keys file yet)', () => {
  let directory: string;
  let keysFile: string;
  let server: LocalServerProcess;
  let demoKey: string;
  const addedKey = generateKey();

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'payment-api-e2e-'));
    keysFile = join(directory, 'private', 'keys.json');
    // The default TTL (60 s): a key added below must work because the file is watched, not because the TTL ran out.
    server = await startLocalServer({ PORT: String(await freeLoopbackPort()), KEYS_FILE: keysFile });
    demoKey = (JSON.parse(await readFile(keysFile, 'utf8')) as { demo: string[] }).demo[0] ?? '';
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('prints a ready command that sends the generated key to curl on standard input, and it gets 200', async () => {
    // Arrange
    const lines = server.output().split('\n');
    const command = lines[lines.findIndex((line) => line.startsWith('try (')) + 1]?.trim() ?? '';

    // Act
    const run = await spawnTool('bash', ['-c', command], {});

    // Assert
    expect(demoKey).toMatch(/^pay_[0-9A-Za-z]{38}$/);
    expect(command).toMatch(/^node -p '.*' \| curl -i -X POST \S+\/payment .* -H @- -d '\{\}'$/);
    expect(command).not.toContain(demoKey);
    expect(run.stdout).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(run.stdout).toContain(JSON.stringify(SUCCESS_BODY));
    expect(server.output()).toContain(`keys: file ${keysFile}, just created with a new key for app "demo"`);
    expect(server.output()).toContain('re-read as soon as it changes (and every 60 s)');
  });

  it('accepts a key added to the file while it runs at once, its TTL far from over', async () => {
    // Arrange
    const before = await send(server.baseUrl, { headers: credentials('second-app', addedKey) });
    const next = join(directory, 'private', 'keys.json.next');
    await writeFile(next, JSON.stringify({ demo: [demoKey], 'second-app': [addedKey] }), { mode: 0o600 });

    // Act: the key CLI's way, a new file renamed over the old; then the very next request.
    await rename(next, keysFile);
    const after = await send(server.baseUrl, { headers: credentials('second-app', addedKey) });

    // Assert
    expect(before.status).toBe(401);
    expect(after.status).toBe(200);
  });

  it('never prints a key, not even the one it generated', () => {
    // Act
    const output = server.output();

    // Assert
    expect(occurrences(output, demoKey)).toBe(0);
    expect(occurrences(output, addedKey)).toBe(0);
    expect(output).not.toMatch(/payk_[A-Za-z0-9_-]{43}|pay_[0-9A-Za-z]{38}/);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    // Act
    const code = await stopLocalServer(server, 'SIGTERM');

    // Assert
    expect(code).toBe(0);
    expect(server.output()).toContain('payment-api local server: stopped');
    expect(occurrences(server.output(), demoKey)).toBe(0);
  });
});

describe('npm start with an existing keys file', () => {
  let directory: string;
  let keysFile: string;
  let server: LocalServerProcess;
  const existingKey = generateKey();
  const fileContent = `${JSON.stringify({ demo: [existingKey] })}\n`;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'payment-api-e2e-'));
    keysFile = join(directory, 'keys.json');
    await writeFile(keysFile, fileContent, { mode: 0o600 });
    server = await startLocalServer({ PORT: String(await freeLoopbackPort()), KEYS_FILE: keysFile });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('serves the keys of the file and leaves the file as it was', async () => {
    // Act
    const reply = await send(server.baseUrl, { headers: credentials('demo', existingKey) });

    // Assert
    expect(reply.status).toBe(200);
    expect(await readFile(keysFile, 'utf8')).toBe(fileContent);
  });

  it('stops on SIGINT with exit code 0, having printed no key', async () => {
    // Act
    const code = await stopLocalServer(server, 'SIGINT');

    // Assert
    expect(code).toBe(0);
    expect(occurrences(server.output(), existingKey)).toBe(0);
  });
});

// Which line each setting gets is test/unit/tools/local-server/local-settings.test.ts's; here, that the process
// refusing to start says it in one line, with no stack trace, exit 1, and creates no keys file.
describe('npm start that cannot start', () => {
  let directory: string;
  let blocker: Server;
  let port: number;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'payment-api-e2e-'));
    port = await freeLoopbackPort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    await rm(directory, { recursive: true, force: true });
  });

  it.each<[string, () => Record<string, string>, () => string]>([
    [
      'on a port already in use',
      () => ({ PORT: String(port) }),
      () => `port ${port} on 127.0.0.1 is already in use; set PORT to a free port`,
    ],
    [
      'with an invalid setting',
      () => ({ PORT: '0', LOG_LEVEL: 'verbose' }),
      () => 'LOG_LEVEL must be one of debug, info, warn, error, got "verbose"',
    ],
  ])('%s: exits 1 with one clear line and creates no keys file', async (_case, settings, message) => {
    // Arrange
    const keysFile = join(directory, 'keys.json');

    // Act
    const run = spawnNpmStart({ ...settings(), KEYS_FILE: keysFile });
    const code = await run.exited;

    // Assert
    expect(code).toBe(1);
    const ourLines = run
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('payment-api local server'));
    expect(ourLines).toEqual([`payment-api local server: ${message()}`]);
    expect(run.stderr()).not.toMatch(/\n\s+at /);
    expect(await exists(keysFile)).toBe(false);
  });
});

describe('npm start with KEYS_SECRET_ID (keys from Secrets Manager, here moto)', () => {
  const secretName = 'payment-api/local-server-e2e';
  const partnerKey = generateKey();
  let moto: MotoServer;
  let directory: string;
  let keysFile: string;
  let server: LocalServerProcess;

  beforeAll(async () => {
    moto = await sharedMoto();
    await createMotoSecret(moto, secretName, JSON.stringify({ partner: [partnerKey] }));
    directory = await mkdtemp(join(tmpdir(), 'payment-api-e2e-'));
    keysFile = join(directory, 'keys.json');
    server = await startLocalServer({
      ...moto.awsEnv,
      PORT: String(await freeLoopbackPort()),
      KEYS_SECRET_ID: secretName,
      KEYS_FILE: keysFile,
    });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await moto.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it('says the keys come from the secret, through the configured endpoint', () => {
    // Assert
    expect(server.output()).toContain(
      `keys: Secrets Manager secret ${secretName} (region ${MOTO_AWS_ENV.AWS_REGION}, endpoint ${moto.endpoint})`,
    );
  });

  it('answers 200 for the key in the secret', async () => {
    // Act
    const reply = await send(server.baseUrl, { headers: credentials('partner', partnerKey) });

    // Assert
    expect(reply.status).toBe(200);
  });

  it('creates no keys file and prints no key', async () => {
    // Assert
    expect(await exists(keysFile)).toBe(false);
    expect(occurrences(server.output(), partnerKey)).toBe(0);
    expect(server.output()).not.toMatch(/payk_[A-Za-z0-9_-]{43}|pay_[0-9A-Za-z]{38}/);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    // Act / Assert
    expect(await stopLocalServer(server)).toBe(0);
  });
});
