/**
 * The Postman collection partners run (postman/), as they run it: regenerated from openapi.yaml by `npm run postman`
 * (Portman) it is the committed file, and newman runs it clean against `npm start`, reaching every status a
 * caller can cause. The key travels in an environment file of mode 0600, never on newman's command line.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../../shared/keys/key-material';
import {
  SETUP_TIMEOUT_MS,
  startLocalServerWithKeys,
  type KeyFileServer,
} from '../../support/local-server-process';
import { PROJECT_ROOT } from '../../support/openapi-document';
import { spawnTool, TSX } from '../../support/tool-process';

const COLLECTION_FILE = join(PROJECT_ROOT, 'postman', 'payment-api.postman_collection.json');

const APP_KEY = generateKey();
let local: KeyFileServer;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'payment-api-newman-'));
  local = await startLocalServerWithKeys({ demo: [APP_KEY] });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await local.stop();
  await rm(work, { recursive: true, force: true });
});

interface NewmanSummary {
  readonly run: {
    readonly stats: { readonly assertions: { readonly total: number; readonly failed: number } };
    readonly failures: readonly { readonly error: { readonly message: string } }[];
    readonly executions: readonly {
      readonly item: { readonly name: string };
      readonly response?: { readonly code: number };
    }[];
  };
}

describe('the Postman collection', () => {
  it('is what `npm run postman` generates from openapi.yaml today', async () => {
    const regenerated = join(work, 'regenerated.json');

    // The script `npm run postman` runs, into a file of the test's own.
    const run = await spawnTool(TSX, ['scripts/postman-collection.ts', '--output', regenerated], {});

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(await readFile(regenerated, 'utf8')).toBe(await readFile(COLLECTION_FILE, 'utf8'));
  });

  it('takes the URL and both key headers from baseUrl, appId and appKey, and holds no key', async () => {
    const text = await readFile(COLLECTION_FILE, 'utf8');
    const collection = JSON.parse(text) as { variable: { key: string; value: string }[] };

    expect(collection.variable.map(({ key }) => key)).toEqual(
      expect.arrayContaining(['baseUrl', 'appId', 'appKey']),
    );
    expect(collection.variable.find(({ key }) => key === 'appKey')?.value).toBe('');
    expect(text).toContain('"key": "App-id", "value": "{{appId}}"');
    expect(text).toContain('"key": "App-key", "value": "{{appKey}}"');
    expect(text).not.toMatch(/payk_[A-Za-z0-9_-]{43}|pay_[0-9A-Za-z]{38}/);
  });

  it('runs clean with newman against the local server, every status a caller can cause among its answers', async () => {
    // Arrange: the key in an environment file only its owner can read, as docs/contract.md tells partners.
    const environment = join(work, 'local.postman_environment.json');
    await writeFile(environment, JSON.stringify({ values: [{ key: 'appKey', value: APP_KEY }] }), {
      mode: 0o600,
    });
    await chmod(environment, 0o600);
    const report = join(work, 'newman.json');

    // Act
    const run = await spawnTool(
      join(PROJECT_ROOT, 'node_modules', '.bin', 'newman'),
      [
        'run',
        COLLECTION_FILE,
        '--environment',
        environment,
        '--env-var',
        `baseUrl=${local.server.baseUrl}`,
        '--reporters',
        'json',
        '--reporter-json-export',
        report,
      ],
      {},
    );

    // Assert
    const { run: summary } = JSON.parse(await readFile(report, 'utf8')) as NewmanSummary;
    expect(summary.failures.map(({ error }) => error.message)).toEqual([]);
    expect(run.code).toBe(0);
    expect(summary.stats.assertions.failed).toBe(0);
    expect(summary.stats.assertions.total).toBeGreaterThanOrEqual(100);
    const statuses = new Set(summary.executions.map(({ response }) => response?.code));
    expect([...statuses].sort()).toEqual([200, 400, 401, 404, 405, 413, 415]);
    expect(run.stdout + run.stderr).not.toContain(APP_KEY);
  });
});
