/**
 * `npm run postman`: writes the Postman collection partners run (postman/payment-api.postman_collection.json),
 * generated from openapi.yaml by Portman with the settings in postman/ (portman-config.json: the contract tests and
 * variations; postman-config.json: openapi-to-postman's options). Run it whenever openapi.yaml changes; a test fails
 * while the committed collection differs from what this writes.
 *
 * Made reproducible after Portman: the ids Postman gives items and scripts on import are left out (Portman draws new
 * random ones on every run), so are variables no request uses, and the file is formatted as Prettier formats it.
 * `--output <path>` writes elsewhere.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { format } from 'prettier';

const ROOT = join(__dirname, '..');
export const COLLECTION_FILE = join(ROOT, 'postman', 'payment-api.postman_collection.json');

/** Fields Postman assigns on import: every `id` (items, scripts) and the collection's `postman_id`. */
const ASSIGNED_ON_IMPORT = new Set(['id', '_postman_id', 'postman_id']);

function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, child]) => !ASSIGNED_ON_IMPORT.has(key) && !(key === '_' && isEmptyAfter(child)))
      .map(([key, child]) => [key, withoutIds(child)]),
  );
}

/** Portman keeps the collection's postman_id under `_`; with it gone, `_` goes too. */
function isEmptyAfter(value: unknown): boolean {
  const stripped = withoutIds(value);
  return typeof stripped === 'object' && stripped !== null && Object.keys(stripped).length === 0;
}

/**
 * Keeps only the collection variables some request or script uses: openapi-to-postman adds one per variable of the
 * first server URL (apiId, region, stage), which `baseUrl` replaces.
 */
function usedVariablesOnly(collection: { variable?: { key: string }[] }): unknown {
  const { variable = [], ...rest } = collection;
  const text = JSON.stringify(rest);
  return { ...rest, variable: variable.filter(({ key }) => text.includes(`{{${key}}}`)) };
}

/** Generates the collection into `output`. Portman writes scratch files in its working directory: a temporary one. */
export async function writeCollection(output: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'payment-api-portman-'));
  try {
    const generated = join(work, 'collection.json');
    await promisify(execFile)(
      join(ROOT, 'node_modules', '.bin', 'portman'),
      [
        '--local',
        join(ROOT, 'openapi.yaml'),
        '--portmanConfigFile',
        join(ROOT, 'postman', 'portman-config.json'),
        '--postmanConfigFile',
        join(ROOT, 'postman', 'postman-config.json'),
        '--collectionName',
        'payment-api',
        '--output',
        generated,
      ],
      { cwd: work, maxBuffer: 16 * 1024 * 1024 },
    );
    const collection = withoutIds(
      usedVariablesOnly(JSON.parse(await readFile(generated, 'utf8')) as { variable?: { key: string }[] }),
    );
    await writeFile(output, await format(JSON.stringify(collection), { parser: 'json' }));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const flag = process.argv.indexOf('--output');
  const output = flag === -1 ? COLLECTION_FILE : resolve(process.argv[flag + 1] ?? '');
  await writeCollection(output);
  console.log(`wrote ${output}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
