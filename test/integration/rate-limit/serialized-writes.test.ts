/**
 * moto's conditional UpdateItem is not atomic under concurrency (60 concurrent increments under a capacity of 2 let
 * 4 or 5 through). A test that counts what the limiter admitted against moto sends its DynamoDB calls through fault
 * proxies sharing one ItemWriteQueue (test/support/fault-proxy.ts), which hands moto each item's writes one at a
 * time, as DynamoDB applies them. This proves the queue does what those counts rely on, with the limiter's own
 * counter store (its one conditional UpdateItem per increment).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { IncrementOutcome } from '../../../lambda/payment/rate-limit/counter-store';
import { DynamoDbCounterStore } from '../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { AWS_JSON_SERVICES } from '../../../shared/aws/aws-environment';
import { AwsJsonClient } from '../../../shared/aws/aws-json-client';
import { ItemWriteQueue, startFaultProxy, type FaultProxy } from '../../support/fault-proxy';
import {
  createMotoRateLimitTable,
  EMULATOR_ATTEMPT_BOUNDS,
  EMULATOR_LIMITER_DEADLINE_MS,
  motoAccess,
  motoDynamoDb,
  startMoto,
  type MotoServer,
} from '../../support/moto';

const TABLE = 'rate-limits-serialized';
const CONCURRENT = 60;
const CAPACITY = 2;

let moto: MotoServer;
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  moto = await startMoto();
  await createMotoRateLimitTable(moto, TABLE);
}, 60_000);

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

afterAll(async () => {
  await moto.stop();
});

/** The limiter's counter store through `proxy`, with the emulator's explicit attempt bounds and budget. */
function storeThrough(proxy: FaultProxy): DynamoDbCounterStore {
  return new DynamoDbCounterStore({
    client: new AwsJsonClient({
      service: AWS_JSON_SERVICES.dynamoDb,
      bounds: EMULATOR_ATTEMPT_BOUNDS,
      ...motoAccess(proxy.endpoint),
    }),
    tableName: TABLE,
  });
}

function increment(store: DynamoDbCounterStore, key: string): Promise<IncrementOutcome> {
  return store.increment({
    key,
    capacity: CAPACITY,
    expiresAtSeconds: Math.ceil(Date.now() / 1000) + 600,
    signal: AbortSignal.timeout(EMULATOR_LIMITER_DEADLINE_MS),
  });
}

async function usedOf(key: string): Promise<string | undefined> {
  const client = motoDynamoDb(moto);
  try {
    const { Item } = await client.send(
      new GetItemCommand({ TableName: TABLE, Key: { pk: { S: key } }, ConsistentRead: true }),
    );
    return Item?.['used']?.N;
  } finally {
    client.destroy();
  }
}

const kinds = (outcomes: readonly IncrementOutcome[]): Record<string, number> =>
  outcomes.reduce<Record<string, number>>(
    (counts, { kind }) => ({ ...counts, [kind]: (counts[kind] ?? 0) + 1 }),
    {},
  );

describe('fault proxies sharing an ItemWriteQueue in front of moto', () => {
  it(`let exactly ${CAPACITY} of ${CONCURRENT} concurrent conditional increments of one item through, from four proxies (four environments)`, async () => {
    // Arrange
    const queue = new ItemWriteQueue();
    for (let index = 0; index < 4; index++)
      proxies.push(await startFaultProxy(moto.port, { itemWrites: queue }));
    const stores = proxies.map(storeThrough);
    const key = 'flood#1';

    // Act
    const outcomes = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, index) =>
        increment(stores[index % stores.length] as DynamoDbCounterStore, key),
      ),
    );

    // Assert
    expect(kinds(outcomes)).toEqual({ counted: CAPACITY, full: CONCURRENT - CAPACITY });
    expect(outcomes.flatMap((outcome) => (outcome.kind === 'counted' ? [outcome.used] : [])).sort()).toEqual([
      1, 2,
    ]);
    expect(await usedOf(key)).toBe(String(CAPACITY));
    expect(
      proxies.flatMap((proxy) => proxy.calls).filter((call) => call.operation === 'UpdateItem'),
    ).toHaveLength(CONCURRENT);
  }, 60_000);

  it(`queue each item on its own: ${CONCURRENT} concurrent increments spread over three items admit exactly ${CAPACITY} on each`, async () => {
    // Arrange
    proxies.push(await startFaultProxy(moto.port, { itemWrites: new ItemWriteQueue() }));
    const store = storeThrough(proxies[0] as FaultProxy);
    const keys = ['spread#a', 'spread#b', 'spread#c'];

    // Act
    const outcomes = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, index) => increment(store, keys[index % keys.length] as string)),
    );

    // Assert
    expect(kinds(outcomes)).toEqual({
      counted: CAPACITY * keys.length,
      full: CONCURRENT - CAPACITY * keys.length,
    });
    expect(await Promise.all(keys.map(usedOf))).toEqual(keys.map(() => String(CAPACITY)));
  }, 60_000);
});
