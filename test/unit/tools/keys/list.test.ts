import { serializeKeyDocument } from '../../../../shared/keys/key-document';
import { shardOf } from '../../../../shared/keys/shard';
import { streamList } from '../../../../tools/keys/list';
import type { Registry } from '../../../../tools/keys/registry-access';
import { plainKeyDocument } from '../../../support/keys-cli';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const SHARDS = 45;

/** 200 apps in their homes under 45 shards, and a log of reads and writes in the order they happen. */
function fixture() {
  const appIds = Array.from({ length: 200 }, (_, index) => `merchant-${String(index).padStart(3, '0')}`);
  const texts = Array.from({ length: SHARDS }, (_, index) =>
    serializeKeyDocument(
      plainKeyDocument(
        Object.fromEntries(
          appIds
            .filter((appId) => shardOf(appId, SHARDS) === index)
            .map((appId) => [appId, [`key-of-${appId}-0123456789`]]),
        ),
      ),
    ),
  );
  const events: string[] = [];
  const registry: Registry = {
    kind: 'secrets',
    description: 'registry test',
    manifest: { shards: SHARDS, shardIds: texts.map((_, index) => `shard-${index}`) },
    sharded: true,
    shard: (index) => ({
      index,
      id: `shard-${index}`,
      store: {
        description: `shard ${index}`,
        read: () => Promise.reject(new Error('one at a time')),
        replace: () => Promise.reject(new Error('no writes')),
      },
    }),
    readShards: (indices) => {
      events.push(`read ${indices.length}`);
      return Promise.resolve(new Map(indices.map((index) => [index, { text: texts[index], version: 'v' }])));
    },
  };
  let stdout = '';
  const io = {
    stdout: {
      write: (text: string) => {
        events.push('write');
        stdout += text;
      },
    },
    stderr: { write: () => undefined },
  };
  return { appIds, registry, events, io, stdout: () => stdout };
}

describe('list, streamed', () => {
  it('writes the rows of each batch of 20 shards before reading the next', async () => {
    const { registry, events, io, stdout, appIds } = fixture();

    await streamList(registry, { json: false, now: NOW }, io);

    expect(events.filter((event) => event.startsWith('read'))).toEqual(['read 20', 'read 20', 'read 5']);
    expect(events.indexOf('write')).toBe(1);
    expect(events.lastIndexOf('read 5')).toBeGreaterThan(events.indexOf('write'));
    const listed = [...stdout().matchAll(/^(merchant-\d+): /gm)].map(([, appId]) => appId);
    expect([...listed].sort()).toEqual(appIds);
  });

  it('--json streams one array, the same bytes as the whole array at once', async () => {
    const { registry, io, stdout, appIds } = fixture();

    await streamList(registry, { json: true, now: NOW }, io);

    const parsed = JSON.parse(stdout()) as { appId: string }[];
    expect(parsed.map((app) => app.appId).sort()).toEqual(appIds);
    expect(stdout()).toBe(`${JSON.stringify(parsed)}\n`);
  });
});
