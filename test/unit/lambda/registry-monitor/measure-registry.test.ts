import {
  ENTRY_PROBLEMS_LOGGED,
  measureShard,
  summarizeRegistry,
  type ShardOutcome,
} from '../../../../lambda/registry-monitor/measure-registry';
import { appsOfShard, DAY_MS, KEYS, NOW, WARNING_MS } from './fixtures';

const CONTEXT = { now: NOW, expiryWarningMs: WARNING_MS, shards: 8 };

function measured(outcome: ShardOutcome) {
  if (!outcome.ok) throw new Error(`expected a measurement, got ${outcome.failure.problem}`);
  return outcome.measurement;
}

describe('measureShard', () => {
  it('counts the apps, their keys and the keys expiring soon as KeysExpiringSoon always has, and the fill', () => {
    // Arrange: shard 3 of 8 holds two apps of its own: one whose only key expires in 3 days, one with two keys.
    const [soon, steady] = appsOfShard(3, 8, 2);
    const value = JSON.stringify({
      [soon ?? '']: [{ key: KEYS.expiring, expires: new Date(NOW + 3 * DAY_MS).toISOString() }],
      [steady ?? '']: [{ key: KEYS.plain, expires: new Date(NOW + 2 * DAY_MS).toISOString() }, KEYS.lasting],
    });

    // Act
    const measurement = measured(measureShard(3, value, CONTEXT));

    // Assert: the key expiring beside one that lives on is a rotation in progress, not counted.
    expect(measurement).toEqual({
      shard: 3,
      bytes: Buffer.byteLength(value),
      fillPercent: (Buffer.byteLength(value) / 65_536) * 100,
      apps: 2,
      keys: 3,
      keysExpiringSoon: 1,
      malformedEntries: 0,
      appsElsewhere: 0,
      entryProblems: [],
    });
  });

  it('counts the apps whose shard under the current count is another one: what a reshard has left to move', () => {
    const home = appsOfShard(5, 8, 1, 'home');
    const away = [...appsOfShard(2, 8, 2, 'away'), ...appsOfShard(0, 8, 1, 'away')];
    const value = JSON.stringify(Object.fromEntries([...home, ...away].map((appId) => [appId, KEYS.plain])));

    expect(measured(measureShard(5, value, CONTEXT)).appsElsewhere).toBe(3);
    expect(measured(measureShard(5, value, { ...CONTEXT, shards: 1 })).appsElsewhere).toBe(4);
  });

  it('reports malformed entries by position only, without their app id or content', () => {
    // Arrange: a key pasted as an app id, with a malformed value: nothing of it may come out.
    const pasted = 'test-monitor-pasted-where-an-app-id-goes-0123456789';
    const value = JSON.stringify({ good: KEYS.plain, [pasted]: 42, short: 'abc' });

    // Act
    const measurement = measured(measureShard(0, value, CONTEXT));

    // Assert
    expect(measurement).toMatchObject({ apps: 1, keys: 1, malformedEntries: 2 });
    expect(measurement.entryProblems).toEqual([
      expect.stringMatching(/^entry #2, key #1: /) as unknown,
      expect.stringMatching(/^entry #3, key #1: /) as unknown,
    ]);
    expect(JSON.stringify(measurement)).not.toContain(pasted);
    expect(JSON.stringify(measurement)).not.toContain('abc"');
  });

  it(`names at most ${ENTRY_PROBLEMS_LOGGED} malformed entries, and counts them all`, () => {
    const entries: Record<string, unknown> = { good: KEYS.plain };
    for (let index = 0; index < 25; index++) entries[`bad-${index}`] = 7;

    const measurement = measured(measureShard(0, JSON.stringify(entries), CONTEXT));

    expect(measurement.malformedEntries).toBe(25);
    expect(measurement.entryProblems).toHaveLength(ENTRY_PROBLEMS_LOGGED);
  });

  it('measures an empty shard: no apps, its two bytes', () => {
    expect(measured(measureShard(7, '{}', CONTEXT))).toMatchObject({ bytes: 2, apps: 0, keys: 0 });
  });

  it.each([
    ['not JSON', `{"${KEYS.plain}": `, 'secret is not valid JSON'],
    ['a JSON array', JSON.stringify([KEYS.plain]), 'secret must be a JSON object'],
    ['every entry malformed', JSON.stringify({ a: 1, b: 2 }), 'secret has 2 app entries and none is valid'],
  ])(
    'fails a shard whose value is %s as malformed, in words that never quote it',
    (_case, value, problem) => {
      const outcome = measureShard(4, value, CONTEXT);

      expect(outcome).toEqual({
        ok: false,
        failure: { shard: 4, state: 'malformed', problem: expect.stringContaining(problem) as unknown },
      });
      expect(JSON.stringify(outcome)).not.toContain(KEYS.plain);
    },
  );
});

describe('summarizeRegistry', () => {
  const shard = (index: number, fillPercent: number, counts: Partial<Record<string, number>> = {}) =>
    ({
      ok: true,
      measurement: {
        shard: index,
        bytes: Math.round((fillPercent / 100) * 65_536),
        fillPercent,
        apps: counts.apps ?? 1,
        keys: counts.keys ?? 1,
        keysExpiringSoon: counts.expiring ?? 0,
        malformedEntries: 0,
        appsElsewhere: counts.elsewhere ?? 0,
        entryProblems: [],
      },
    }) as const;
  const failed = (index: number): ShardOutcome => ({
    ok: false,
    failure: { shard: index, state: 'unreadable', problem: 'AccessDeniedException: no' },
  });

  it('names the fullest shard, adds up the others, and lists the failed shards in order', () => {
    const summary = summarizeRegistry([
      shard(0, 12.5, { apps: 10, keys: 12, expiring: 1 }),
      failed(3),
      shard(1, 81.25, { apps: 70, keys: 90, elsewhere: 4 }),
      failed(2),
      shard(4, 40, { apps: 30, keys: 30, expiring: 2 }),
    ]);

    expect(summary).toEqual({
      measuredShards: 3,
      failedShards: [2, 3],
      fullest: { shard: 1, fillPercent: 81.25, bytes: 53_248 },
      apps: 110,
      keys: 132,
      keysExpiringSoon: 3,
      appsElsewhere: 4,
    });
  });

  it('names no fullest shard when none could be measured', () => {
    expect(summarizeRegistry([failed(0), failed(1)])).toEqual({
      measuredShards: 0,
      failedShards: [0, 1],
      apps: 0,
      keys: 0,
      keysExpiringSoon: 0,
      appsElsewhere: 0,
    });
  });
});
