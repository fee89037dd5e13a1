import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/**
 * Loads the bundled asset in a fresh Node process, as the Lambda runtime does (require index.js, call the
 * exported handler), invokes it once per event in order, and returns the results and everything it logged.
 * Only Node built-ins are available to the child: the asset must carry its own dependencies.
 */
const DRIVER = `
const { readFileSync, writeFileSync } = require('node:fs');
const [assetFile, eventsFile, resultsFile] = process.argv.slice(1);
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const { handler } = require(assetFile);
(async () => {
  const results = [];
  for (const event of events) results.push(await handler(event, {}));
  writeFileSync(resultsFile, JSON.stringify(results));
})().catch((error) => { console.error('driver failed:', error && error.name); process.exit(1); });
`;

export interface AssetRun {
  readonly results: APIGatewayProxyResult[];
  /** Everything the process printed: the Lambda's logs. */
  readonly output: string;
}

export async function invokeAsset(
  assetDir: string,
  events: readonly APIGatewayProxyEvent[],
  env: Readonly<Record<string, string>>,
): Promise<AssetRun> {
  const work = mkdtempSync(join(tmpdir(), 'payment-asset-'));
  try {
    const eventsFile = join(work, 'events.json');
    const resultsFile = join(work, 'results.json');
    writeFileSync(eventsFile, JSON.stringify(events));
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['-e', DRIVER, join(assetDir, 'index.js'), eventsFile, resultsFile],
      // A clean environment: nothing from this test process leaks into the "runtime".
      { env: { PATH: process.env.PATH ?? '', ...env }, cwd: work, maxBuffer: 16 * 1024 * 1024 },
    );
    return {
      results: JSON.parse(readFileSync(resultsFile, 'utf8')) as APIGatewayProxyResult[],
      output: stdout + stderr,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
