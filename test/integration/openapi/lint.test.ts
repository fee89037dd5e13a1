/**
 * openapi.yaml through the linters partners' tools use, at the versions package.json pins, offline: Spectral's
 * OpenAPI rules (.spectral.yaml) and Redocly's recommended rules (redocly.yaml) with no finding left, and the OWASP
 * ruleset for Spectral, every one of whose findings docs/contract.md explains.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../support/openapi-document';
import { spawnTool } from '../../support/tool-process';

const BIN = join(PROJECT_ROOT, 'node_modules', '.bin');

interface SpectralFinding {
  readonly code: string;
  readonly message: string;
  readonly path: readonly string[];
}

async function spectral(ruleset: string): Promise<SpectralFinding[]> {
  const directory = await mkdtemp(join(tmpdir(), 'payment-api-spectral-'));
  try {
    // To a file: on stdout, Spectral follows an empty JSON list with a line of prose.
    const report = join(directory, 'findings.json');
    const run = await spawnTool(
      join(BIN, 'spectral'),
      ['lint', '-r', ruleset, '-f', 'json', '-o', report, 'openapi.yaml'],
      {},
    );
    // Exit 1 means findings of error severity: the report still lists them.
    if (run.code !== 0 && run.code !== 1) throw new Error(`spectral failed (${run.code}):\n${run.stderr}`);
    return JSON.parse(await readFile(report, 'utf8')) as SpectralFinding[];
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

describe('openapi.yaml through the linters', () => {
  it('passes Spectral’s spectral:oas rules with no finding of any severity', async () => {
    const findings = await spectral('.spectral.yaml');

    expect(findings.map(({ code, path }) => `${code} at ${path.join('.')}`)).toEqual([]);
  });

  it('passes `redocly lint` with its recommended rules: no error, no warning', async () => {
    const run = await spawnTool(join(BIN, 'redocly'), ['lint', 'openapi.yaml', '--format=json'], {
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    });
    const report = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: readonly unknown[];
    };

    expect(run.code).toBe(0);
    expect(report.problems).toEqual([]);
    // The refusal-only operations of .redocly.lint-ignore.yaml, and nothing else.
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 7 });
  });

  it('leaves only OWASP ruleset findings that docs/contract.md explains, and explains no rule that found nothing', async () => {
    const findings = await spectral('.spectral-owasp.yaml');
    const contract = readFileSync(join(PROJECT_ROOT, 'docs', 'contract.md'), 'utf8');
    const section = contract.slice(contract.indexOf('### The OWASP ruleset'));
    const explained = new Set(section.match(/owasp:api\d+:\d{4}-[a-z0-9-]+/g) ?? []);

    const found = new Set(findings.map(({ code }) => code));

    expect([...found].sort()).toEqual([...explained].sort());
  });
});
