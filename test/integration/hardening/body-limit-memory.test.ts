/**
 * The body limit keeps memory flat: a 6 MB body of nested arrays, which JSON.parse turned into hundreds of MB (the
 * function has 256 MB), is refused with 413 without growing the process. Measured in processes of their own (peak
 * RSS), so nothing else in jest's worker counts; no time is asserted (the bench prints the figures).
 */
import { join } from 'node:path';
import type { BodyMemoryReport } from '../../support/body-memory-driver';
import { spawnTool, TSX } from '../../support/tool-process';

const DRIVER = join(__dirname, '..', '..', 'support', 'body-memory-driver.ts');
/** Far above what handling a refused body may add, far below what parsing it adds (over 300 MB on Node 20). */
const FLAT_KIB = 32 * 1024;

async function report(mode: 'handler' | 'parse', calls: number): Promise<BodyMemoryReport> {
  const run = await spawnTool(TSX, [DRIVER, mode, '6', String(calls)], {});
  if (run.code !== 0) throw new Error(`the driver failed:\n${run.stderr}`);
  return JSON.parse(run.stdout) as BodyMemoryReport;
}

describe('a 6 MB body of nested arrays', () => {
  it('gets 413 twenty times over, and the process grows by less than 32 MiB', async () => {
    const handled = await report('handler', 20);

    expect(handled.bodyBytes).toBe(6_000_000);
    expect(handled.statuses).toEqual(new Array<number>(20).fill(413));
    expect(handled.peakRssAfterKib - handled.peakRssBeforeKib).toBeLessThan(FLAT_KIB);
  });

  it('is a body the measure would catch: parsed once, it grows the process by far more', async () => {
    const parsed = await report('parse', 1);

    expect(parsed.peakRssAfterKib - parsed.peakRssBeforeKib).toBeGreaterThan(4 * FLAT_KIB);
  });
});
