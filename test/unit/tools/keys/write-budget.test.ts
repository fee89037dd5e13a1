import {
  budgetRefusal,
  budgetWarning,
  writeBudget,
  type ListedVersion,
} from '../../../../tools/keys/write-budget';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const HOUR_MS = 3_600_000;

/** `count` versions made an hour apart, the newest an hour ago; the newest carries AWSCURRENT. */
function versions(count: number, hoursAgo = 1): ListedVersion[] {
  return Array.from({ length: count }, (_, i) => ({
    versionId: `v${i}`,
    createdAt: NOW - ((hoursAgo + (count - 1 - i)) * HOUR_MS) / 10,
    stages: i === count - 1 ? ['AWSCURRENT'] : [],
  }));
}

describe('writeBudget', () => {
  it.each<[number, string]>([
    [0, 'ok'],
    [78, 'ok'],
    [79, 'warn'],
    [99, 'warn'],
    [100, 'refuse'],
  ])('with %i versions made today, the next write is %s', (count, verdict) => {
    expect(writeBudget(versions(count), NOW).verdict).toBe(verdict);
  });

  it('counts what Secrets Manager keeps: every version younger than 24 hours, and labelled older ones', () => {
    const old = (id: string, stages: string[]): ListedVersion => ({
      versionId: id,
      createdAt: NOW - 48 * HOUR_MS,
      stages,
    });

    const budget = writeBudget([...versions(3), old('previous', ['AWSPREVIOUS']), old('gone', [])], NOW);

    expect(budget).toMatchObject({ held: 4, young: 3, verdict: 'ok' });
  });

  it('says when enough versions turn 24 hours old for the writes to fit', () => {
    const listed = versions(100);
    const oldest = Math.min(...listed.map((version) => version.createdAt ?? NOW));

    expect(writeBudget(listed, NOW).fitsFrom).toBe(oldest + 24 * HOUR_MS);
    expect(writeBudget(listed, NOW, 3).fitsFrom).toBe((listed[2]?.createdAt ?? 0) + 24 * HOUR_MS);
  });

  it('counts a version without a date as young, so it never under-counts', () => {
    expect(writeBudget([{ versionId: 'x', createdAt: undefined, stages: [] }], NOW).young).toBe(1);
  });

  it('refuses in one line that says why and what to do', () => {
    const budget = writeBudget(versions(100), NOW);

    expect(budgetRefusal('shard 3 (secret s)', budget)).toBe(
      'shard 3 (secret s) already holds 100 versions Secrets Manager keeps (100 made in the last 24 hours), and it ' +
        'refuses a version past 100 until one is 24 hours old, so this write would fail; nothing was written: batch ' +
        `changes into one write per shard with "apply", or wait until ${new Date(budget.fitsFrom ?? 0).toISOString().replace('.000Z', 'Z')}`,
    );
    expect(budgetWarning('secret s', writeBudget(versions(85), NOW))).toBe(
      'secret s now holds 86 of the 100 versions Secrets Manager allows within 24 hours (each write adds one; it ' +
        'refuses writes past 100): batch changes into one write per shard with "apply", or space edits out',
    );
  });
});
